//! Values atoll generates at apply time, as the utility providers do: `random_password`,
//! `random_string`, `random_id`, `random_integer`, `random_uuid`, `random_bytes`,
//! `random_shuffle` (`random`), `random_pet` (`pet`), `tls_private_key`, `tls_self_signed_cert`,
//! `tls_cert_request` and `tls_locally_signed_cert` (`tls`), `time_static`
//! and `time_offset` (`time`), `time_rotating` and `time_sleep` (`rotating`), and Terraform's
//! built-in `terraform_data` (`terraform`). Which types these are, and their arguments, come from their
//! schemas in `tfconfig::schema`. Their arguments come from the configuration; the values live
//! in state as secrets. A change of a replace-forcing argument (`length`, `algorithm`, ..., or
//! any of `keepers`) generates a new value, as Terraform's replacement does; a change of one
//! that is not (`terraform_data.input`) is an update in place that computes again only what
//! follows it ([`follows_update`]). An argument of any type is kept in its stored form
//! (`tfconfig::Value::to_stored`), which keeps its type and its sensitive parts.

use std::collections::BTreeMap;

use super::DesiredError;
use super::values::{Marks, object};
use tfconfig::ResourceInstance;

mod pet;
mod random;
mod rotating;
mod terraform;
mod time;
mod tls;

/// Arguments as a generator takes them, for the generators' unit tests.
#[cfg(test)]
fn test_args(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// A resource whose value is generated at apply time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    pub address: String,
    pub resource_type: String,
    /// The configured arguments (`length`, `special`, ..., `keepers` as JSON, an argument of
    /// any type in its stored form), as text.
    pub arguments: BTreeMap<String, String>,
    /// Arguments known only once other generated values are (`keepers` that read another
    /// resource's `result`): generated after those, at apply.
    pub pending: Vec<String>,
}

/// The resource types whose values atoll generates.
pub fn is_generated(resource_type: &str) -> bool {
    tfconfig::schema::resource(resource_type).is_some_and(|schema| schema.generated)
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
pub fn computed(resource_type: &str) -> &'static [&'static str] {
    match resource_type {
        "tls_private_key" => tls::COMPUTED,
        "tls_self_signed_cert" => tls::SELF_SIGNED_COMPUTED,
        "tls_locally_signed_cert" => tls::LOCALLY_SIGNED_COMPUTED,
        "tls_cert_request" => tls::REQUEST_COMPUTED,
        "time_static" => time::COMPUTED,
        "time_offset" => time::OFFSET_COMPUTED,
        "time_rotating" => rotating::ROTATING_COMPUTED,
        "time_sleep" => rotating::SLEEP_COMPUTED,
        "random_pet" => &["id"],
        "terraform_data" => terraform::COMPUTED,
        other => random::computed(other),
    }
}

/// What an update in place computes again (`terraform_data.output`); the other values stay.
pub fn follows_update(resource_type: &str) -> &'static [&'static str] {
    match resource_type {
        "terraform_data" => terraform::FOLLOWS_UPDATE,
        "time_offset" => time::OFFSET_FOLLOWS_UPDATE,
        "time_rotating" => rotating::ROTATING_FOLLOWS_UPDATE,
        _ => &[],
    }
}

/// Whether changing these arguments replaces the resource (its schema's `RequiresReplace`),
/// rather than updating it in place.
pub fn replaces<'a>(resource_type: &str, changed: impl IntoIterator<Item = &'a str>) -> bool {
    let schema = tfconfig::schema::resource(resource_type);
    changed.into_iter().any(|name| {
        schema
            .as_ref()
            .and_then(|s| s.body.attr(name))
            .is_none_or(|a| a.replace != tfconfig::schema::Replace::Never)
    })
}

/// Whether the attribute is of any type (`terraform_data.input`): its text is a stored value.
pub fn is_dynamic(resource_type: &str, attribute: &str) -> bool {
    tfconfig::schema::resource(resource_type)
        .and_then(|schema| {
            schema
                .body
                .attr(attribute)
                .map(|a| a.ty == tfconfig::types::Constraint::Any)
        })
        .unwrap_or(false)
}

/// Whether the attribute's text is a stored value (`tfconfig::Value::to_stored`): one of any
/// type, a list, set or object (`random_shuffle.input`), or a nested block (a certificate's
/// `subject`); a map of strings (`keepers`) is kept as JSON text.
pub fn is_stored_value(resource_type: &str, attribute: &str) -> bool {
    use tfconfig::types::Constraint;
    tfconfig::schema::resource(resource_type)
        .and_then(|schema| {
            if schema.body.block(attribute).is_some() {
                return Some(true);
            }
            schema.body.attr(attribute).map(|a| {
                matches!(
                    a.ty,
                    Constraint::Any
                        | Constraint::List(_)
                        | Constraint::Set(_)
                        | Constraint::Tuple(_)
                        | Constraint::Object(_)
                )
            })
        })
        .unwrap_or(false)
}

/// An argument's stored text as the plan and `atoll state show` show it: maps (`keepers`) as
/// the maps they are, a value of any type as itself; `None` when it holds a sensitive value or
/// the schema says it is sensitive (a certificate's `private_key_pem`), which is never shown.
pub fn shown_argument(resource_type: &str, name: &str, text: &str) -> Option<serde_json::Value> {
    let schema = tfconfig::schema::resource(resource_type);
    if schema.and_then(|s| s.body.attr(name).map(|a| a.sensitive)) == Some(true) {
        return None;
    }
    if is_stored_value(resource_type, name) {
        let value = tfconfig::Value::from_stored(text).ok()?;
        return (!value.contains_sensitive()).then(|| value.to_json("(sensitive value)", ""));
    }
    Some(match serde_json::from_str::<serde_json::Value>(text) {
        Ok(map @ serde_json::Value::Object(_)) => map,
        _ => serde_json::Value::from(text),
    })
}

/// Whether the attribute is a number in the provider's schema (`random_integer.result`,
/// `time_static.unix`): its stored text is given to the configuration as a number.
pub fn is_number(resource_type: &str, attribute: &str) -> bool {
    has_type(
        resource_type,
        attribute,
        &tfconfig::types::Constraint::Number,
    )
}

/// Whether the attribute is a bool in the provider's schema (a certificate's
/// `ready_for_renewal`): its stored text is given to the configuration as a bool.
pub fn is_bool(resource_type: &str, attribute: &str) -> bool {
    has_type(resource_type, attribute, &tfconfig::types::Constraint::Bool)
}

fn has_type(resource_type: &str, attribute: &str, ty: &tfconfig::types::Constraint) -> bool {
    tfconfig::schema::resource(resource_type)
        .and_then(|schema| schema.body.attr(attribute).map(|a| a.ty == *ty))
        .unwrap_or(false)
}

/// The generated resource an instance declares: every argument its schema has (maps such as
/// `keepers` and `triggers` as JSON, nested blocks in their stored form), checked; `None` for
/// other resource types.
pub(super) fn from_instance(
    resource: &ResourceInstance,
) -> Option<Result<Generated, DesiredError>> {
    let schema = tfconfig::schema::resource(&resource.resource_type).filter(|s| s.generated)?;
    let attrs = object(&resource.attributes)?;
    let mut marks = Marks::default();
    let mut arguments = BTreeMap::new();
    let mut pending = Vec::new();
    for attr in schema.body.attrs.iter().filter(|a| !a.read_only) {
        let value = attrs.get(attr.name);
        // An optional computed argument left unset (`time_static.rfc3339`) is unknown too:
        // the provider computes it, nothing waits for it.
        if value.is_some_and(tfconfig::Value::contains_unknown) {
            if !attr.computed {
                pending.push(attr.name.to_owned());
            }
            continue;
        }
        let text = if is_stored_value(&resource.resource_type, attr.name) {
            value
                .filter(|v| !v.is_null())
                .and_then(tfconfig::Value::to_stored)
        } else if matches!(attr.ty, tfconfig::types::Constraint::Map(_)) {
            let map = marks.text_map(attrs.get(attr.name));
            (!map.is_empty()).then(|| serde_json::to_string(&map).unwrap_or_default())
        } else {
            marks.text(attrs.get(attr.name))
        };
        if let Some(text) = text {
            arguments.insert(attr.name.to_owned(), text);
        }
    }
    for block in &schema.body.blocks {
        match attrs.get(block.name) {
            Some(value) if value.contains_unknown() => pending.push(block.name.to_owned()),
            Some(value) if matches!(value.unmark().0, tfconfig::Value::List(_, items) if !items.is_empty()) =>
            {
                arguments.extend(value.to_stored().map(|text| (block.name.to_owned(), text)));
            }
            _ => {}
        }
    }
    let generated = Generated {
        address: resource.address.clone(),
        resource_type: resource.resource_type.clone(),
        arguments,
        pending,
    };
    let checked = if tls::is_certificate(&generated.resource_type) {
        tls::check_certificate(&generated.resource_type, &generated.arguments).map_err(|refusal| {
            DesiredError::Refused {
                address: resource.address.clone(),
                declared_at: resource.declared_at.clone(),
                summary: refusal.summary,
                detail: refusal.detail,
            }
        })
    } else {
        check(&generated).map_err(|why| DesiredError::Invalid {
            address: resource.address.clone(),
            why,
        })
    };
    Some(checked.map(|()| generated))
}

/// Why the project asks for more key generation, or more waiting, than one apply may spend, if
/// it does: the pull request chooses how many keys (`count`, `for_each`) and how large, and
/// how long its `time_sleep` resources wait.
pub(super) fn over_budget(all: &[Generated]) -> Option<String> {
    keys_over_budget(all).or_else(|| sleep_over_budget(all))
}

/// Every `time_sleep`'s `create_duration` together, beyond [`tfconfig::schema::MAX_SLEEP_SECS`].
fn sleep_over_budget(all: &[Generated]) -> Option<String> {
    let total: std::time::Duration = all
        .iter()
        .filter(|g| g.resource_type == "time_sleep")
        .map(|g| rotating::duration(&g.arguments, "create_duration"))
        .sum();
    let max = tfconfig::schema::MAX_SLEEP_SECS;
    (total.as_secs_f64() > max).then(|| {
        format!(
            "its time_sleep resources would make one apply wait {}s in all, more than the {}s \
             atoll lets an apply wait (a pull request chooses it); wait less, or in fewer \
             resources",
            total.as_secs_f64(),
            max
        )
    })
}

fn keys_over_budget(all: &[Generated]) -> Option<String> {
    let cost: u64 = all
        .iter()
        .filter(|g| g.resource_type == "tls_private_key")
        .map(|g| tls::KeySpec::parse(&g.arguments).map_or(0, tls::KeySpec::cost))
        .sum();
    (cost > tls::BUDGET).then(|| {
        format!(
            "its tls_private_key resources would take about {} RSA-2048 keys' worth of key \
             generation, more than the {} one apply may spend (RSA time grows with the fourth \
             power of rsa_bits); use ED25519 or ECDSA keys, which cost nearly nothing, or \
             smaller or fewer RSA keys",
            cost,
            tls::BUDGET
        )
    })
}

/// Why these arguments cannot be generated from, before anything is planned.
fn check(generated: &Generated) -> Result<(), String> {
    match generated.resource_type.as_str() {
        "tls_private_key" => tls::KeySpec::parse(&generated.arguments).map(|_| ()),
        "time_static" | "time_offset" => time::check(
            &generated.resource_type,
            &generated.arguments,
            &generated.pending,
        ),
        "time_rotating" | "time_sleep" => rotating::check(
            &generated.resource_type,
            &generated.arguments,
            &generated.pending,
        ),
        "random_pet" => pet::check(&generated.arguments),
        "terraform_data" => Ok(()),
        _ => random::check(generated),
    }
}

/// Generates the values (`result` and `id`, or the key's forms).
pub fn generate(resource: &Generated) -> Result<BTreeMap<String, String>, String> {
    match resource.resource_type.as_str() {
        "tls_private_key" => tls::generate(tls::KeySpec::parse(&resource.arguments)?),
        kind if tls::is_certificate(kind) => tls::generate_certificate(kind, &resource.arguments),
        "time_static" => time::generate(&resource.arguments),
        "time_offset" => time::offset(&resource.arguments),
        "time_rotating" => rotating::rotating(&resource.arguments),
        "time_sleep" => rotating::sleep(),
        "random_pet" => pet::generate(&resource.arguments),
        "terraform_data" => terraform::generate(&resource.arguments),
        _ => random::generate(resource),
    }
}

/// Why a stored generated value is due to be made anew although its arguments are unchanged:
/// a `time_rotating` whose rotation time has passed at `now`, a certificate ready for renewal.
pub fn due(
    resource_type: &str,
    values: &BTreeMap<&str, &str>,
    arguments: &BTreeMap<String, String>,
    now: ::time::OffsetDateTime,
) -> Option<String> {
    match resource_type {
        "time_rotating" => rotating::due(values, now),
        "tls_self_signed_cert" | "tls_locally_signed_cert" => tls::due(values, arguments, now),
        _ => None,
    }
}

/// How long the apply waits after making this value (`time_sleep.create_duration`), or before
/// forgetting it (`destroy_duration`), from its arguments.
pub fn wait(
    resource_type: &str,
    arguments: &BTreeMap<String, String>,
    destroying: bool,
) -> std::time::Duration {
    let name = if destroying {
        "destroy_duration"
    } else {
        "create_duration"
    };
    if resource_type == "time_sleep" {
        rotating::duration(arguments, name)
    } else {
        std::time::Duration::ZERO
    }
}
