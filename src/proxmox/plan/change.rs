//! The plan: per resource, the actions, the changed attributes with their effect, the guest's
//! disruption, drift, and whether the guard blocked it. Serialises to the JSON plan contract
//! in DESIGN.md ("The plan is the truth") and reads back for apply.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::effect::{Effect, Power};
use super::model::{GuestKind, PlanSource};
use crate::proxmox::types::ObjectId;

/// What happens to a resource. A replace is `["delete", "create"]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    NoOp,
    Create,
    Update,
    Delete,
}

/// The guard rule that refused a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GuardRule {
    Destroy,
    Replace,
    Stop,
    Restart,
    LinkReset,
    Move,
    LiveChange,
    /// A create would take a protected guest's VMID.
    VmIdTaken,
    /// A change would give another guest a protected guest's MAC, or its static IP address on
    /// the same bridge and VLAN.
    NetworkIdentity,
    /// A change would remove or weaken the access atoll itself works with.
    SelfLockout,
}

/// Why a resource change is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blocked {
    pub rule: GuardRule,
    pub reason: String,
}

/// One changed attribute, by the bpg path the user wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttributeChange {
    pub path: String,
    pub before: Json,
    pub after: Json,
    /// `None` for creates, deletes and downloads.
    pub effect: Option<Effect>,
    /// The PVE config key it belongs to (`net0`, `features`); `started` for power state.
    pub pve_key: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub before_sensitive: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub after_sensitive: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub after_unknown: bool,
}

fn is_false(flag: &bool) -> bool {
    !*flag
}

/// A change already queued in PVE's pending section before this plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingDrift {
    pub path: String,
    pub pve_key: String,
    pub current: Json,
    pub pending: Json,
    pub delete: bool,
    /// The key holds a sensitive value: `current` and `pending` are not shown.
    #[serde(default, skip_serializing_if = "is_false")]
    pub sensitive: bool,
}

/// A value that differs between atoll's state and the guest (changed outside atoll).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutsideDrift {
    pub path: String,
    pub pve_key: String,
    pub state: Json,
    pub live: Json,
}

/// Drift found while planning.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<PendingDrift>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed_outside: Vec<OutsideDrift>,
    /// Whole-resource drift: a guest that vanished or moved node outside atoll.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Drift {
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty() && self.changed_outside.is_empty() && self.notes.is_empty()
    }
}

/// The plan for one resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceChange {
    pub address: String,
    #[serde(rename = "type")]
    pub resource_type: String,
    pub node: String,
    pub vm_id: Option<u32>,
    pub actions: Vec<Action>,
    /// The worst effect on the existing guest; `None` for creates, deletes and downloads.
    pub disruption: Option<Effect>,
    pub blocked: Option<Blocked>,
    pub attributes: Vec<AttributeChange>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<GuestKind>,
    /// The guest's name (hostname) on the cluster, for name-based protection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest_name: Option<String>,
    /// Power state when planned; effects are relative to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<Power>,
    #[serde(default, skip_serializing_if = "Drift::is_empty")]
    pub drift: Drift,
    /// Addresses this resource uses (apply orders them first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uses: Vec<String>,
    /// The Proxmox VE object it changes, when it is neither a guest nor a volume (a pool, a
    /// firewall rule list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<ObjectId>,
    /// The Linux bridges whose traffic a change to a node's network interface reaches (the
    /// bridge itself, or those a VLAN or a bond carries traffic for), for the guard.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bridges: Vec<String>,
    /// The object a replace deletes when it is another one (a new name): what it takes away.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced: Option<ObjectId>,
    /// What else the change does or why it happens, shown under its header: an apply that will
    /// wait (`time_sleep`), a rotation that is due (`time_rotating`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// An `import` block brings the existing object under management in this apply
    /// (Terraform's `change.importing`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub importing: Option<Importing>,
    /// The address it had in state before a `moved` block renamed it (Terraform's
    /// `previous_address`); apply records the new one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_address: Option<String>,
    /// A `removed` block with `destroy = false`: apply forgets it, the object stays as it is
    /// (Terraform's `forget` action).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forget: bool,
}

/// The existing object an import takes over, by bpg's import id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Importing {
    pub id: String,
}

impl ResourceChange {
    /// A change that does nothing yet, to `address` on `node` (empty for the cluster): the
    /// start every kind of resource builds its change from.
    pub fn no_op(address: &str, resource_type: &str, node: &str) -> Self {
        Self {
            address: address.to_owned(),
            resource_type: resource_type.to_owned(),
            node: node.to_owned(),
            vm_id: None,
            actions: vec![Action::NoOp],
            disruption: None,
            blocked: None,
            attributes: Vec::new(),
            kind: None,
            guest_name: None,
            power: None,
            drift: Drift::default(),
            uses: Vec::new(),
            notes: Vec::new(),
            object: None,
            importing: None,
            bridges: Vec::new(),
            replaced: None,
            previous_address: None,
            forget: false,
        }
    }

    pub fn is_replace(&self) -> bool {
        self.actions == [Action::Delete, Action::Create]
    }

    pub fn is_no_op(&self) -> bool {
        self.actions == [Action::NoOp]
    }

    /// Whether applying the plan does anything for this resource: a change, an import, a
    /// move or a forget.
    pub fn does_something(&self) -> bool {
        !self.is_no_op()
            || self.importing.is_some()
            || self.previous_address.is_some()
            || self.forget
    }

    /// Attribute paths whose effect is `effect`.
    pub fn paths_with(&self, effect: Effect) -> Vec<&str> {
        let paths = self.attributes.iter().filter(|a| a.effect == Some(effect));
        paths.map(|a| a.path.as_str()).collect()
    }
}

/// Counts for the summary line and the JSON `summary`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Existing objects taken over by `import` blocks.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub import: usize,
    /// Creates plus replaces.
    pub add: usize,
    pub change: usize,
    /// Deletes plus replaces.
    pub destroy: usize,
    pub replace: usize,
    /// Guests that will be restarted.
    pub restart: usize,
    pub blocked: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A whole plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub format_version: String,
    pub source: PlanSource,
    /// What the refresh saw of the guests the plan changes (absent when it changes none);
    /// apply compares it with the cluster before it changes anything.
    #[serde(default, skip_serializing_if = "super::Refreshed::is_empty")]
    pub refreshed: super::Refreshed,
    pub resource_changes: Vec<ResourceChange>,
    pub summary: Summary,
    /// The options it was made with (`-target`, `-var`, ...): apply evaluates the
    /// configuration with the same values.
    #[serde(default, skip_serializing_if = "model::PlanOptions::is_empty")]
    pub options: model::PlanOptions,
}

impl Plan {
    pub const FORMAT_VERSION: &'static str = "1";

    pub fn new(source: PlanSource, resource_changes: Vec<ResourceChange>) -> Self {
        let mut plan = Self {
            format_version: Self::FORMAT_VERSION.to_owned(),
            source,
            refreshed: super::Refreshed::default(),
            resource_changes,
            summary: Summary::default(),
            options: model::PlanOptions::default(),
        };
        plan.recount();
        plan
    }

    /// Recomputes `summary` from the resource changes (after the guard marks some blocked).
    pub fn recount(&mut self) {
        let mut summary = Summary::default();
        for change in &self.resource_changes {
            summary.import += usize::from(change.importing.is_some());
            match change.actions.as_slice() {
                [Action::Create] => summary.add += 1,
                [Action::Update] => summary.change += 1,
                [Action::Delete] => summary.destroy += 1,
                [Action::Delete, Action::Create] => {
                    summary.add += 1;
                    summary.destroy += 1;
                    summary.replace += 1;
                }
                _ => {}
            }
            // a stop (`started` -> false) takes the guest down but is not a restart
            let restarts = change
                .attributes
                .iter()
                .any(|a| a.effect == Some(Effect::Restart) && a.path != "started");
            summary.restart += usize::from(restarts && !change.is_replace());
            summary.blocked += usize::from(change.blocked.is_some());
        }
        self.summary = summary;
    }

    /// No resource changes anything, and nothing is imported.
    pub fn is_empty(&self) -> bool {
        !self
            .resource_changes
            .iter()
            .any(ResourceChange::does_something)
    }
}
