//! What the refresh saw of each guest and object a plan changes, kept in the plan
//! (`refreshed`) so that apply can tell whether the cluster changed since: the guest's node,
//! power state, current config and pending changes; an object's parameters and entries (a
//! pool's comment, a rule list). The plan's `state_fingerprint` covers these together with
//! atoll's own state; [`differences`] names what changed, for the refusal.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::change::Plan;
use super::effect::Power;
use super::model::{GuestKind, Inventory, LiveGuest, LiveObject};

/// Config keys that are not part of what a plan depends on: `lock` is waited for, not changed.
const NOT_OBSERVED: &[&str] = &["lock", "digest"];

/// The longest value a difference quotes; longer ones are cut with `…`.
const QUOTE_CHARS: usize = 60;

/// The refresh a plan was made from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refreshed {
    /// The fingerprint of atoll's state when planned.
    pub state: String,
    /// The guests the plan changes that have a VMID, by VMID.
    pub guests: Vec<ObservedGuest>,
    /// The objects the plan changes (pools, firewall objects, node settings), by API path.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<ObservedObject>,
}

impl Refreshed {
    pub fn is_empty(&self) -> bool {
        self.guests.is_empty() && self.objects.is_empty()
    }
}

/// One object as the refresh saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedObject {
    /// Its API path ([`crate::proxmox::types::ObjectId::path`]).
    pub path: String,
    /// For people: `pool web`, `firewall rules of VM 100`.
    pub what: String,
    /// `None`: it did not exist (a create).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveObject>,
}

/// One guest as the refresh saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedGuest {
    pub vm_id: u32,
    /// `None`: no guest had this VMID (a create with a fixed `vm_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<ObservedLive>,
}

/// What an existing guest looked like.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedLive {
    pub kind: GuestKind,
    pub node: String,
    pub power: Power,
    /// `config?current=1`, values as text.
    pub config: BTreeMap<String, String>,
    /// Queued changes by key: the pending value, or `None` for a queued delete.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub pending: BTreeMap<String, Option<String>>,
}

impl ObservedLive {
    fn of(guest: &LiveGuest) -> Self {
        let config = guest.config.iter();
        let config = config.filter(|(key, _)| !NOT_OBSERVED.contains(&key.as_str()));
        let pending = guest
            .pending
            .iter()
            .filter(|p| p.delete || p.pending.is_some());
        Self {
            kind: guest.kind,
            node: guest.node.clone(),
            power: guest.power,
            config: config.map(|(k, v)| (k.clone(), v.clone())).collect(),
            pending: pending
                .map(|p| {
                    (
                        p.key.clone(),
                        (!p.delete).then(|| p.pending.clone()).flatten(),
                    )
                })
                .collect(),
        }
    }
}

/// The refresh of the guests (with a VMID) and objects `plan` would change (not blocked, not
/// no-op), with atoll's state fingerprint `state`.
pub fn observe(plan: &Plan, state: &str, inventory: &Inventory) -> Refreshed {
    let acted = || {
        plan.resource_changes
            .iter()
            .filter(|c| c.blocked.is_none() && c.does_something())
    };
    let ids = acted().filter(|c| c.kind.is_some()).filter_map(|c| c.vm_id);
    let mut refreshed = observe_ids(ids, state, inventory);
    let objects = acted().filter_map(|c| c.object.as_ref());
    refreshed.objects = observe_objects(objects.map(|id| (id.path(), id.describe())), inventory);
    refreshed
}

/// What was refreshed for `planned`, as `inventory` holds it now.
pub fn observe_again(planned: &Refreshed, state: &str, inventory: &Inventory) -> Refreshed {
    let ids = planned.guests.iter().map(|g| g.vm_id);
    let mut refreshed = observe_ids(ids, state, inventory);
    let objects = planned.objects.iter();
    refreshed.objects =
        observe_objects(objects.map(|o| (o.path.clone(), o.what.clone())), inventory);
    refreshed
}

fn observe_objects(
    objects: impl Iterator<Item = (String, String)>,
    inventory: &Inventory,
) -> Vec<ObservedObject> {
    let mut out: Vec<ObservedObject> = objects
        .map(|(path, what)| ObservedObject {
            live: inventory.objects.get(&path).cloned(),
            path,
            what,
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.dedup_by(|a, b| a.path == b.path);
    out
}

/// The refresh of the guests with these VMIDs, as `inventory` holds them now.
pub fn observe_ids(
    ids: impl IntoIterator<Item = u32>,
    state: &str,
    inventory: &Inventory,
) -> Refreshed {
    let mut ids: Vec<u32> = ids.into_iter().collect();
    ids.sort_unstable();
    ids.dedup();
    let guests = ids
        .into_iter()
        .map(|vm_id| ObservedGuest {
            vm_id,
            live: inventory.guests.get(&vm_id).map(ObservedLive::of),
        })
        .collect();
    Refreshed {
        state: state.to_owned(),
        guests,
        objects: Vec::new(),
    }
}

/// The plan's `state_fingerprint`: atoll's state alone when the plan changes no existing
/// guest, else a hash over it and what the refresh saw.
pub fn state_fingerprint(refreshed: &Refreshed) -> String {
    if refreshed.is_empty() {
        return refreshed.state.clone();
    }
    let mut hasher = Sha256::new();
    hasher.update(refreshed.state.as_bytes());
    hasher.update(b"\n");
    // Plain strings, numbers and sorted maps: serialisation cannot fail and is canonical.
    hasher.update(serde_json::to_string(&refreshed.guests).unwrap_or_default());
    if !refreshed.objects.is_empty() {
        hasher.update(b"\n");
        hasher.update(serde_json::to_string(&refreshed.objects).unwrap_or_default());
    }
    hex::encode(hasher.finalize())
}

/// One guest that is not as the plan saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestDiff {
    pub vm_id: u32,
    pub kind: Option<GuestKind>,
    pub changes: Vec<Difference>,
}

/// One object that is not as the plan saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectDiff {
    pub what: String,
    pub changes: Vec<Difference>,
}

/// One thing that changed on a guest or an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Difference {
    Vanished,
    Appeared,
    Node {
        before: String,
        after: String,
    },
    Power {
        before: Power,
        after: Power,
    },
    Config {
        key: String,
        before: Option<String>,
        after: Option<String>,
    },
    /// An object's entries (rules, IP set addresses) changed: how many there were and are.
    Entries {
        before: usize,
        after: usize,
    },
    /// A pending change queued, dropped or altered (`Some(None)`: a queued delete).
    Pending {
        key: String,
        before: Option<Option<String>>,
        after: Option<Option<String>>,
    },
}

/// Every guest whose refresh now differs from `planned`, in VMID order.
pub fn differences(planned: &Refreshed, now: &Refreshed) -> Vec<GuestDiff> {
    let now: BTreeMap<u32, &Option<ObservedLive>> =
        now.guests.iter().map(|g| (g.vm_id, &g.live)).collect();
    planned
        .guests
        .iter()
        .filter_map(|before| {
            let after = now.get(&before.vm_id).copied().unwrap_or(&None);
            let changes = guest_differences(before.live.as_ref(), after.as_ref());
            let kind = before.live.as_ref().or(after.as_ref()).map(|l| l.kind);
            (!changes.is_empty()).then_some(GuestDiff {
                vm_id: before.vm_id,
                kind,
                changes,
            })
        })
        .collect()
}

/// Every object whose refresh now differs from `planned`, in path order.
pub fn object_differences(planned: &Refreshed, now: &Refreshed) -> Vec<ObjectDiff> {
    let now: BTreeMap<&str, &Option<LiveObject>> = now
        .objects
        .iter()
        .map(|o| (o.path.as_str(), &o.live))
        .collect();
    planned
        .objects
        .iter()
        .filter_map(|before| {
            let after = now.get(before.path.as_str()).copied().unwrap_or(&None);
            let changes = match (&before.live, after) {
                (None, None) => Vec::new(),
                (Some(_), None) => vec![Difference::Vanished],
                (None, Some(_)) => vec![Difference::Appeared],
                (Some(b), Some(a)) => {
                    let mut out: Vec<Difference> = union(&b.fields, &a.fields)
                        .into_iter()
                        .filter(|key| b.fields.get(*key) != a.fields.get(*key))
                        .map(|key| Difference::Config {
                            key: key.clone(),
                            before: b.fields.get(key).cloned(),
                            after: a.fields.get(key).cloned(),
                        })
                        .collect();
                    if b.entries != a.entries {
                        let count = |e: &Option<Vec<_>>| e.as_ref().map_or(0, Vec::len);
                        out.push(Difference::Entries {
                            before: count(&b.entries),
                            after: count(&a.entries),
                        });
                    }
                    out
                }
            };
            (!changes.is_empty()).then(|| ObjectDiff {
                what: before.what.clone(),
                changes,
            })
        })
        .collect()
}

fn guest_differences(
    before: Option<&ObservedLive>,
    after: Option<&ObservedLive>,
) -> Vec<Difference> {
    let (before, after) = match (before, after) {
        (None, None) => return Vec::new(),
        (Some(_), None) => return vec![Difference::Vanished],
        (None, Some(_)) => return vec![Difference::Appeared],
        (Some(b), Some(a)) => (b, a),
    };
    let mut out = Vec::new();
    if before.node != after.node {
        out.push(Difference::Node {
            before: before.node.clone(),
            after: after.node.clone(),
        });
    }
    if before.power != after.power {
        out.push(Difference::Power {
            before: before.power,
            after: after.power,
        });
    }
    for key in union(&before.config, &after.config) {
        let (b, a) = (before.config.get(key), after.config.get(key));
        if b != a {
            out.push(Difference::Config {
                key: key.clone(),
                before: b.cloned(),
                after: a.cloned(),
            });
        }
    }
    for key in union(&before.pending, &after.pending) {
        let (b, a) = (before.pending.get(key), after.pending.get(key));
        if b != a {
            out.push(Difference::Pending {
                key: key.clone(),
                before: b.cloned(),
                after: a.cloned(),
            });
        }
    }
    out
}

fn union<'a, V>(a: &'a BTreeMap<String, V>, b: &'a BTreeMap<String, V>) -> Vec<&'a String> {
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys
}

fn quote(value: Option<&String>) -> String {
    match value {
        None => "(unset)".to_owned(),
        Some(text) if text.chars().count() > QUOTE_CHARS => {
            let cut: String = text.chars().take(QUOTE_CHARS).collect();
            format!("{cut}…")
        }
        Some(text) => text.clone(),
    }
}

fn quote_pending(value: Option<&Option<String>>) -> String {
    match value {
        None => "(none)".to_owned(),
        Some(None) => "(delete)".to_owned(),
        Some(Some(text)) => quote(Some(text)),
    }
}

fn power_word(power: Power) -> &'static str {
    match power {
        Power::Running => "running",
        Power::Stopped => "stopped",
    }
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Vanished => f.write_str("no longer exists"),
            Self::Appeared => f.write_str("now exists (it did not when planned)"),
            Self::Node { before, after } => write!(f, "node {before} -> {after}"),
            Self::Power { before, after } => {
                write!(f, "{} -> {}", power_word(*before), power_word(*after))
            }
            Self::Config { key, before, after } => write!(
                f,
                "{key} {} -> {}",
                quote(before.as_ref()),
                quote(after.as_ref())
            ),
            Self::Entries { before, after } if before == after => f.write_str("entries changed"),
            Self::Entries { before, after } => write!(f, "entries {before} -> {after}"),
            Self::Pending { key, before, after } => write!(
                f,
                "pending {key} {} -> {}",
                quote_pending(before.as_ref()),
                quote_pending(after.as_ref())
            ),
        }
    }
}

impl fmt::Display for ObjectDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let changes: Vec<String> = self.changes.iter().map(ToString::to_string).collect();
        write!(f, "{} ({})", self.what, changes.join(", "))
    }
}

impl fmt::Display for GuestDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let word = match self.kind {
            Some(GuestKind::Qemu) => "VM",
            _ => "CT",
        };
        let changes: Vec<String> = self.changes.iter().map(ToString::to_string).collect();
        write!(f, "{word} {} ({})", self.vm_id, changes.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxmox::plan::PendingEntry;

    fn live(cores: &str) -> LiveGuest {
        LiveGuest {
            vm_id: 260,
            node: "pve".to_owned(),
            kind: GuestKind::Lxc,
            name: Some("web".to_owned()),
            power: Power::Running,
            config: [("cores", cores), ("lock", "backup")]
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            pending: Vec::new(),
        }
    }

    fn refreshed(guest: Option<LiveGuest>) -> Refreshed {
        let mut inventory = Inventory::default();
        if let Some(guest) = guest {
            inventory.guests.insert(guest.vm_id, guest);
        }
        observe_ids([260], "state", &inventory)
    }

    #[test]
    fn a_changed_value_is_named_with_both_values() {
        let (planned, now) = (refreshed(Some(live("2"))), refreshed(Some(live("6"))));
        assert_ne!(state_fingerprint(&planned), state_fingerprint(&now));
        let diffs = differences(&planned, &now);
        assert_eq!(diffs.len(), 1);
        assert_eq!(diffs[0].to_string(), "CT 260 (cores 2 -> 6)");
    }

    #[test]
    fn lock_is_not_a_change_but_power_and_pending_are() {
        let mut unlocked = live("2");
        unlocked.config.remove("lock");
        assert_eq!(
            refreshed(Some(live("2"))),
            refreshed(Some(unlocked.clone()))
        );
        unlocked.power = Power::Stopped;
        unlocked.pending.push(PendingEntry {
            key: "memory".to_owned(),
            value: Some("512".to_owned()),
            pending: Some("1024".to_owned()),
            delete: false,
        });
        let diffs = differences(&refreshed(Some(live("2"))), &refreshed(Some(unlocked)));
        assert_eq!(
            diffs[0].to_string(),
            "CT 260 (running -> stopped, pending memory (none) -> 1024)"
        );
    }

    #[test]
    fn a_guest_that_vanished_or_appeared_is_named() {
        let gone = differences(&refreshed(Some(live("2"))), &refreshed(None));
        assert_eq!(gone[0].to_string(), "CT 260 (no longer exists)");
        let new = differences(&refreshed(None), &refreshed(Some(live("2"))));
        assert!(new[0].to_string().contains("now exists"), "{}", new[0]);
    }

    #[test]
    fn a_plan_without_observed_guests_keeps_the_state_fingerprint() {
        let none = observe_ids([], "state", &Inventory::default());
        assert_eq!(state_fingerprint(&none), "state");
    }
}
