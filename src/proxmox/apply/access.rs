//! Users, groups, roles, ACL entries, API tokens and pool members: the requests that create,
//! change and remove them, as pve-access-control's API takes them. A user's password goes
//! only into the request that creates it; a token's secret, which PVE answers only then, is
//! handed back to be kept in state as a secret, never logged.

use secrecy::SecretString;
use serde_json::Value as Json;

use super::Run;
use crate::proxmox::client::{ObjectTarget, ObjectWrite, PveError};
use crate::proxmox::plan::DesiredObject;
use crate::proxmox::types::{ObjectId, ObjectKind, parse_acl, parse_member};
use crate::store::Secrets;

type Params = Vec<(String, String)>;

/// `PUT /access/acl`'s parameters for the entry named `name` (without `propagate`).
fn acl_params(id: &ObjectId) -> Result<Params, String> {
    let name = id.name.as_deref().unwrap_or_default();
    let entry = parse_acl(name).ok_or_else(|| format!("'{name}' is not an ACL entry"))?;
    Ok(vec![
        ("path".to_owned(), entry.path.to_owned()),
        ("roles".to_owned(), entry.role.to_owned()),
        (entry.subject.param().to_owned(), entry.ugid.to_owned()),
    ])
}

/// `PUT /pools/{poolid}`'s parameter naming the member: `vms` or `storage`.
fn member_param(id: &ObjectId) -> Result<(String, String), String> {
    let name = id.name.as_deref().unwrap_or_default();
    let (_, kind, member) =
        parse_member(name).ok_or_else(|| format!("'{name}' is not a pool member"))?;
    let key = if kind == "vm" { "vms" } else { "storage" };
    Ok((key.to_owned(), member.to_owned()))
}

impl Run<'_> {
    /// Creates or changes an access object; answers the secrets Proxmox VE made for it (an
    /// API token's `value`), `None` when it made none.
    pub(super) async fn put_access(
        &self,
        object: &DesiredObject,
        create: bool,
    ) -> Result<Option<Secrets>, String> {
        let api = self.exec.api;
        let id = &object.id;
        let what = id.describe();
        let doing = if create { "creating" } else { "setting" };
        let fields: Params = object
            .fields
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let fail = |e: PveError| format!("{doing} {what}: {e}");
        match id.kind {
            ObjectKind::Acl => {
                let mut params = acl_params(id)?;
                params.extend(fields);
                api.object_write(id, &ObjectTarget::Object, ObjectWrite::Put, &params)
                    .await
                    .map_err(fail)?;
            }
            ObjectKind::PoolMember if create => {
                let params = vec![member_param(id)?];
                api.object_write(id, &ObjectTarget::Object, ObjectWrite::Put, &params)
                    .await
                    .map_err(fail)?;
            }
            ObjectKind::UserToken if create => {
                let made = api
                    .object_create(id, &ObjectTarget::Object, &fields)
                    .await
                    .map_err(fail)?;
                let Some(value) = made.get("value").and_then(Json::as_str) else {
                    return Err(format!(
                        "{doing} {what}: Proxmox VE answered no token value; delete the token \
                         and apply again"
                    ));
                };
                let secrets = [("value".to_owned(), SecretString::from(value.to_owned()))];
                return Ok(Some(Secrets(secrets.into_iter().collect())));
            }
            ObjectKind::User | ObjectKind::Group | ObjectKind::Role if create => {
                let (_, name_key) = id.collection().unwrap_or_default();
                let mut params = vec![(name_key.to_owned(), id.name.clone().unwrap_or_default())];
                params.extend(fields);
                params.extend(
                    object
                        .secrets
                        .iter()
                        .map(|(k, v)| (k.clone(), v.expose().to_owned())),
                );
                api.object_write(id, &ObjectTarget::Collection, ObjectWrite::Post, &params)
                    .await
                    .map_err(fail)?;
            }
            _ if fields.is_empty() => {}
            _ => {
                api.object_write(id, &ObjectTarget::Object, ObjectWrite::Put, &fields)
                    .await
                    .map_err(fail)?;
            }
        }
        Ok(None)
    }

    /// Removes an access object; what is already gone is done.
    pub(super) async fn delete_access(&self, id: &ObjectId) -> Result<(), String> {
        let api = self.exec.api;
        let what = id.describe();
        let gone = |e: &PveError| matches!(e, PveError::NotFound(_));
        let result = match id.kind {
            ObjectKind::Acl => {
                let mut params = acl_params(id)?;
                params.push(("delete".to_owned(), "1".to_owned()));
                api.object_write(id, &ObjectTarget::Object, ObjectWrite::Put, &params)
                    .await
            }
            ObjectKind::PoolMember => {
                // PVE refuses to remove what the pool does not hold: look first
                let pool = match api.object_read(id, &ObjectTarget::Object).await {
                    Ok(pool) => pool,
                    Err(e) if gone(&e) => return Ok(()),
                    Err(e) => return Err(format!("reading the pool of {what}: {e}")),
                };
                if crate::proxmox::inventory::access_live(id, &pool).is_none() {
                    return Ok(());
                }
                let params = vec![member_param(id)?, ("delete".to_owned(), "1".to_owned())];
                api.object_write(id, &ObjectTarget::Object, ObjectWrite::Put, &params)
                    .await
            }
            _ => {
                api.object_write(id, &ObjectTarget::Object, ObjectWrite::Delete, &[])
                    .await
            }
        };
        match result {
            Ok(()) => Ok(()),
            Err(e) if gone(&e) => Ok(()),
            Err(e) => Err(format!("removing {what}: {e}")),
        }
    }
}
