//! `proxmox_virtual_environment_file` (and `proxmox_file`): a file atoll puts in a storage,
//! from the checkout (`source_file`, whose bytes the loader read through the checkout's
//! sandbox) or from the configuration (`source_raw`). Its bytes travel with the desired
//! volume; their SHA-256 is an argument, so a content change replaces the file, as in bpg.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::values::{Marks, Object, block, object};
use super::{DesiredError, lifecycle, must_know};
use crate::proxmox::plan::{DesiredDownload, VolumeSource};
use tfconfig::{ResourceInstance, SourceBytes};

/// The content types atoll puts in a storage: `snippets` over SFTP, the rest through the API.
const CONTENT_TYPES: &[&str] = &["iso", "vztmpl", "import", "snippets"];

pub(super) fn is_file(resource_type: &str) -> bool {
    tfconfig::schema::FILE_TYPES.contains(&resource_type)
}

/// bpg's content type from a file name, when none is set.
/// A name that stays in the directory it is written to (a snippet goes there over SFTP):
/// not empty, at most 255 bytes, no separator or control character, not hidden or `..`.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && !name.starts_with('.')
        && !name
            .chars()
            .any(|c| c == '/' || c == '\\' || c.is_control())
}

fn inferred_content(file_name: &str) -> Option<&'static str> {
    let ends = |exts: &[&str]| exts.iter().any(|e| file_name.ends_with(e));
    if ends(&[".iso", ".img"]) {
        Some("iso")
    } else if ends(&[".tar.gz", ".tar.xz", ".tar.zst"]) {
        Some("vztmpl")
    } else if ends(&[".raw", ".qcow2", ".vmdk"]) {
        Some("import")
    } else {
        None
    }
}

fn text(attrs: &Object, name: &str) -> Option<String> {
    let mut marks = Marks::default();
    let text = marks.text(attrs.get(name));
    if marks.unknown { None } else { text }
}

fn invalid(address: &str, why: impl Into<String>) -> DesiredError {
    DesiredError::Invalid {
        address: address.to_owned(),
        why: why.into(),
    }
}

/// The file's name and bytes, from whichever source block is set.
fn source(
    resource: &ResourceInstance,
    attrs: &Object,
) -> Result<(String, SourceBytes), DesiredError> {
    let address = &resource.address;
    match (block(attrs, "source_file"), block(attrs, "source_raw")) {
        (Some(file), None) => {
            let path = text(file, "path").ok_or_else(|| must_know(address, "source_file.path"))?;
            let name = text(file, "file_name")
                .filter(|n| !n.is_empty())
                .or_else(|| path.rsplit('/').next().map(str::to_owned))
                .filter(|n| !n.is_empty())
                .ok_or_else(|| must_know(address, "source_file.file_name"))?;
            // the loader said why it could not read the file
            let bytes = resource
                .source
                .clone()
                .ok_or_else(|| must_know(address, "source_file.path"))?;
            Ok((name, bytes))
        }
        (None, Some(raw)) => {
            let name =
                text(raw, "file_name").ok_or_else(|| must_know(address, "source_raw.file_name"))?;
            let data = text(raw, "data").ok_or_else(|| must_know(address, "source_raw.data"))?;
            let mut bytes = data.into_bytes();
            let resize = Marks::default().number(raw.get("resize")).unwrap_or(0.0);
            if resize.fract() == 0.0 && resize > bytes.len() as f64 {
                bytes.resize(resize as usize, 0);
            }
            Ok((name, SourceBytes(Arc::new(bytes))))
        }
        (Some(_), Some(_)) => Err(invalid(
            address,
            "source_file and source_raw conflict; keep one of them",
        )),
        (None, None) => Err(invalid(
            address,
            "one of source_file or source_raw must be set",
        )),
    }
}

pub(super) fn file(resource: &ResourceInstance) -> Result<DesiredDownload, DesiredError> {
    let address = &resource.address;
    let attrs = object(&resource.attributes).ok_or_else(|| must_know(address, "the resource"))?;
    let (file_name, bytes) = source(resource, attrs)?;
    if !plain_name(&file_name) {
        return Err(invalid(
            address,
            format!(
                "the file name {file_name:?} must be a plain name of at most 255 bytes: no '/', '\\' or control characters, not starting with '.'"
            ),
        ));
    }
    let content_type = match text(attrs, "content_type").filter(|c| !c.is_empty()) {
        Some(content) => content,
        None => inferred_content(&file_name)
            .map(str::to_owned)
            .ok_or_else(|| invalid(address, format!("content_type cannot be inferred from the file name {file_name:?}; set it to one of iso, vztmpl, import or snippets")))?,
    };
    if !CONTENT_TYPES.contains(&content_type.as_str()) {
        return Err(DesiredError::Unsupported {
            address: address.clone(),
            what: format!("content_type {content_type:?}"),
            why: "atoll puts iso, vztmpl, import and snippets files in a storage".to_owned(),
        });
    }
    let mut arguments = BTreeMap::from([("content_sha256".to_owned(), bytes.sha256())]);
    if let Some(mode) = text(attrs, "file_mode").filter(|m| !m.is_empty()) {
        if !u32::from_str_radix(&mode, 8).is_ok_and(|m| m <= 0o7777) {
            return Err(invalid(
                address,
                format!("file_mode {mode:?} is not an octal mode such as \"0700\" or \"644\""),
            ));
        }
        arguments.insert("file_mode".to_owned(), mode);
    }
    if Marks::default().flag(attrs.get("overwrite")) == Some(false) {
        arguments.insert("overwrite".to_owned(), "false".to_owned());
    }
    Ok(DesiredDownload {
        address: address.clone(),
        resource_type: resource.resource_type.clone(),
        node: text(attrs, "node_name").ok_or_else(|| must_know(address, "node_name"))?,
        datastore: text(attrs, "datastore_id").ok_or_else(|| must_know(address, "datastore_id"))?,
        content_type,
        file_name,
        arguments,
        lifecycle: lifecycle(&resource.lifecycle, None),
        source: VolumeSource::Bytes(bytes),
    })
}

#[cfg(test)]
mod tests {
    use super::{inferred_content, plain_name};

    #[test]
    fn a_file_name_must_stay_in_its_directory() {
        assert!(plain_name("cloud-init.yaml"));
        for bad in ["", "..", ".hidden", "a/b", "a\\b", "a\nb", "x\0y"] {
            assert!(!plain_name(bad), "{bad:?}");
        }
        assert!(!plain_name(&"n".repeat(256)));
    }

    #[test]
    fn content_type_is_inferred_from_the_extension_as_bpg_does() {
        assert_eq!(inferred_content("a.iso"), Some("iso"));
        assert_eq!(inferred_content("t.tar.zst"), Some("vztmpl"));
        assert_eq!(inferred_content("d.qcow2"), Some("import"));
        assert_eq!(inferred_content("hook.sh"), None);
    }
}
