//! `atoll state export-terraform`: atoll's state as a version-4 Terraform state file that
//! Terraform with bpg can take over (`terraform state push`). Each guest and object is written
//! with what identifies it (bpg's `id`, `node_name`, `vm_id`): Terraform's first refresh reads
//! the rest from the cluster, as after `terraform import`. Generated values are written whole,
//! their sensitive attributes listed in `sensitive_attributes`, as the utility providers do.
//!
//! The format follows Terraform's `internal/states/statefile/version4.go`: `version`,
//! `terraform_version`, `serial`, `lineage`, `outputs` (`value`, `type`, `sensitive`), and
//! `resources` with `mode`, `type`, `name`, `provider` and `instances` (`index_key`,
//! `schema_version`, `attributes`, `sensitive_attributes`).

use std::collections::BTreeMap;

use secrecy::ExposeSecret;
use serde_json::{Value as J, json};
use sha2::{Digest, Sha256};

use super::BPG;
use crate::proxmox::desired;
use crate::proxmox::plan::StateEntry;
use crate::proxmox::state::{GeneratedEntry, ProjectState, Scope};

/// The Terraform version the file claims: the oldest that reads every field written here.
const TERRAFORM_VERSION: &str = "1.5.0";

/// The state file for `state` of `scope`, with the root `outputs`.
pub fn state_file(
    state: &ProjectState,
    scope: &Scope,
    outputs: &BTreeMap<String, tfconfig::OutputValue>,
) -> J {
    // resources keyed by (module, mode, type, name), in address order
    let mut resources: BTreeMap<(String, String, String), (String, Vec<J>)> = BTreeMap::new();
    let mut add = |address: &str, provider: String, instance: J| {
        let Some((module, ty, name, key)) = split(address) else {
            return;
        };
        let mut instance = instance;
        if let Some(key) = key {
            instance["index_key"] = key;
        }
        resources
            .entry((module, ty, name))
            .or_insert_with(|| (provider, Vec::new()))
            .1
            .push(instance);
    };
    for entry in &state.entries {
        add(entry.address(), provider(BPG), proxmox_instance(entry));
    }
    for generated in &state.generated {
        let source = match generated.resource_type.split('_').next() {
            Some("terraform") => "terraform.io/builtin/terraform".to_owned(),
            Some(provider) => format!("registry.terraform.io/hashicorp/{provider}"),
            None => continue,
        };
        add(
            &generated.address,
            self::provider(&source),
            generated_instance(generated),
        );
    }
    let resources: Vec<J> = resources
        .into_iter()
        .map(|((module, ty, name), (provider, instances))| {
            let mut block = json!({
                "mode": "managed",
                "type": ty,
                "name": name,
                "provider": provider,
                "instances": instances,
            });
            if !module.is_empty() {
                block["module"] = J::String(module);
            }
            block
        })
        .collect();
    json!({
        "version": 4,
        "terraform_version": TERRAFORM_VERSION,
        "serial": 1,
        "lineage": lineage(scope),
        "outputs": outputs_json(outputs),
        "resources": resources,
        "check_results": null,
    })
}

fn provider(source: &str) -> String {
    format!("provider[\"{source}\"]")
}

/// A UUID-shaped lineage derived from the scope: the same project exports the same lineage,
/// so Terraform treats two exports as snapshots of one state.
pub fn lineage(scope: &Scope) -> String {
    let digest = Sha256::digest(
        format!(
            "atoll lineage\0{}\0{}\0{}",
            scope.repo, scope.project_dir, scope.workspace
        )
        .as_bytes(),
    );
    let mut b: [u8; 16] = [0; 16];
    b.copy_from_slice(&digest[..16]);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// bpg's attributes that identify a guest or object (bpg's `id` is the VMID for a guest, the
/// import id for an object, the volume id for a download).
fn proxmox_instance(entry: &StateEntry) -> J {
    let attributes = match entry {
        StateEntry::Guest { node, vm_id, .. } => json!({
            "id": vm_id.to_string(),
            "node_name": node,
            "vm_id": vm_id,
        }),
        StateEntry::Object { id, .. } => {
            json!({ "id": id.import_id().unwrap_or_else(|| id.path()) })
        }
        StateEntry::Download { node, volid, .. } => json!({ "id": volid, "node_name": node }),
    };
    json!({
        "schema_version": 0,
        "attributes": attributes,
        "sensitive_attributes": [],
    })
}

/// A utility resource with its arguments and values, typed by its schema.
fn generated_instance(generated: &GeneratedEntry) -> J {
    let ty = generated.resource_type.as_str();
    let mut attributes = serde_json::Map::new();
    let mut sensitive = Vec::new();
    for (name, text) in &generated.arguments {
        attributes.insert(name.clone(), typed(ty, name, text, true));
    }
    for (name, value) in &generated.values.0 {
        attributes.insert(name.clone(), typed(ty, name, value.expose_secret(), false));
        if desired::is_sensitive(ty, name) {
            sensitive.push(json!([{ "type": "get_attr", "value": name }]));
        }
    }
    json!({
        "schema_version": 0,
        "attributes": attributes,
        "sensitive_attributes": sensitive,
    })
}

fn typed(ty: &str, name: &str, text: &str, argument: bool) -> J {
    if desired::is_number(ty, name)
        && let Ok(n) = serde_json::from_str::<serde_json::Number>(text)
    {
        return J::Number(n);
    }
    if desired::is_bool(ty, name) {
        return J::Bool(text == "true");
    }
    if argument
        && desired::is_stored_value(ty, name)
        && let Ok(value) = tfconfig::Value::from_stored(text)
    {
        return value.deep_unmark().to_json("", "");
    }
    match serde_json::from_str::<J>(text) {
        Ok(map @ J::Object(_)) if argument => map,
        _ => J::String(text.to_owned()),
    }
}

fn outputs_json(outputs: &BTreeMap<String, tfconfig::OutputValue>) -> J {
    let mut out = serde_json::Map::new();
    for (name, output) in outputs {
        if output.value.contains_unknown() || output.value.is_null() {
            continue;
        }
        let sensitive = output.sensitive || output.value.contains_sensitive();
        let value = output.value.clone().deep_unmark().to_json("", "");
        let mut one = json!({ "value": value, "type": cty_type(&value) });
        if sensitive {
            one["sensitive"] = J::Bool(true);
        }
        out.insert(name.clone(), one);
    }
    J::Object(out)
}

/// The value's type as Terraform writes it in state (`"string"`, `["object", {...}]`).
fn cty_type(value: &J) -> J {
    match value {
        J::String(_) => json!("string"),
        J::Number(_) => json!("number"),
        J::Bool(_) => json!("bool"),
        J::Null => json!("dynamic"),
        J::Array(items) => json!(["tuple", items.iter().map(cty_type).collect::<Vec<_>>()]),
        J::Object(map) => {
            let types: serde_json::Map<String, J> =
                map.iter().map(|(k, v)| (k.clone(), cty_type(v))).collect();
            json!(["object", types])
        }
    }
}

/// `module.a["x"].TYPE.NAME[0]` -> (`module.a["x"]`, TYPE, NAME, index key).
fn split(address: &str) -> Option<(String, String, String, Option<J>)> {
    let mut parts = Vec::new();
    let (mut start, mut depth, mut quoted, mut escaped) = (0, 0, false, false);
    for (i, c) in address.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '[' if !quoted => depth += 1,
            ']' if !quoted => depth -= 1,
            '.' if !quoted && depth == 0 => {
                parts.push(&address[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&address[start..]);
    let [module @ .., ty, last] = parts.as_slice() else {
        return None;
    };
    let (name, key) = match last.split_once('[') {
        Some((name, rest)) => {
            let key = rest.strip_suffix(']')?;
            (name, Some(serde_json::from_str::<J>(key).ok()?))
        }
        None => (*last, None),
    };
    Some((module.join("."), (*ty).to_owned(), name.to_owned(), key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_split_into_module_type_name_and_key() {
        assert_eq!(
            split("module.web[\"a.b\"].proxmox_virtual_environment_container.ct[0]"),
            Some((
                "module.web[\"a.b\"]".to_owned(),
                "proxmox_virtual_environment_container".to_owned(),
                "ct".to_owned(),
                Some(json!(0))
            ))
        );
        assert_eq!(
            split("random_password.root[\"x\"]"),
            Some((
                String::new(),
                "random_password".to_owned(),
                "root".to_owned(),
                Some(json!("x"))
            ))
        );
        assert_eq!(split("nonsense"), None);
    }

    #[test]
    fn the_lineage_is_stable_per_scope_and_differs_between_scopes() {
        let scope = |workspace: &str| Scope {
            repo: "local".into(),
            project_dir: "stack".into(),
            workspace: workspace.into(),
        };
        let one = lineage(&scope("default"));
        assert_eq!(one, lineage(&scope("default")));
        assert_ne!(one, lineage(&scope("prod")));
        assert_eq!(one.len(), 36);
        assert_eq!(&one[14..15], "4");
    }
}
