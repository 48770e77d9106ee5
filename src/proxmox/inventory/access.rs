//! Reads users, groups, roles, ACL entries, API tokens and pool members as the plan compares
//! them: each one's parameters in the form atoll sends them (a user's groups and a role's
//! privileges as sorted lists), without what PVE adds for its own bookkeeping (a user's
//! tokens, a group's members). An ACL entry is found in `GET /access/acl`, a pool member in
//! its pool's member list; one that does not exist is `None`.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::InventoryError;
use crate::proxmox::client::{ObjectTarget, ProxmoxApi, PveError};
use crate::proxmox::guard::{OwnAccess, ProtectedSet};
use crate::proxmox::plan::{Desired, LiveObject, StateEntry, config_from_json};
use crate::proxmox::types::{ObjectId, ObjectKind, Scope, parse_acl, parse_member};

/// The parameters of one access object, or `None` when the cluster has none such.
pub(super) async fn read(
    api: &dyn ProxmoxApi,
    id: &ObjectId,
) -> Result<Option<LiveObject>, InventoryError> {
    let value = match api.object_read(id, &ObjectTarget::Object).await {
        Ok(value) => value,
        Err(PveError::NotFound(_)) => return Ok(None),
        Err(e) => return Err(InventoryError::Api(e)),
    };
    Ok(live(id, &value))
}

/// Who atoll is on the cluster and what grants it access today: its user's groups, and the
/// ACL entries whose subject is its user, its token or one of those groups. What atoll may not
/// read (a token without `Sys.Audit` sees part of the ACL) counts as granting nothing more.
pub async fn own_access(api: &dyn ProxmoxApi, caller: &str) -> Result<OwnAccess, InventoryError> {
    let mut own = OwnAccess::of(caller);
    let user = ObjectId {
        kind: ObjectKind::User,
        scope: Scope::Cluster,
        name: Some(own.user.clone()),
    };
    match api.object_read(&user, &ObjectTarget::Object).await {
        Ok(value) => {
            own.groups = value
                .get("groups")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .filter_map(Json::as_str)
                .map(str::to_owned)
                .collect();
        }
        Err(PveError::NotFound(_) | PveError::Forbidden(_)) => {}
        Err(e) => return Err(InventoryError::Api(e)),
    }
    let acl = ObjectId {
        kind: ObjectKind::Acl,
        scope: Scope::Cluster,
        name: None,
    };
    let listing = match api.object_read(&acl, &ObjectTarget::Object).await {
        Ok(listing) => listing,
        Err(PveError::NotFound(_) | PveError::Forbidden(_)) => Json::Null,
        Err(e) => return Err(InventoryError::Api(e)),
    };
    for entry in listing.as_array().into_iter().flatten() {
        let text = |k: &str| entry.get(k).and_then(Json::as_str).map(str::to_owned);
        if let (Some(path), Some(ugid), Some(role)) = (text("path"), text("ugid"), text("roleid"))
            && own.is_subject(&ugid)
        {
            own.grants.push((path, ugid, role));
        }
    }
    Ok(own)
}

/// The protected set with who atoll is and what grants it access, read only when the
/// configuration or the state has access objects (nothing else can take atoll's access away).
pub async fn with_own_access(
    api: &dyn ProxmoxApi,
    protected: ProtectedSet,
    state: &[StateEntry],
    desired: &[Desired],
) -> Result<ProtectedSet, InventoryError> {
    let in_state = state
        .iter()
        .any(|e| matches!(e, StateEntry::Object { id, .. } if id.is_access()));
    let declared = desired
        .iter()
        .any(|d| matches!(d, Desired::Object(o) if o.id.is_access()));
    match api.caller() {
        Some(caller) if in_state || declared => {
            Ok(protected.with_access(own_access(api, &caller).await?))
        }
        _ => Ok(protected),
    }
}

/// What the read answered, as the plan compares it.
pub(crate) fn live(id: &ObjectId, value: &Json) -> Option<LiveObject> {
    let name = id.name.as_deref().unwrap_or_default();
    let fields = match id.kind {
        ObjectKind::Acl => acl_fields(name, value)?,
        ObjectKind::PoolMember => member_present(name, value).then(BTreeMap::new)?,
        ObjectKind::Role => {
            let mut privs: Vec<&str> = value
                .as_object()?
                .iter()
                .filter(|(_, on)| on.as_u64() == Some(1) || on.as_bool() == Some(true))
                .map(|(p, _)| p.as_str())
                .collect();
            privs.sort_unstable();
            BTreeMap::from([("privs".to_owned(), privs.join(","))])
        }
        _ => {
            let object = value.as_object()?;
            let mut fields = config_from_json(object);
            for bookkeeping in [
                "members",
                "tokens",
                "userid",
                "groupid",
                "tokenid",
                "realm-type",
            ] {
                fields.remove(bookkeeping);
            }
            if id.kind == ObjectKind::User {
                let mut groups: Vec<&str> = object
                    .get("groups")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Json::as_str)
                    .collect();
                groups.sort_unstable();
                if !groups.is_empty() {
                    fields.insert("groups".to_owned(), groups.join(","));
                }
            }
            fields
        }
    };
    Some(LiveObject {
        fields,
        entries: None,
    })
}

/// The entry's `propagate`, if `GET /access/acl` lists it.
fn acl_fields(name: &str, listing: &Json) -> Option<BTreeMap<String, String>> {
    let want = parse_acl(name)?;
    let found = listing.as_array()?.iter().find(|e| {
        let text = |k: &str| e.get(k).and_then(Json::as_str);
        text("path") == Some(want.path)
            && text("ugid") == Some(want.ugid)
            && text("roleid") == Some(want.role)
            && text("type") == Some(want.subject.pve_type())
    })?;
    let propagate = match found.get("propagate") {
        Some(Json::Number(n)) => n.to_string(),
        Some(Json::Bool(b)) => u8::from(*b).to_string(),
        Some(Json::String(s)) => s.clone(),
        _ => "1".to_owned(),
    };
    Some(BTreeMap::from([("propagate".to_owned(), propagate)]))
}

/// Whether the pool lists the member (`GET /pools/{poolid}`: `members` with `type` `qemu`,
/// `lxc` or `storage`).
fn member_present(name: &str, pool: &Json) -> bool {
    let Some((_, kind, id)) = parse_member(name) else {
        return false;
    };
    pool.get("members")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .any(|m| match kind {
            "vm" => {
                m.get("vmid")
                    .and_then(Json::as_u64)
                    .map(|v| v.to_string())
                    .as_deref()
                    == Some(id)
            }
            _ => {
                m.get("type").and_then(Json::as_str) == Some("storage")
                    && m.get("storage").and_then(Json::as_str) == Some(id)
            }
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn id(kind: ObjectKind, name: &str) -> ObjectId {
        ObjectId::new(kind, Scope::Cluster, Some(name)).expect("an id")
    }

    #[test]
    fn reads_are_put_in_the_form_atoll_sends() {
        let user = live(
            &id(ObjectKind::User, "ops@pve"),
            &json!({"enable": 1, "expire": 0, "groups": ["b", "a"], "tokens": {"ci": {}}}),
        )
        .expect("a user");
        assert_eq!(user.fields.get("groups").map(String::as_str), Some("a,b"));
        assert!(!user.fields.contains_key("tokens"));
        let role = live(
            &id(ObjectKind::Role, "ops"),
            &json!({"VM.Audit": 1, "Sys.Audit": 1}),
        )
        .expect("a role");
        assert_eq!(role.fields["privs"], "Sys.Audit,VM.Audit");
        let listing = json!([
            {"path": "/", "type": "user", "ugid": "ops@pve", "roleid": "PVEAuditor", "propagate": 0},
            {"path": "/", "type": "group", "ugid": "ops", "roleid": "PVEAuditor", "propagate": 1},
        ]);
        let acl = live(&id(ObjectKind::Acl, "/?ops@pve?PVEAuditor"), &listing).expect("an entry");
        assert_eq!(acl.fields["propagate"], "0");
        assert!(live(&id(ObjectKind::Acl, "/?ops@pve?PVEAdmin"), &listing).is_none());
        let pool = json!({"members": [{"type": "qemu", "vmid": 100}, {"type": "storage", "storage": "local"}]});
        assert!(live(&id(ObjectKind::PoolMember, "web/vm/100"), &pool).is_some());
        assert!(live(&id(ObjectKind::PoolMember, "web/storage/local"), &pool).is_some());
        assert!(live(&id(ObjectKind::PoolMember, "web/vm/101"), &pool).is_none());
    }
}
