//! Firewall aliases and ipsets of the cluster and of guests (`.../aliases[/{name}]`,
//! `.../ipset[/{name}[/{cidr}]]`, a CIDR's `/` sent as `%2F`). Thin: see `crate::firewall`.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::Path;
use axum::http::Uri;
use axum::response::Response;
use axum::routing::get;
use serde_json::Value;

use super::firewall::{PathMap, with_fw};
use super::{Params, SimState, data};
use crate::error::ApiResult;
use crate::firewall::{ipsets, objects};
use crate::server::Sim;

/// The alias and ipset routes under one firewall base path.
pub(crate) fn routes(base: &str) -> Router<Arc<Sim>> {
    Router::new()
        .route(
            &format!("{base}/aliases"),
            get(aliases_list).post(alias_create),
        )
        .route(
            &format!("{base}/aliases/{{name}}"),
            get(alias_get).put(alias_update).delete(alias_delete),
        )
        .route(&format!("{base}/ipset"), get(sets_list).post(set_create))
        .route(
            &format!("{base}/ipset/{{name}}"),
            get(entries_list).post(entry_add).delete(set_delete),
        )
        .route(
            &format!("{base}/ipset/{{name}}/{{cidr}}"),
            get(entry_get).put(entry_update).delete(entry_remove),
        )
}

fn arg<'a>(path: &'a HashMap<String, String>, key: &str) -> &'a str {
    path.get(key).map_or("", String::as_str)
}

fn done(result: ApiResult<()>) -> ApiResult<Response> {
    result.map(|()| data(Value::Null))
}

async fn aliases_list(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    with_fw(&state.0, &p, &uri, |fw, s| {
        objects::list_aliases(fw, s, &params)
    })
    .map(data)
}

async fn alias_create(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    done(with_fw(&state.0, &p, &uri, |fw, s| {
        objects::create_alias(fw, s, &params)
    }))
}

async fn alias_get(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    let name = arg(&p, "name");
    with_fw(&state.0, &p, &uri, |fw, s| {
        objects::get_alias(fw, s, name, &params)
    })
    .map(data)
}

async fn alias_update(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    let name = arg(&p, "name");
    done(with_fw(&state.0, &p, &uri, |fw, s| {
        objects::update_alias(fw, s, name, &params)
    }))
}

async fn alias_delete(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    let name = arg(&p, "name");
    done(with_fw(&state.0, &p, &uri, |fw, s| {
        objects::delete_alias(fw, s, name, &params)
    }))
}

async fn sets_list(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    with_fw(&state.0, &p, &uri, |fw, s| {
        ipsets::list_sets(fw, s, &params)
    })
    .map(data)
}

async fn set_create(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    done(with_fw(&state.0, &p, &uri, |fw, s| {
        ipsets::create_set(fw, s, &params)
    }))
}

async fn set_delete(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    let name = arg(&p, "name");
    done(with_fw(&state.0, &p, &uri, |fw, s| {
        ipsets::delete_set(fw, s, name, &params)
    }))
}

async fn entries_list(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    let name = arg(&p, "name");
    with_fw(&state.0, &p, &uri, |fw, s| {
        ipsets::list_entries(fw, s, name, &params)
    })
    .map(data)
}

async fn entry_add(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    let name = arg(&p, "name");
    done(with_fw(&state.0, &p, &uri, |fw, s| {
        ipsets::add_entry(fw, s, name, &params)
    }))
}

async fn entry_get(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    let (name, cidr) = (arg(&p, "name"), arg(&p, "cidr"));
    with_fw(&state.0, &p, &uri, |fw, s| {
        ipsets::get_entry(fw, s, name, cidr, &params)
    })
    .map(data)
}

async fn entry_update(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    let (name, cidr) = (arg(&p, "name"), arg(&p, "cidr"));
    done(with_fw(&state.0, &p, &uri, |fw, s| {
        ipsets::update_entry(fw, s, name, cidr, &params)
    }))
}

async fn entry_remove(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    let (name, cidr) = (arg(&p, "name"), arg(&p, "cidr"));
    done(with_fw(&state.0, &p, &uri, |fw, s| {
        ipsets::remove_entry(fw, s, name, cidr, &params)
    }))
}
