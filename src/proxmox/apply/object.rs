//! Pools and firewall objects: create or change the object itself, then bring its entries
//! (rules in order, IP set entries by address) to what the configuration lists, against what
//! the cluster holds at that moment; delete entries before the object. PVE's calls for these
//! are synchronous. State is written once the object is as planned.

use std::collections::BTreeMap;

use super::{Outcome, Run};
use crate::proxmox::client::{ObjectTarget, ObjectWrite, PveError};
use crate::proxmox::plan::{
    Action, DesiredObject, ObjectEntry, ResourceChange, StateEntry, StepOp,
};
use crate::proxmox::types::{Entries, ObjectId, ObjectKind};

type Params = Vec<(String, String)>;

fn params<'a>(pairs: impl IntoIterator<Item = (&'a String, &'a String)>) -> Params {
    pairs
        .into_iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The keys `live` has that `want` does not: PVE's `delete` list for an update.
fn removed(want: &ObjectEntry, live: &ObjectEntry) -> Option<(String, String)> {
    let keys: Vec<&str> = live
        .keys()
        .filter(|k| !want.contains_key(*k) && !["type", "action", "cidr"].contains(&k.as_str()))
        .map(String::as_str)
        .collect();
    (!keys.is_empty()).then(|| ("delete".to_owned(), keys.join(",")))
}

impl Run<'_> {
    /// Runs one object's steps.
    pub(super) async fn object(
        &self,
        change: &ResourceChange,
        ops: &[StepOp],
        desired: Option<&DesiredObject>,
    ) -> (String, Outcome) {
        if change
            .object
            .as_ref()
            .is_some_and(|o| o.kind == ObjectKind::SdnApplier)
        {
            return self.applier(change, ops, desired).await;
        }
        let address = change.address.clone();
        let outcome = match self.object_steps(change, ops, desired).await {
            Ok(detail) => self.done(&address, detail, Vec::new()),
            Err((error, changed)) => self.failed(&address, error, changed),
        };
        (address, outcome)
    }

    pub(super) async fn object_steps(
        &self,
        change: &ResourceChange,
        ops: &[StepOp],
        desired: Option<&DesiredObject>,
    ) -> Result<String, (String, bool)> {
        let mut changed = false;
        if ops.contains(&StepOp::Delete) {
            let id = self.applied_id(change).await.map_err(|e| (e, false))?;
            self.delete_object(&id).await.map_err(|e| (e, false))?;
            changed = true;
            if !ops.contains(&StepOp::Create) {
                self.exec
                    .state
                    .forget(&change.address)
                    .await
                    .map_err(|e| (e.to_string(), true))?;
                return Ok(if id.is_setting() {
                    format!("no longer managed; {} left as they are", id.describe())
                } else {
                    format!("deleted {}", id.describe())
                });
            }
        }
        let Some(object) = desired else {
            let error = "the configuration no longer declares it; make a new plan".to_owned();
            return Err((error, changed));
        };
        let creating = change.actions.contains(&Action::Create) && ops.contains(&StepOp::Create);
        let made = if object.id.is_access() {
            self.put_access(object, creating).await
        } else {
            self.put_object(object, creating).await.map(|()| None)
        }
        .map_err(|e| (e, changed))?;
        self.put_entries(object).await.map_err(|e| (e, true))?;
        let entry = StateEntry::Object {
            address: object.address.clone(),
            resource_type: object.resource_type.clone(),
            id: object.id.clone(),
            fields: object.fields.clone(),
            entries: object.entries.clone(),
        };
        let recorded = if object.id.is_access() {
            self.exec.state.record_object(&entry, made).await
        } else {
            self.exec.state.record(&entry).await
        };
        recorded.map_err(|e| (format!("{} is set, but {e}", object.id.describe()), true))?;
        let done = match (creating, object.id.collection()) {
            (true, Some(_)) => "created",
            _ if object.id.is_setting() => "set",
            _ => "changed",
        };
        Ok(format!("{done} {}", object.id.describe()))
    }

    /// The object as atoll last applied it (a replace deletes the old one, not the new one).
    async fn applied_id(&self, change: &ResourceChange) -> Result<ObjectId, String> {
        let state = self.exec.state.load().await.map_err(|e| e.to_string())?;
        let had = state.entries.iter().find_map(|e| match e {
            StateEntry::Object { address, id, .. } if *address == change.address => Some(id),
            _ => None,
        });
        had.or(change.object.as_ref())
            .cloned()
            .ok_or_else(|| format!("{} is not in atoll's state", change.address))
    }

    /// Creates the object (`POST` to its collection) or sets its fields.
    async fn put_object(&self, object: &DesiredObject, create: bool) -> Result<(), String> {
        if object.id.kind.is_cluster_family() {
            return self.put_cluster_object(object, create).await;
        }
        let api = self.exec.api;
        let id = &object.id;
        let what = id.describe();
        // an empty value is a parameter the object must not have: left out of a create,
        // `delete`d by an update (a network interface's unset address, MTU, comment)
        let (set, cleared): (Vec<_>, Vec<_>) =
            object.fields.iter().partition(|(_, v)| !v.is_empty());
        let mut fields = id.fixed_params();
        fields.extend(params(set));
        if !create && !cleared.is_empty() {
            let keys: Vec<&str> = cleared.iter().map(|(k, _)| k.as_str()).collect();
            fields.push(("delete".to_owned(), keys.join(",")));
        }
        // what only a create sets (an SDN object's `type`) is left out of an update
        let updates: Params = fields
            .iter()
            .filter(|(k, _)| !id.create_only().contains(&k.as_str()))
            .cloned()
            .collect();
        let (write, target, params) = match (id.collection(), create) {
            (Some((_, name_key)), true) => {
                let mut p = vec![(name_key.to_owned(), id.create_name())];
                p.extend(fields);
                (ObjectWrite::Post, ObjectTarget::Collection, p)
            }
            // an IP set's or a security group's comment changes through its collection:
            // `rename` to its own name (PVE's documented way)
            (Some((_, name_key)), false) if id.entries().is_some() => {
                let name = id.name.clone().unwrap_or_default();
                let mut p = vec![
                    (name_key.to_owned(), name.clone()),
                    ("rename".to_owned(), name),
                ];
                p.extend(fields);
                (ObjectWrite::Post, ObjectTarget::Collection, p)
            }
            _ if updates.is_empty() => return Ok(()),
            _ => (ObjectWrite::Put, ObjectTarget::Object, updates),
        };
        api.object_write(id, &target, write, &params)
            .await
            .map_err(|e| {
                format!(
                    "{} {what}: {e}",
                    if create { "creating" } else { "setting" }
                )
            })
    }

    /// Brings the object's entries to the configuration's list.
    async fn put_entries(&self, object: &DesiredObject) -> Result<(), String> {
        let (Some(want), Some(how)) = (&object.entries, object.id.entries()) else {
            return Ok(());
        };
        let id = &object.id;
        let have = self.live_entries(id).await?;
        match how {
            Entries::Ordered => self.order_entries(id, want, &have).await,
            Entries::Keyed(key) => self.key_entries(id, key, want, &have).await,
        }
        .map_err(|e| format!("setting the entries of {}: {e}", id.describe()))
    }

    async fn live_entries(&self, id: &ObjectId) -> Result<Vec<ObjectEntry>, String> {
        let listed = self
            .exec
            .api
            .object_read(id, &ObjectTarget::Object)
            .await
            .map_err(|e| format!("reading {}: {e}", id.describe()))?;
        Ok(crate::proxmox::inventory::object_entries(&listed))
    }

    /// Rules: the extra ones deleted from the end, those that differ changed in place, the
    /// missing ones added at the end (PVE adds a rule at the top; it is moved down).
    async fn order_entries(
        &self,
        id: &ObjectId,
        want: &[ObjectEntry],
        have: &[ObjectEntry],
    ) -> Result<(), PveError> {
        let api = self.exec.api;
        for pos in (want.len()..have.len()).rev() {
            let target = ObjectTarget::Entry(pos.to_string());
            api.object_write(id, &target, ObjectWrite::Delete, &[])
                .await?;
        }
        for (pos, (w, h)) in want.iter().zip(have).enumerate() {
            if w != h {
                let mut p = params(w);
                p.extend(removed(w, h));
                let target = ObjectTarget::Entry(pos.to_string());
                api.object_write(id, &target, ObjectWrite::Put, &p).await?;
            }
        }
        for (pos, w) in want.iter().enumerate().skip(have.len()) {
            api.object_write(id, &ObjectTarget::Object, ObjectWrite::Post, &params(w))
                .await?;
            let to_end = vec![("moveto".to_owned(), (pos + 1).to_string())];
            let first = ObjectTarget::Entry("0".to_owned());
            api.object_write(id, &first, ObjectWrite::Put, &to_end)
                .await?;
        }
        Ok(())
    }

    /// IP set entries, by address: added, changed, removed.
    async fn key_entries(
        &self,
        id: &ObjectId,
        key: &str,
        want: &[ObjectEntry],
        have: &[ObjectEntry],
    ) -> Result<(), PveError> {
        let api = self.exec.api;
        let by_key = |list: &[ObjectEntry]| -> BTreeMap<String, ObjectEntry> {
            list.iter()
                .filter_map(|e| Some((e.get(key)?.clone(), e.clone())))
                .collect()
        };
        let (want, have) = (by_key(want), by_key(have));
        for name in have.keys().filter(|k| !want.contains_key(*k)) {
            let target = ObjectTarget::Entry(name.clone());
            api.object_write(id, &target, ObjectWrite::Delete, &[])
                .await?;
        }
        for (name, w) in &want {
            match have.get(name) {
                None => {
                    api.object_write(id, &ObjectTarget::Object, ObjectWrite::Post, &params(w))
                        .await?;
                }
                Some(h) if h != w => {
                    let mut p = params(w.iter().filter(|(k, _)| k.as_str() != key));
                    p.extend(removed(w, h));
                    let target = ObjectTarget::Entry(name.clone());
                    api.object_write(id, &target, ObjectWrite::Put, &p).await?;
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Deletes an object: its entries first (PVE refuses to delete a group with rules),
    /// then the object. Options are never deleted. What is already gone is done.
    async fn delete_object(&self, id: &ObjectId) -> Result<(), String> {
        let what = id.describe();
        if id.is_setting() {
            return Ok(());
        }
        // PVE answers a network interface that is not there with a parameter error
        let gone = |e: &PveError| match e {
            PveError::NotFound(_) => true,
            PveError::Validation { errors, .. } => errors
                .get("iface")
                .is_some_and(|m| m == "interface does not exist"),
            _ => false,
        };
        if id.is_access() {
            return self.delete_access(id).await;
        }
        if id.entries() == Some(Entries::Ordered) {
            let have = match self.live_entries(id).await {
                Ok(have) => have,
                Err(_) if id.kind == ObjectKind::FirewallRules => Vec::new(),
                Err(e) => return Err(e),
            };
            self.order_entries(id, &[], &have)
                .await
                .or_else(|e| if gone(&e) { Ok(()) } else { Err(e) })
                .map_err(|e| format!("deleting the rules of {what}: {e}"))?;
        }
        if id.kind == ObjectKind::FirewallRules {
            return Ok(());
        }
        if id.kind.is_cluster_object() && !self.cluster_object_listed(id).await? {
            return Ok(());
        }
        // an IP set's entries go with it (`force`)
        let force: Params = if id.kind == ObjectKind::IpSet {
            vec![("force".to_owned(), "1".to_owned())]
        } else {
            Vec::new()
        };
        match self
            .exec
            .api
            .object_write(id, &ObjectTarget::Object, ObjectWrite::Delete, &force)
            .await
        {
            Ok(()) => Ok(()),
            Err(e) if gone(&e) => Ok(()),
            Err(e) => Err(format!("deleting {what}: {e}")),
        }
    }
}
