//! Objects that are neither guests nor volumes (pools, firewall options, rule lists, aliases,
//! IP sets, security groups): their parameters and entries against the cluster's, and what a
//! change does to traffic. Everything applies at once (`live`); a firewall change that can drop
//! traffic that flows today (a stricter policy, a filter turned on, a rule removed or changed,
//! an address taken out of a set) is `link-reset`, which the guard refuses for protected
//! guests. Only a plainly additive change stays `live`: a rule inserted that accepts, a log
//! level, a comment, a policy that opens.

use serde_json::Value as Json;

use super::attrs::change;
use super::change::{Action, AttributeChange, ResourceChange};
use super::effect::Effect;
use super::model::{DesiredObject, Inventory, LiveObject, ObjectEntry, StateEntry};
use crate::proxmox::types::{Entries, ObjectId, ObjectKind, Scope};

fn base(address: &str, resource_type: &str, id: &ObjectId) -> ResourceChange {
    let node = id.scope.node().map(ToString::to_string).unwrap_or_default();
    let mut change = ResourceChange::no_op(address, resource_type, &node);
    change.object = Some(id.clone());
    change
}

/// Whether the object always exists (options, rule lists): it is changed, never created.
fn always_there(id: &ObjectId) -> bool {
    id.collection().is_none() && !id.is_access()
}

/// The plan for one desired object.
pub(crate) fn change_for(
    object: &DesiredObject,
    prior: Option<&StateEntry>,
    inventory: &Inventory,
) -> ResourceChange {
    let mut resource = base(&object.address, &object.resource_type, &object.id);
    resource.uses.clone_from(&object.uses);
    let live = inventory.objects.get(&object.id.key());
    let had = match prior {
        Some(StateEntry::Object { id, .. }) => Some(id),
        _ => None,
    };
    if let Some(had) = had.filter(|had| **had != object.id) {
        // a new name or scope is another object: the old one goes, the new one comes
        resource.actions = vec![Action::Delete, Action::Create];
        resource.replaced = Some(had.clone());
        resource.attributes = created(object);
        resource.notes.push(format!(
            "{} becomes {}: replaced",
            had.describe(),
            object.id.describe()
        ));
        if had.kind.network_type().is_some() {
            // the old interface goes, with its traffic
            for c in &mut resource.attributes {
                c.effect = Some(super::effect::Effect::LinkReset);
            }
            let old = match prior {
                Some(StateEntry::Object { fields, .. }) => vec![fields],
                _ => Vec::new(),
            };
            super::network::annotate(&mut resource, had, &old, inventory);
        }
        return resource;
    }
    match live {
        None if always_there(&object.id) => {
            // the guest it belongs to is created by this apply
            resource.actions = vec![Action::Create];
            resource.attributes = created(object);
        }
        None => {
            if had.is_some() {
                resource.drift.notes.push(format!(
                    "{} was deleted outside atoll; it is created again",
                    object.id.describe()
                ));
            }
            resource.actions = vec![Action::Create];
            resource.attributes = created(object);
        }
        Some(_) if had.is_none() && !always_there(&object.id) => {
            resource.drift.notes.push(format!(
                "{} already exists and is not managed by atoll; Proxmox VE will refuse to \
                 create it again: take it over with {}, remove it, or give this one another name",
                object.id.describe(),
                import_hint(&object.address, &object.id)
            ));
            resource.actions = vec![Action::Create];
            resource.attributes = created(object);
        }
        Some(live) if super::cluster::replaced_because(object, live).is_some() => {
            let why = super::cluster::replaced_because(object, live).unwrap_or_default();
            resource.actions = vec![Action::Delete, Action::Create];
            resource.attributes = created(object);
            resource.notes.push(why);
        }
        Some(live) => {
            resource.attributes = updated(object, live);
            if let Some(StateEntry::Object { fields, .. }) = prior {
                resource.drift.notes.extend(outside(object, fields, live));
            }
            // options or rules atoll starts managing are "created" in its state, changed or not
            if had.is_none() {
                resource.actions = vec![Action::Create];
            } else if !resource.attributes.is_empty() {
                resource.actions = vec![Action::Update];
            }
            resource.disruption = resource.attributes.iter().filter_map(|a| a.effect).max();
        }
    }
    if object.id.kind.network_type().is_some() {
        let live = live.map(|l| &l.fields);
        let fields: Vec<_> = std::iter::once(&object.fields).chain(live).collect();
        super::network::annotate(&mut resource, &object.id, &fields, inventory);
    }
    super::cluster::ha_notes(&mut resource);
    resource
}

/// The `import` block that takes `id` over as `address`.
fn import_hint(address: &str, id: &ObjectId) -> String {
    let id = id.import_id().unwrap_or_else(|| "any".to_owned());
    format!("import {{ to = {address}, id = \"{id}\" }}")
}

/// An object no longer declared.
pub(crate) fn delete(entry: &StateEntry, inventory: &Inventory) -> Option<ResourceChange> {
    let StateEntry::Object {
        address,
        resource_type,
        id,
        fields,
        entries,
    } = entry
    else {
        return None;
    };
    let mut resource = base(address, resource_type, id);
    resource.actions = vec![Action::Delete];
    resource.attributes = fields
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| change(k.clone(), k, shown(k, Some(v)), Json::Null))
        .collect();
    if id.kind.network_type().is_some() {
        // an interface taken away takes its traffic with it
        for c in &mut resource.attributes {
            c.effect = Some(Effect::LinkReset);
        }
        super::network::annotate(&mut resource, id, &[fields], inventory);
    }
    for (i, entry) in entries.iter().flatten().enumerate() {
        // rules taken away can drop what they let through
        let gone = entry_fields(&format!("entry[{i}]"), Some(entry), None);
        resource.attributes.extend(gone.into_iter().map(|mut c| {
            c.effect = Some(Effect::LinkReset);
            c
        }));
    }
    if id.is_setting() {
        resource.notes.push(format!(
            "{} are never deleted: atoll stops managing them and leaves them as they are",
            id.kind.noun()
        ));
    }
    resource.disruption = resource.attributes.iter().filter_map(|a| a.effect).max();
    Some(resource)
}

fn label<'a>(object: &'a DesiredObject, key: &'a str) -> &'a str {
    object.labels.get(key).map_or(key, String::as_str)
}

/// PVE's boolean parameters (`1`/`0`), shown as bpg's `true`/`false`.
const FLAGS: &[&str] = &[
    "enable",
    "dhcp",
    "ipfilter",
    "macfilter",
    "ndp",
    "radv",
    "ebtables",
    "nftables",
    "nosmurfs",
    "tcpflags",
    "nomatch",
    "autostart",
    "bridge_vlan_aware",
    "disable",
    "strict",
    "restricted",
    "nofailback",
    "failback",
    "verify-certificate",
    "otel-verify-ssl",
    "snat",
    "vlanaware",
    "isolate-ports",
    "advertise-subnets",
    "disable-arp-nd-suppression",
    "exitnodes-local-routing",
    "propagate",
    "privsep",
];

/// A PVE value as the plan shows it: a flag as a boolean.
fn shown(key: &str, value: Option<&String>) -> Json {
    match value {
        None => Json::Null,
        Some(v) if FLAGS.contains(&key) => Json::Bool(v == "1"),
        // a network interface's parameter it does not set (`delete`d at apply)
        Some(v) if v.is_empty() => Json::Null,
        Some(v) if matches!(key, "bridge_ports" | "slaves") => {
            Json::from(v.split_whitespace().collect::<Vec<_>>())
        }
        Some(v) => Json::from(v.clone()),
    }
}

/// An entry's parameter by bpg's name: a rule's `enable` is `enabled`, an IP set entry's
/// `cidr` its `name`.
fn entry_label(key: &str) -> &str {
    match key {
        "enable" => "enabled",
        "cidr" => "name",
        other => other,
    }
}

/// The changes between two versions of entry `name[i]`, field by field.
fn entry_fields(
    path: &str,
    before: Option<&ObjectEntry>,
    after: Option<&ObjectEntry>,
) -> Vec<AttributeChange> {
    let keys: std::collections::BTreeSet<&String> = before
        .into_iter()
        .chain(after)
        .flat_map(|e| e.keys())
        .collect();
    keys.into_iter()
        .filter(|k| before.and_then(|e| e.get(*k)) != after.and_then(|e| e.get(*k)))
        .map(|k| {
            change(
                format!("{path}.{}", entry_label(k)),
                "entries",
                shown(k, before.and_then(|e| e.get(k))),
                shown(k, after.and_then(|e| e.get(k))),
            )
        })
        .collect()
}

fn created(object: &DesiredObject) -> Vec<AttributeChange> {
    let mut out: Vec<AttributeChange> = object
        .fields
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| {
            change(
                label(object, k).to_owned(),
                k,
                Json::Null,
                shown(k, Some(v)),
            )
        })
        .collect();
    let name = label(object, "entries");
    for (i, entry) in object.entries.iter().flatten().enumerate() {
        out.extend(entry_fields(&format!("{name}[{i}]"), None, Some(entry)));
    }
    out
}

fn updated(object: &DesiredObject, live: &LiveObject) -> Vec<AttributeChange> {
    let mut out = Vec::new();
    for (key, want) in &object.fields {
        let have = live
            .fields
            .get(key)
            .map(String::as_str)
            .or_else(|| pve_default(&object.id, key))
            .map(str::to_owned);
        let have = have.as_ref();
        if have == Some(want) || (have.is_none() && want.is_empty()) {
            continue;
        }
        let mut c = change(
            label(object, key).to_owned(),
            key,
            shown(key, have),
            shown(key, Some(want)),
        );
        c.effect = Some(field_effect(
            object.id.kind,
            key,
            have.map(String::as_str),
            want,
        ));
        out.push(c);
    }
    if let (Some(want), Some(how)) = (&object.entries, object.id.entries()) {
        let have = live.entries.clone().unwrap_or_default();
        out.extend(entry_changes(label(object, "entries"), how, want, &have));
    }
    out.extend(super::cluster::unset(object, live));
    out
}

/// What PVE takes for a firewall option that its file does not set (pve-firewall's
/// `$cluster_option_properties`, `$host_option_properties`, `$vm_option_properties`).
fn pve_default(id: &ObjectId, key: &str) -> Option<&'static str> {
    if id.kind.network_type().is_some() {
        return super::network::pve_default(key);
    }
    if id.kind != ObjectKind::FirewallOptions {
        return super::cluster::pve_default(id, key);
    }
    let scoped = match (&id.scope, key) {
        (Scope::Cluster, "enable") => "0",
        (Scope::Cluster, "ebtables") => "1",
        (Scope::Cluster, "policy_forward") => "ACCEPT",
        (Scope::Node { .. }, "enable" | "ndp") => "1",
        (Scope::Node { .. }, "nf_conntrack_max") => "262144",
        (Scope::Node { .. }, "nf_conntrack_tcp_timeout_established") => "432000",
        (Scope::Node { .. }, "nftables" | "tcpflags") => "0",
        (Scope::Guest { .. }, "enable" | "dhcp" | "radv" | "ipfilter") => "0",
        (Scope::Guest { .. }, "macfilter" | "ndp") => "1",
        (_, "policy_in") => "DROP",
        (_, "policy_out") => "ACCEPT",
        (_, k) if k.starts_with("log_level_") || k.ends_with("_log_level") => "nolog",
        _ => return None,
    };
    Some(scoped)
}

/// The entries that differ, by position (rules) or by key (IP set entries), each with the
/// effect of the whole list's change.
fn entry_changes(
    name: &str,
    how: Entries,
    want: &[ObjectEntry],
    have: &[ObjectEntry],
) -> Vec<AttributeChange> {
    let pairs: Vec<(Option<&ObjectEntry>, Option<&ObjectEntry>)> = match how {
        Entries::Ordered => (0..want.len().max(have.len()))
            .map(|i| (have.get(i), want.get(i)))
            .collect(),
        Entries::Keyed(key) => {
            let find = |list: &'_ [ObjectEntry], e: &ObjectEntry| {
                list.iter().position(|x| x.get(key) == e.get(key))
            };
            let mut pairs: Vec<_> = want
                .iter()
                .map(|w| (find(have, w).map(|i| &have[i]), Some(w)))
                .collect();
            pairs.extend(
                have.iter()
                    .filter(|h| find(want, h).is_none())
                    .map(|h| (Some(h), None)),
            );
            pairs
        }
    };
    let effect = if additive(how, want, have) {
        Effect::Live
    } else {
        Effect::LinkReset
    };
    pairs
        .into_iter()
        .enumerate()
        .filter(|(_, (before, after))| before != after)
        .flat_map(|(i, (before, after))| entry_fields(&format!("{name}[{i}]"), before, after))
        .map(|mut c| {
            c.effect = Some(effect);
            c
        })
        .collect()
}

/// A rule list whose change lets through only more: the old rules are all still there, in
/// the same order, and each new one accepts (or is disabled). Any other change to a rule list
/// or an IP set can drop traffic that flows today (a set's use in a rule is not known here).
fn additive(how: Entries, want: &[ObjectEntry], have: &[ObjectEntry]) -> bool {
    if how != Entries::Ordered {
        return false;
    }
    let same = |a: &ObjectEntry, b: &ObjectEntry| {
        let strip = |e: &ObjectEntry| {
            let mut e = e.clone();
            e.remove("comment");
            e.remove("log");
            e
        };
        strip(a) == strip(b)
    };
    let mut old = have.iter().peekable();
    for entry in want {
        if old.peek().is_some_and(|o| same(o, entry)) {
            old.next();
            continue;
        }
        let opens = entry.get("action").map(String::as_str) == Some("ACCEPT")
            || entry.get("enable").map(String::as_str) == Some("0");
        if !opens {
            return false;
        }
    }
    old.next().is_none()
}

/// What changing one parameter does to traffic: a policy that no longer accepts, a filter
/// turned on, a firewall turned on, a protocol no longer let through, an alias pointing
/// elsewhere can drop what flows today.
fn field_effect(kind: ObjectKind, key: &str, before: Option<&str>, after: &str) -> Effect {
    if kind.network_type().is_some() {
        return super::network::field_effect(key, before, after);
    }
    let on = |v: Option<&str>| v == Some("1");
    let drops = match key {
        k if k.starts_with("policy_") => after != "ACCEPT",
        "enable" => kind == ObjectKind::FirewallOptions && after == "1" && !on(before),
        "ipfilter" | "macfilter" | "ebtables" | "nosmurfs" | "tcpflags" => {
            after == "1" && !on(before)
        }
        "dhcp" | "ndp" | "radv" => after == "0" && before != Some("0"),
        "cidr" => kind == ObjectKind::Alias,
        _ => false,
    };
    if drops {
        Effect::LinkReset
    } else {
        Effect::Live
    }
}

/// What changed on the cluster since atoll last set it.
fn outside(
    object: &DesiredObject,
    stored: &std::collections::BTreeMap<String, String>,
    live: &LiveObject,
) -> Vec<String> {
    stored
        .iter()
        .filter(|(k, v)| live.fields.get(*k).is_some_and(|l| l != *v))
        .map(|(k, v)| {
            format!(
                "{} was changed outside atoll: {} is {:?}, atoll set {v:?}",
                object.id.describe(),
                label(object, k),
                live.fields[k]
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn rule(action: &str, dport: &str) -> ObjectEntry {
        BTreeMap::from([
            ("type".to_owned(), "in".to_owned()),
            ("action".to_owned(), action.to_owned()),
            ("dport".to_owned(), dport.to_owned()),
            ("proto".to_owned(), "tcp".to_owned()),
            ("enable".to_owned(), "1".to_owned()),
        ])
    }

    #[test]
    fn only_accepting_rules_added_between_the_old_ones_are_additive() {
        let have = vec![rule("ACCEPT", "22"), rule("DROP", "25")];
        let inserted = vec![
            rule("ACCEPT", "22"),
            rule("ACCEPT", "443"),
            rule("DROP", "25"),
        ];
        assert!(additive(Entries::Ordered, &inserted, &have));
        let mut commented = have.clone();
        commented[1].insert("comment".to_owned(), "smtp".to_owned());
        assert!(additive(Entries::Ordered, &commented, &have));
        let dropping = vec![
            rule("ACCEPT", "22"),
            rule("DROP", "443"),
            rule("DROP", "25"),
        ];
        assert!(!additive(Entries::Ordered, &dropping, &have));
        let removed = vec![rule("ACCEPT", "22")];
        assert!(!additive(Entries::Ordered, &removed, &have));
        let reordered = vec![rule("DROP", "25"), rule("ACCEPT", "22")];
        assert!(!additive(Entries::Ordered, &reordered, &have));
    }

    #[test]
    fn a_stricter_policy_or_a_filter_turned_on_drops_traffic() {
        let kind = ObjectKind::FirewallOptions;
        assert_eq!(
            field_effect(kind, "policy_in", Some("ACCEPT"), "DROP"),
            Effect::LinkReset
        );
        assert_eq!(
            field_effect(kind, "policy_in", Some("DROP"), "ACCEPT"),
            Effect::Live
        );
        assert_eq!(field_effect(kind, "enable", None, "1"), Effect::LinkReset);
        assert_eq!(field_effect(kind, "enable", Some("1"), "0"), Effect::Live);
        assert_eq!(
            field_effect(kind, "log_level_in", None, "info"),
            Effect::Live
        );
        assert_eq!(field_effect(kind, "ndp", Some("1"), "0"), Effect::LinkReset);
        assert_eq!(
            field_effect(ObjectKind::Pool, "comment", None, "x"),
            Effect::Live
        );
    }
}
