//! Values atoll generates at apply time, as the utility providers do: `random_password`,
//! `random_string` (`random`) and `tls_private_key` (`tls`). Their arguments come from the
//! configuration; the values live in state as secrets. A change of a replace-forcing argument
//! (`length`, `algorithm`, ..., or any of `keepers`) generates a new value, as Terraform's
//! replacement does.

use std::collections::BTreeMap;

use super::values::{Marks, object};
use tfconfig::ResourceInstance;

mod random;
mod tls;

/// A resource whose value is generated at apply time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    pub address: String,
    pub resource_type: String,
    /// Replace-forcing arguments (`length`, `special`, ..., `keepers` as JSON), as text.
    pub arguments: BTreeMap<String, String>,
}

const RANDOM_ARGUMENTS: &[&str] = &[
    "length",
    "special",
    "upper",
    "lower",
    "numeric",
    "min_lower",
    "min_upper",
    "min_numeric",
    "min_special",
    "override_special",
];

const TLS_ARGUMENTS: &[&str] = &["algorithm", "rsa_bits", "ecdsa_curve"];

/// The resource types whose values atoll generates.
pub fn is_generated(resource_type: &str) -> bool {
    matches!(
        resource_type,
        "random_password" | "random_string" | "tls_private_key"
    )
}

/// Whether the generated attribute is sensitive (the provider's schema says, as
/// `tfconfig::schema` records it).
pub fn is_sensitive(resource_type: &str, attribute: &str) -> bool {
    if attribute == "id" {
        return false;
    }
    tfconfig::schema::resource(resource_type)
        .and_then(|schema| schema.body.attr(attribute).map(|a| a.sensitive))
        .unwrap_or(true)
}

/// The attributes generation computes, in name order (`result`, or the key's forms).
pub fn computed(resource_type: &str) -> Vec<&'static str> {
    match resource_type {
        "tls_private_key" => vec![
            "id",
            "private_key_openssh",
            "private_key_pem",
            "private_key_pem_pkcs8",
            "public_key_fingerprint_md5",
            "public_key_fingerprint_sha256",
            "public_key_openssh",
            "public_key_pem",
        ],
        _ => vec!["result"],
    }
}

pub(super) fn from_instance(resource: &ResourceInstance) -> Option<Result<Generated, String>> {
    let names = match resource.resource_type.as_str() {
        "random_password" | "random_string" => RANDOM_ARGUMENTS,
        "tls_private_key" => TLS_ARGUMENTS,
        _ => return None,
    };
    let attrs = object(&resource.attributes)?;
    let mut marks = Marks::default();
    let mut arguments: BTreeMap<String, String> = names
        .iter()
        .filter_map(|name| Some(((*name).to_owned(), marks.text(attrs.get(*name))?)))
        .collect();
    let keepers = marks.text_map(attrs.get("keepers"));
    if !keepers.is_empty() {
        let json = serde_json::to_string(&keepers).unwrap_or_default();
        arguments.insert("keepers".to_owned(), json);
    }
    let generated = Generated {
        address: resource.address.clone(),
        resource_type: resource.resource_type.clone(),
        arguments,
    };
    Some(check(&generated).map(|()| generated))
}

/// Why these arguments cannot be generated from, before anything is planned.
fn check(generated: &Generated) -> Result<(), String> {
    match generated.resource_type.as_str() {
        "tls_private_key" => tls::KeySpec::parse(&generated.arguments).map(|_| ()),
        _ => Ok(()),
    }
}

/// Generates the values (`result` and `id`, or the key's forms).
pub fn generate(resource: &Generated) -> Result<BTreeMap<String, String>, String> {
    match resource.resource_type.as_str() {
        "tls_private_key" => tls::generate(tls::KeySpec::parse(&resource.arguments)?),
        _ => Ok(random::generate(resource)),
    }
}
