//! The firewall routes: `/cluster/firewall/...`, `/nodes/{node}/firewall/...` and
//! `/nodes/{node}/{qemu,lxc}/{vmid}/firewall/...`. Thin: the scope comes from the path, the
//! work from `crate::firewall`. Like PVE, a guest's firewall needs no guest (its `.fw` file is
//! read as empty); the node must exist.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Router;
use axum::extract::Path;
use axum::http::Uri;
use axum::response::Response;
use axum::routing::get;
use serde_json::Value;

use super::firewall_objects as obj;
use super::{Params, SimState, data, parse_vmid};
use crate::error::ApiResult;
use crate::firewall::{Firewall, Scope, objects, options, rules, spec};
use crate::model::GuestKind;
use crate::server::Sim;

/// Path parameters by name.
pub(crate) type PathMap = Path<HashMap<String, String>>;

/// All firewall routes.
pub(crate) fn routes() -> Router<Arc<Sim>> {
    let mut router = Router::new()
        .route("/cluster/firewall/macros", get(macros))
        .route(
            "/cluster/firewall/groups",
            get(groups_list).post(group_create),
        )
        .route(
            "/cluster/firewall/groups/{group}",
            get(rules_list).post(rule_create).delete(group_delete),
        )
        .route(
            "/cluster/firewall/groups/{group}/{pos}",
            get(rule_get).put(rule_update).delete(rule_delete),
        );
    let guests = [
        "/nodes/{node}/qemu/{vmid}/firewall",
        "/nodes/{node}/lxc/{vmid}/firewall",
    ];
    for base in ["/cluster/firewall", "/nodes/{node}/firewall"]
        .into_iter()
        .chain(guests)
    {
        router = router
            .route(
                &format!("{base}/options"),
                get(options_get).put(options_set),
            )
            .route(&format!("{base}/rules"), get(rules_list).post(rule_create))
            .route(
                &format!("{base}/rules/{{pos}}"),
                get(rule_get).put(rule_update).delete(rule_delete),
            );
    }
    for base in std::iter::once("/cluster/firewall").chain(guests) {
        router = router.merge(obj::routes(base));
    }
    router
}

/// The configuration the path addresses; checks the node, `vmid` and group name.
pub(crate) fn scope_of(sim: &Sim, path: &HashMap<String, String>, uri: &Uri) -> ApiResult<Scope> {
    if let Some(group) = path.get("group") {
        spec::check_path(&objects::GROUP_NAME, group)?;
        return Ok(Scope::Group(group.clone()));
    }
    let Some(node) = path.get("node") else {
        return Ok(Scope::Cluster);
    };
    sim.cluster().node(node)?;
    let Some(vmid) = path.get("vmid") else {
        return Ok(Scope::Host(node.clone()));
    };
    let vmid = parse_vmid(vmid)?;
    let kind = if uri.path().contains(&format!("/{node}/lxc/")) {
        GuestKind::Lxc
    } else {
        GuestKind::Qemu
    };
    Ok(Scope::Guest(vmid, kind))
}

/// Runs `f` on the firewall state of the addressed scope.
pub(crate) fn with_fw<T>(
    sim: &Sim,
    path: &HashMap<String, String>,
    uri: &Uri,
    f: impl FnOnce(&mut Firewall, &Scope) -> ApiResult<T>,
) -> ApiResult<T> {
    let scope = scope_of(sim, path, uri)?;
    let mut cluster = sim.cluster();
    f(&mut cluster.firewall, &scope)
}

fn pos_of(path: &HashMap<String, String>) -> ApiResult<usize> {
    let text = path.get("pos").map_or("", String::as_str);
    let pos = spec::check_path(&rules::POS, text)?;
    Ok(pos.parse().unwrap_or(usize::MAX))
}

async fn macros(params: Params) -> ApiResult<Response> {
    spec::check(&params, &[])?;
    Ok(data(objects::macros()))
}

async fn options_get(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    with_fw(&state.0, &p, &uri, |fw, s| options::get(fw, s, &params)).map(data)
}

async fn options_set(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    with_fw(&state.0, &p, &uri, |fw, s| options::set(fw, s, &params))?;
    Ok(data(Value::Null))
}

async fn rules_list(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    with_fw(&state.0, &p, &uri, |fw, s| rules::list(fw, s, &params)).map(data)
}

async fn rule_create(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    with_fw(&state.0, &p, &uri, |fw, s| rules::create(fw, s, &params))?;
    Ok(data(Value::Null))
}

async fn rule_get(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    let pos = pos_of(&p)?;
    with_fw(&state.0, &p, &uri, |fw, s| rules::get(fw, s, pos, &params)).map(data)
}

async fn rule_update(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    let pos = pos_of(&p)?;
    with_fw(&state.0, &p, &uri, |fw, s| {
        rules::update(fw, s, pos, &params)
    })?;
    Ok(data(Value::Null))
}

async fn rule_delete(
    state: SimState,
    Path(p): PathMap,
    uri: Uri,
    params: Params,
) -> ApiResult<Response> {
    let pos = pos_of(&p)?;
    with_fw(&state.0, &p, &uri, |fw, s| {
        rules::delete(fw, s, pos, &params)
    })?;
    Ok(data(Value::Null))
}

async fn groups_list(state: SimState, params: Params) -> ApiResult<Response> {
    objects::list_groups(&state.0.cluster().firewall, &params).map(data)
}

async fn group_create(state: SimState, params: Params) -> ApiResult<Response> {
    objects::create_group(&mut state.0.cluster().firewall, &params)?;
    Ok(data(Value::Null))
}

async fn group_delete(state: SimState, Path(p): PathMap, params: Params) -> ApiResult<Response> {
    let group = p.get("group").map_or("", String::as_str);
    objects::delete_group(&mut state.0.cluster().firewall, group, &params)?;
    Ok(data(Value::Null))
}
