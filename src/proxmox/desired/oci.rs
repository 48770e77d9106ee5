//! `proxmox_oci_image` (and its deprecated long name): a container image the node pulls from a
//! registry into a storage's `vztmpl` content (pve-storage `oci-registry-pull`), to create
//! application containers from. Every argument forces a new pull, as in bpg.

use std::collections::BTreeMap;

use super::{DesiredError, TextArgs, lifecycle};
use crate::proxmox::plan::{DesiredDownload, VolumeSource};
use tfconfig::ResourceInstance;

pub(super) fn is_oci_image(resource_type: &str) -> bool {
    matches!(
        resource_type,
        "proxmox_oci_image" | "proxmox_virtual_environment_oci_image"
    )
}

/// The image as a volume: `<datastore>:vztmpl/<name>.tar`. bpg names it after the reference's
/// last part (`docker.io/library/nginx:alpine` -> `nginx_alpine.tar`) and sends the name
/// without `.tar`; PVE keeps only letters, digits, `_`, `.` and `-` of it
/// (`normalize_content_filename`) and adds `.tar`, so the volume is named that way here.
pub(super) fn oci_image(resource: &ResourceInstance) -> Result<DesiredDownload, DesiredError> {
    let address = &resource.address;
    let args = TextArgs::of(resource)?;
    let get = |name: &str| args.get(name);
    let known = |value: Option<String>, name: &str| args.known(value, name);
    let reference = known(get("reference"), "reference")?;
    let given = get("file_name").filter(|f| !f.is_empty());
    let name = given
        .as_deref()
        .map_or_else(|| name_from_reference(&reference), |f| f.to_owned());
    let file_name = format!("{}.tar", normalized(name.trim_end_matches(".tar")));
    Ok(DesiredDownload {
        address: address.clone(),
        resource_type: resource.resource_type.clone(),
        node: known(get("node_name"), "node_name")?,
        datastore: known(get("datastore_id"), "datastore_id")?,
        content_type: "vztmpl".to_owned(),
        file_name,
        arguments: BTreeMap::from([("reference".to_owned(), reference)]),
        lifecycle: lifecycle(&resource.lifecycle, None),
        source: VolumeSource::Registry,
    })
}

/// bpg's default name: the reference's last path part, `:` as `_`.
fn name_from_reference(reference: &str) -> String {
    let last = reference.rsplit('/').next().unwrap_or(reference);
    last.replace(':', "_")
}

/// pve-storage `normalize_content_filename`: the last path part, every character other than
/// `[a-zA-Z0-9_.-]` as `_`.
fn normalized(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or(name);
    last.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_volume_is_named_as_bpg_asks_and_pve_normalises() {
        let default = name_from_reference("docker.io/library/nginx:alpine");
        assert_eq!(default, "nginx_alpine");
        assert_eq!(normalized("my image+v2"), "my_image_v2");
        assert_eq!(normalized("../etc/passwd"), "passwd");
    }
}
