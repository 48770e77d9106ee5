//! Attribute-level comparison of one existing guest: desired config against the live config
//! (`current=1`), create-only keys against atoll's state, and drift.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::change::{AttributeChange, Drift, OutsideDrift, PendingDrift};
use super::effect::Effect;
use super::keys::{self, attr_path, canonical, create_only, default_value, prop_key};
use super::model::{DesiredValue, GuestKind, LiveGuest, StateValue};
use super::normalize::{allocation, normalize_desired};
use super::paths::typed;
use super::propstr::{PropString, format_size};

/// Create parameters that are not attributes of their own (`storage` is `disk.datastore_id`).
pub(crate) const IGNORED: &[&str] = &["storage", "digest", "lxc"];

pub(crate) fn change(path: String, key: &str, before: Json, after: Json) -> AttributeChange {
    AttributeChange {
        path,
        pve_key: key.to_owned(),
        before,
        after,
        effect: None,
        before_sensitive: false,
        after_sensitive: false,
        after_unknown: false,
    }
}

/// The attributes of a whole value (every property-string field), e.g. for a create.
pub(crate) fn expand(guest: GuestKind, key: &str, value: &str) -> Vec<(String, Json)> {
    match prop_key(guest, key) {
        Some(default_key) => {
            let mut out: Vec<(String, Json)> = with_allocated_size(PropString::parse(
                &canonical(guest, key, value),
                default_key,
            ))
            .fields
            .iter()
            .filter_map(|(field, raw)| {
                let (path, kind) = keys::attr_path_of(guest, key, Some(field), Some(value))?;
                Some((path, typed(kind, raw)))
            })
            .collect();
            if guest == GuestKind::Qemu
                && let Some((path, interface)) = super::qemu_keys::drive_interface(key, value)
            {
                out.push((path, Json::String(interface)));
            }
            out
        }
        None => {
            let (path, kind) = attr_path(guest, key, None);
            vec![(path, typed(kind, &canonical(guest, key, value)))]
        }
    }
}

/// A volume to allocate (`local-lvm:8`) shows its size (8 GB) as an attribute of its own.
fn with_allocated_size(mut prop: PropString) -> PropString {
    let size = prop
        .get("volume")
        .and_then(allocation)
        .map(|(_, gb)| format_size(gb << 30));
    if let (Some(size), None) = (size, prop.get("size")) {
        prop.fields.insert("size".to_owned(), size);
    }
    prop
}

fn typed_field(guest: GuestKind, key: &str, field: Option<&str>, raw: Option<&str>) -> Json {
    let (_, kind) = attr_path(guest, key, field);
    raw.map_or(Json::Null, |raw| typed(kind, raw))
}

/// Compares one existing guest's desired config with its live config and state.
pub(crate) fn compare(
    config: &BTreeMap<String, DesiredValue>,
    state: &BTreeMap<String, StateValue>,
    live: &LiveGuest,
) -> Vec<AttributeChange> {
    let mut out = Vec::new();
    for (key, value) in config
        .iter()
        .filter(|(k, _)| !IGNORED.contains(&k.as_str()))
    {
        if create_only(live.kind, key) || keys::write_only(live.kind, key) {
            out.extend(compare_create_only(live, key, value, state.get(key)));
            continue;
        }
        let have = live
            .config
            .get(key)
            .map(String::as_str)
            .or_else(|| default_value(live.kind, key));
        match value {
            DesiredValue::Known(want) => out.extend(compare_known(key, want, have, live)),
            DesiredValue::Unknown => {
                let (path, kind) = attr_path(live.kind, key, None);
                let before = have.map_or(Json::Null, |raw| {
                    typed(kind, &canonical(live.kind, key, raw))
                });
                let mut unknown = change(path, key, before, Json::Null);
                unknown.after_unknown = true;
                unknown.effect = Some(worst(live, key));
                out.push(unknown);
            }
            DesiredValue::Sensitive(secret) => {
                let same = matches!(state.get(key), Some(StateValue::Fingerprint(f)) if *f == secret.fingerprint());
                if !same {
                    let path = attr_path(live.kind, key, None).0;
                    let mut hidden = change(path, key, Json::Null, Json::Null);
                    (hidden.before_sensitive, hidden.after_sensitive) = (true, true);
                    hidden.effect = Some(worst(live, key));
                    out.push(hidden);
                }
            }
        }
    }
    out.extend(removed_keys(config, state, live));
    // a value atoll applied as sensitive stays hidden, whatever the guest now holds
    for attribute in &mut out {
        if matches!(
            state.get(&attribute.pve_key),
            Some(StateValue::Fingerprint(_))
        ) {
            attribute.before = Json::Null;
            attribute.before_sensitive = true;
        }
    }
    out
}

fn worst(live: &LiveGuest, key: &str) -> Effect {
    keys::worst(key, live)
}

fn compare_known(
    key: &str,
    want: &str,
    have: Option<&str>,
    live: &LiveGuest,
) -> Vec<AttributeChange> {
    let want = normalize_desired(live.kind, key, want, have);
    let have = have.map(|raw| canonical(live.kind, key, raw));
    if have.as_deref() == Some(want.as_str()) {
        return Vec::new();
    }
    field_changes(key, have.as_deref(), Some(&want), live)
}

fn field_changes(
    key: &str,
    have: Option<&str>,
    want: Option<&str>,
    live: &LiveGuest,
) -> Vec<AttributeChange> {
    keys::field_changes(key, have, want, live)
        .into_iter()
        .map(|field_change| {
            let field = field_change.field.as_deref();
            let before = typed_field(live.kind, key, field, field_change.before.as_deref());
            let after = typed_field(live.kind, key, field, field_change.after.as_deref());
            let path = keys::attr_path_of(live.kind, key, field, want.or(have))
                .map_or_else(|| attr_path(live.kind, key, field).0, |(path, _)| path);
            let mut attribute = change(path, key, before, after);
            attribute.effect = Some(field_change.effect);
            attribute
        })
        .collect()
}

fn compare_create_only(
    live: &LiveGuest,
    key: &str,
    want: &DesiredValue,
    applied: Option<&StateValue>,
) -> Option<AttributeChange> {
    let guest = live.kind;
    let (path, kind) = attr_path(guest, key, None);
    let mut attribute = match (want, applied?) {
        (DesiredValue::Known(want), StateValue::Plain(had)) => {
            if canonical(guest, key, want) == canonical(guest, key, had) {
                return None;
            }
            change(path, key, typed(kind, had), typed(kind, want))
        }
        (DesiredValue::Sensitive(secret), StateValue::Fingerprint(had)) => {
            if secret.fingerprint() == *had {
                return None;
            }
            let mut hidden = change(path, key, Json::Null, Json::Null);
            (hidden.before_sensitive, hidden.after_sensitive) = (true, true);
            hidden
        }
        (DesiredValue::Unknown, had) => {
            let before = match had {
                StateValue::Plain(had) => typed(kind, had),
                StateValue::Fingerprint(_) => Json::Null,
            };
            let mut unknown = change(path, key, before, Json::Null);
            unknown.before_sensitive = matches!(had, StateValue::Fingerprint(_));
            unknown.after_unknown = true;
            unknown
        }
        // sensitivity changed: show both hidden, a new value is being set
        (_, _) => {
            let mut hidden = change(path, key, Json::Null, Json::Null);
            (hidden.before_sensitive, hidden.after_sensitive) = (true, true);
            hidden
        }
    };
    attribute.effect = Some(if keys::write_only(guest, key) {
        keys::write_only_effect(key, live)
    } else {
        Effect::Replace
    });
    Some(attribute)
}

/// Keys atoll applied before and the configuration no longer sets: back to PVE's default, or
/// deleted when the key has none (`net1`, `mp0`).
fn removed_keys(
    config: &BTreeMap<String, DesiredValue>,
    state: &BTreeMap<String, StateValue>,
    live: &LiveGuest,
) -> Vec<AttributeChange> {
    let mut out = Vec::new();
    for key in state.keys().filter(|key| !config.contains_key(*key)) {
        if create_only(live.kind, key)
            || keys::write_only(live.kind, key)
            || IGNORED.contains(&key.as_str())
        {
            continue;
        }
        let Some(have) = live
            .config
            .get(key)
            .map(|raw| canonical(live.kind, key, raw))
        else {
            continue;
        };
        let want = default_value(live.kind, key).map(|default| canonical(live.kind, key, default));
        if want.as_deref() == Some(have.as_str()) {
            continue;
        }
        out.extend(field_changes(key, Some(&have), want.as_deref(), live));
    }
    out
}

/// Pending changes already queued on the guest, and values changed outside atoll.
pub(crate) fn drift(state: &BTreeMap<String, StateValue>, live: &LiveGuest) -> Drift {
    let mut drift = Drift::default();
    for entry in live.pending.iter().filter(|e| e.key != "digest") {
        if entry.pending.is_none() && !entry.delete {
            continue;
        }
        let (path, kind) = attr_path(live.kind, &entry.key, None);
        let sensitive = matches!(state.get(&entry.key), Some(StateValue::Fingerprint(_)));
        let show = |raw: &Option<String>| match raw.as_deref() {
            Some(raw) if !sensitive => typed(kind, raw),
            _ => Json::Null,
        };
        drift.pending.push(PendingDrift {
            path,
            pve_key: entry.key.clone(),
            current: show(&entry.value),
            pending: show(&entry.pending),
            delete: entry.delete,
            sensitive,
        });
    }
    for (key, applied) in state {
        let StateValue::Plain(applied) = applied else {
            continue;
        };
        if create_only(live.kind, key) || IGNORED.contains(&key.as_str()) {
            continue;
        }
        let live_value = live
            .config
            .get(key)
            .map(String::as_str)
            .or_else(|| default_value(live.kind, key));
        let applied_norm = normalize_desired(live.kind, key, applied, live_value);
        let live_norm = live_value.map(|raw| canonical(live.kind, key, raw));
        // a value atoll applied that PVE still holds pending is reported as pending, not here
        let queued = live.pending.iter().any(|entry| {
            entry.key == *key
                && entry
                    .pending
                    .as_deref()
                    .map(|p| normalize_desired(live.kind, key, p, live_value))
                    == Some(applied_norm.clone())
        });
        if !queued && live_norm.as_deref() != Some(applied_norm.as_str()) {
            let (path, kind) = attr_path(live.kind, key, None);
            drift.changed_outside.push(OutsideDrift {
                path,
                pve_key: key.clone(),
                state: typed(kind, &applied_norm),
                live: live_norm.map_or(Json::Null, |raw| typed(kind, &raw)),
            });
        }
    }
    drift
}

/// Whether `path` is covered by one of the `ignore_changes` entries.
pub(crate) fn ignored(path: &str, ignore: &[String]) -> bool {
    ignore.iter().any(|entry| {
        entry == "all"
            || path == entry
            || path
                .strip_prefix(entry.as_str())
                .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
    })
}
