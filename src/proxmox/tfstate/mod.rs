//! Terraform's state file, version 4 (what `terraform state pull` prints): read to take a
//! project over from Terraform ([`import`]), written to hand it back ([`export`]). This module
//! owns the format only: the addresses (module path and index keys), which instances atoll
//! can manage (bpg's guests and objects, the utility resources atoll generates), and the
//! attributes each side keeps. It must not talk to Proxmox itself: what is taken over is found
//! on the cluster by [`crate::proxmox::engine::import_one`], as `import` blocks find it.

pub mod export;
pub mod import;

use serde::Deserialize;

/// The largest state file read: a state with thousands of guests stays far below.
pub const MAX_BYTES: usize = 32 * 1024 * 1024;

/// bpg's provider address, as Terraform writes it in `provider["..."]`.
pub const BPG: &str = "registry.terraform.io/bpg/proxmox";

/// Why a state file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum TfStateError {
    #[error(
        "the state file is larger than {MAX_BYTES} bytes; atoll reads what `terraform state pull` \
         prints for one project"
    )]
    TooLarge,
    #[error(
        "the state file is not Terraform state ({0}); give atoll what `terraform state pull` \
         prints (JSON with \"version\": 4)"
    )]
    NotState(String),
    #[error(
        "the state file is version {0}; atoll reads version 4 (Terraform 0.12 and later): run \
         `terraform state pull` with Terraform 0.12 or newer and import what it prints"
    )]
    Version(u64),
}

/// A version-4 state file, as far as atoll reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct TfState {
    pub version: u64,
    #[serde(default)]
    pub serial: u64,
    #[serde(default)]
    pub lineage: String,
    #[serde(default)]
    pub resources: Vec<TfResource>,
}

/// One resource block of the state (`"resources": [...]`).
#[derive(Debug, Clone, Deserialize)]
pub struct TfResource {
    /// `module.a["x"].module.b`, absent in the root module.
    #[serde(default)]
    pub module: Option<String>,
    pub mode: String,
    #[serde(rename = "type")]
    pub resource_type: String,
    pub name: String,
    pub provider: String,
    #[serde(default)]
    pub instances: Vec<TfInstance>,
}

/// One instance of a resource (`count` and `for_each` make several).
#[derive(Debug, Clone, Deserialize)]
pub struct TfInstance {
    #[serde(default)]
    pub index_key: Option<serde_json::Value>,
    #[serde(default)]
    pub schema_version: u64,
    #[serde(default)]
    pub attributes: serde_json::Map<String, serde_json::Value>,
}

/// Reads a state file: bounded, version 4 only.
pub fn parse(bytes: &[u8]) -> Result<TfState, TfStateError> {
    if bytes.len() > MAX_BYTES {
        return Err(TfStateError::TooLarge);
    }
    let raw: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| TfStateError::NotState(e.to_string()))?;
    let version = raw
        .get("version")
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| TfStateError::NotState("no \"version\" number".to_owned()))?;
    if version != 4 {
        return Err(TfStateError::Version(version));
    }
    serde_json::from_value(raw).map_err(|e| TfStateError::NotState(e.to_string()))
}

impl TfResource {
    /// The address of one of its instances, as Terraform and atoll write it.
    pub fn address(&self, instance: &TfInstance) -> String {
        let mut out = String::new();
        if let Some(module) = self.module.as_deref().filter(|m| !m.is_empty()) {
            out.push_str(module);
            out.push('.');
        }
        if self.mode == "data" {
            out.push_str("data.");
        }
        out.push_str(&self.resource_type);
        out.push('.');
        out.push_str(&self.name);
        match &instance.index_key {
            Some(serde_json::Value::Number(n)) => out.push_str(&format!("[{n}]")),
            Some(key @ serde_json::Value::String(_)) => out.push_str(&format!("[{key}]")),
            _ => {}
        }
        out
    }

    /// The provider's source address out of `provider["registry.terraform.io/bpg/proxmox"]`
    /// (an aliased configuration keeps its alias after the bracket).
    pub fn provider_source(&self) -> &str {
        self.provider
            .strip_prefix("provider[\"")
            .and_then(|rest| rest.split_once("\"]"))
            .map_or(self.provider.as_str(), |(source, _)| source)
    }
}

/// The attribute as the text atoll keeps (strings as they are, numbers and bools as written),
/// `None` when it is null or not a scalar.
pub fn scalar_text(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_versions_and_other_files_are_refused_with_the_next_step() {
        let v3 = parse(br#"{"version": 3, "modules": []}"#).expect_err("v3");
        assert!(v3.to_string().contains("version 3"), "{v3}");
        let plan = parse(br#"{"format_version": "1.2"}"#).expect_err("not state");
        assert!(plan.to_string().contains("terraform state pull"), "{plan}");
        let garbage = parse(b"resource {").expect_err("not json");
        assert!(matches!(garbage, TfStateError::NotState(_)), "{garbage}");
        let big = vec![b' '; MAX_BYTES + 1];
        assert!(matches!(parse(&big), Err(TfStateError::TooLarge)));
    }

    #[test]
    fn addresses_keep_the_module_path_and_index_keys() {
        let state = parse(
            br#"{"version": 4, "resources": [
              {"module": "module.web[\"a\"]", "mode": "managed",
               "type": "proxmox_virtual_environment_container", "name": "ct",
               "provider": "provider[\"registry.terraform.io/bpg/proxmox\"].alt",
               "instances": [{"index_key": 0, "attributes": {}},
                             {"index_key": "k\"q", "attributes": {}}]},
              {"mode": "data", "type": "proxmox_virtual_environment_nodes", "name": "all",
               "provider": "provider[\"registry.terraform.io/bpg/proxmox\"]",
               "instances": [{"attributes": {}}]}]}"#,
        )
        .expect("state");
        let ct = &state.resources[0];
        assert_eq!(
            ct.address(&ct.instances[0]),
            "module.web[\"a\"].proxmox_virtual_environment_container.ct[0]"
        );
        assert_eq!(
            ct.address(&ct.instances[1]),
            "module.web[\"a\"].proxmox_virtual_environment_container.ct[\"k\\\"q\"]"
        );
        assert_eq!(ct.provider_source(), BPG);
        let data = &state.resources[1];
        assert_eq!(
            data.address(&data.instances[0]),
            "data.proxmox_virtual_environment_nodes.all"
        );
    }
}
