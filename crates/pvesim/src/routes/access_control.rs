//! `/access/users`, `/access/groups`, `/access/roles`, `/access/acl` and API tokens. Thin:
//! see `crate::access_control`. A token made here authenticates at once; one removed (or
//! whose user is) no longer does.

use std::sync::Arc;

use axum::Extension;
use axum::Router;
use axum::extract::Path;
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};

use super::{Params, SimState, data};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::firewall::spec::{self, Field};
use crate::server::Sim;

/// The routes, for the router.
pub(crate) fn routes() -> Router<Arc<Sim>> {
    Router::new()
        .route("/access/users", get(list_users).post(create_user))
        .route(
            "/access/users/{userid}",
            get(read_user).put(update_user).delete(delete_user),
        )
        .route(
            "/access/users/{userid}/token/{tokenid}",
            get(read_token)
                .post(create_token)
                .put(update_token)
                .delete(delete_token),
        )
        .route("/access/groups", get(list_groups).post(create_group))
        .route(
            "/access/groups/{groupid}",
            get(read_group).put(update_group).delete(delete_group),
        )
        .route("/access/roles", get(list_roles).post(create_role))
        .route(
            "/access/roles/{roleid}",
            get(read_role).put(update_role).delete(delete_role),
        )
        .route("/access/acl", get(list_acl).put(update_acl))
        .route("/access/permissions", get(permissions))
}

fn done() -> ApiResult<Response> {
    Ok(data(Value::Null))
}

async fn list_users(state: SimState) -> ApiResult<Response> {
    Ok(data(state.0.cluster().access.list_users()))
}

async fn create_user(state: SimState, params: Params) -> ApiResult<Response> {
    state.0.cluster().access.create_user(&params)?;
    done()
}

async fn read_user(state: SimState, Path(userid): Path<String>) -> ApiResult<Response> {
    let userid = crate::firewall::spec::check_path(&crate::access_control::USERID, &userid)?;
    state.0.cluster().access.read_user(&userid).map(data)
}

async fn update_user(
    state: SimState,
    Path(userid): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    state.0.cluster().access.update_user(&userid, &params)?;
    done()
}

async fn delete_user(state: SimState, Path(userid): Path<String>) -> ApiResult<Response> {
    let tokens = state.0.cluster().access.delete_user(&userid)?;
    for token in tokens {
        state.0.auth.remove_token(&token);
    }
    done()
}

async fn read_token(
    state: SimState,
    Path((userid, tokenid)): Path<(String, String)>,
) -> ApiResult<Response> {
    state
        .0
        .cluster()
        .access
        .read_token(&userid, &tokenid)
        .map(data)
}

async fn create_token(
    state: SimState,
    Path((userid, tokenid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let (full, info) = state
        .0
        .cluster()
        .access
        .create_token(&userid, &tokenid, &params)?;
    let value = state.0.auth.add_token(&full);
    Ok(data(
        json!({ "full-tokenid": full, "info": info, "value": value }),
    ))
}

async fn update_token(
    state: SimState,
    Path((userid, tokenid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    state
        .0
        .cluster()
        .access
        .update_token(&userid, &tokenid, &params)
        .map(data)
}

async fn delete_token(
    state: SimState,
    Path((userid, tokenid)): Path<(String, String)>,
) -> ApiResult<Response> {
    let full = state.0.cluster().access.delete_token(&userid, &tokenid)?;
    state.0.auth.remove_token(&full);
    done()
}

async fn list_groups(state: SimState) -> ApiResult<Response> {
    Ok(data(state.0.cluster().access.list_groups()))
}

async fn create_group(state: SimState, params: Params) -> ApiResult<Response> {
    state.0.cluster().access.create_group(&params)?;
    done()
}

async fn read_group(state: SimState, Path(groupid): Path<String>) -> ApiResult<Response> {
    state.0.cluster().access.read_group(&groupid).map(data)
}

async fn update_group(
    state: SimState,
    Path(groupid): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    state.0.cluster().access.update_group(&groupid, &params)?;
    done()
}

async fn delete_group(state: SimState, Path(groupid): Path<String>) -> ApiResult<Response> {
    state.0.cluster().access.delete_group(&groupid)?;
    done()
}

async fn list_roles(state: SimState) -> ApiResult<Response> {
    Ok(data(state.0.cluster().access.list_roles()))
}

async fn create_role(state: SimState, params: Params) -> ApiResult<Response> {
    state.0.cluster().access.create_role(&params)?;
    done()
}

async fn read_role(state: SimState, Path(roleid): Path<String>) -> ApiResult<Response> {
    state.0.cluster().access.read_role(&roleid).map(data)
}

async fn update_role(
    state: SimState,
    Path(roleid): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    state.0.cluster().access.update_role(&roleid, &params)?;
    done()
}

async fn delete_role(state: SimState, Path(roleid): Path<String>) -> ApiResult<Response> {
    state.0.cluster().access.delete_role(&roleid)?;
    done()
}

async fn list_acl(state: SimState) -> ApiResult<Response> {
    Ok(data(state.0.cluster().access.list_acl()))
}

async fn update_acl(state: SimState, params: Params) -> ApiResult<Response> {
    state.0.cluster().access.update_acl(&params)?;
    done()
}

/// `$PVE::AccessControl::userid_or_token_regex`: a user id, or a full token id.
fn is_authid(v: &str) -> bool {
    match v.rsplit_once('!') {
        Some(_) => model::access::split_tokenid(v).is_ok(),
        None => model::access::check_userid(v).is_ok(),
    }
}

/// `GET /access/permissions` (pve-access-control `API2/AccessControl.pm` `permissions`): the
/// caller's effective privileges (or, with `userid`, those of a user or token; another user's
/// need `Sys.Audit` on `/access`), on `path` alone or on every path that matters.
async fn permissions(
    state: SimState,
    Extension(caller): Extension<Caller>,
    params: Params,
) -> ApiResult<Response> {
    let p = spec::check(
        &params,
        &[Field::str("userid").pattern(is_authid), Field::str("path")],
    )?;
    let authid = caller.upid_user();
    let target = p.get("userid").cloned().unwrap_or_else(|| authid.clone());
    let owned_token = target
        .rsplit_once('!')
        .is_some_and(|(user, _)| user == authid);
    let cluster = state.0.cluster();
    let access = &cluster.access;
    if target != authid && !owned_token {
        let mine = access.privileges(&cluster.pools, &authid, "/access");
        if !mine.contains_key("Sys.Audit") {
            return Err(ApiError::forbidden(
                "Permission check failed (/access, Sys.Audit)",
            ));
        }
    }
    let answer = match p.get("path").filter(|path| !path.is_empty()) {
        // PVE tests the (always true) hash reference, so an empty set still names the path.
        Some(path) => {
            let privs = access.privileges(&cluster.pools, &target, path);
            let mut one = serde_json::Map::new();
            one.insert(path.clone(), privs_json(&privs));
            Value::Object(one)
        }
        None => Value::Object(
            access
                .effective(&cluster.pools, &target)
                .iter()
                .map(|(path, privs)| (path.clone(), privs_json(privs)))
                .collect(),
        ),
    };
    Ok(data(answer))
}

/// `{priv: 1|0}`: the value is the propagate flag.
fn privs_json(privs: &crate::permissions::Privs) -> Value {
    Value::Object(
        privs
            .iter()
            .map(|(p, prop)| (p.clone(), json!(u8::from(*prop))))
            .collect(),
    )
}
