//! `/cluster/sdn`: the index and apply, zones, vnets and their subnets. Thin: the work is in
//! `crate::sdn` (reads, apply) and `crate::sdn_write` (changes and their checks).

use std::sync::Arc;

use axum::Router;
use axum::extract::{Extension, Path};
use axum::response::Response;
use axum::routing::get;
use serde_json::{Value, json};

use super::{Params, SimState, data};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::firewall::spec::{self, Field};
use crate::sdn::{self, Kind, View};
use crate::sdn_write as write;
use crate::server::Sim;

/// All SDN routes.
pub(crate) fn routes() -> Router<Arc<Sim>> {
    Router::new()
        .route("/cluster/sdn", get(index).put(apply))
        .route("/cluster/sdn/zones", get(zones).post(zone_create))
        .route(
            "/cluster/sdn/zones/{zone}",
            get(zone).put(zone_update).delete(zone_delete),
        )
        .route("/cluster/sdn/vnets", get(vnets).post(vnet_create))
        .route(
            "/cluster/sdn/vnets/{vnet}",
            get(vnet).put(vnet_update).delete(vnet_delete),
        )
        .route(
            "/cluster/sdn/vnets/{vnet}/subnets",
            get(subnets).post(subnet_create),
        )
        .route(
            "/cluster/sdn/vnets/{vnet}/subnets/{subnet}",
            get(subnet).put(subnet_update).delete(subnet_delete),
        )
}

fn done(result: ApiResult<()>) -> ApiResult<Response> {
    result.map(|()| data(Value::Null))
}

async fn index() -> Response {
    data(sdn::index())
}

/// `PUT /cluster/sdn`: the UPID of the reload.
async fn apply(
    state: SimState,
    Extension(caller): Extension<Caller>,
    params: Params,
) -> ApiResult<Response> {
    spec::check(
        &params,
        &[Field::str("lock-token"), Field::boolean("release-lock")],
    )?;
    let upid = sdn::apply(&mut state.0.cluster(), &caller.upid_user());
    Ok(data(json!(upid)))
}

async fn zones(state: SimState, params: Params) -> ApiResult<Response> {
    const TYPES: &[&str] = &["evpn", "faucet", "qinq", "simple", "vlan", "vxlan"];
    let p = sdn::read_params(&params, &[Field::one_of("type", TYPES)])?;
    let list = state.0.cluster().sdn.list(Kind::Zone, View::of(&p));
    let list: Vec<Value> = list
        .into_iter()
        .filter(|z| {
            p.get("type")
                .is_none_or(|t| z.get("type").and_then(Value::as_str) == Some(t.as_str()))
        })
        .map(Value::Object)
        .collect();
    Ok(data(Value::Array(list)))
}

async fn zone(state: SimState, Path(id): Path<String>, params: Params) -> ApiResult<Response> {
    let id = spec::check_path(&sdn::ZONE_ID, &id)?;
    let p = sdn::read_params(&params, &[])?;
    state
        .0
        .cluster()
        .sdn
        .read(Kind::Zone, View::of(&p), &id)
        .map(data)
}

async fn zone_create(state: SimState, params: Params) -> ApiResult<Response> {
    done(write::zone_create(&mut state.0.cluster(), &params))
}

async fn zone_update(
    state: SimState,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    done(write::zone_update(&mut state.0.cluster(), &id, &params))
}

async fn zone_delete(
    state: SimState,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    done(write::zone_delete(&mut state.0.cluster(), &id, &params))
}

async fn vnets(state: SimState, params: Params) -> ApiResult<Response> {
    let p = sdn::read_params(&params, &[])?;
    let list = state.0.cluster().sdn.list(Kind::Vnet, View::of(&p));
    Ok(data(Value::Array(
        list.into_iter().map(Value::Object).collect(),
    )))
}

async fn vnet(state: SimState, Path(id): Path<String>, params: Params) -> ApiResult<Response> {
    let id = spec::check_path(&sdn::VNET_ID, &id)?;
    let p = sdn::read_params(&params, &[])?;
    state
        .0
        .cluster()
        .sdn
        .read(Kind::Vnet, View::of(&p), &id)
        .map(data)
}

async fn vnet_create(state: SimState, params: Params) -> ApiResult<Response> {
    done(write::vnet_create(&mut state.0.cluster(), &params))
}

async fn vnet_update(
    state: SimState,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    done(write::vnet_update(&mut state.0.cluster(), &id, &params))
}

async fn vnet_delete(
    state: SimState,
    Path(id): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    done(write::vnet_delete(&mut state.0.cluster(), &id, &params))
}

/// `GET .../subnets`: the vnet's subnets (the vnet must exist).
async fn subnets(state: SimState, Path(vnet): Path<String>, params: Params) -> ApiResult<Response> {
    let vnet = spec::check_path(&sdn::VNET_ID, &vnet)?;
    let p = sdn::read_params(&params, &[])?;
    let cluster = state.0.cluster();
    if !cluster.sdn.config.vnets.contains_key(&vnet) {
        return Err(Kind::Vnet.missing(&vnet));
    }
    let list: Vec<Value> = cluster
        .sdn
        .list(Kind::Subnet, View::of(&p))
        .into_iter()
        .filter(|s| s.get("vnet").and_then(Value::as_str) == Some(vnet.as_str()))
        .map(Value::Object)
        .collect();
    Ok(data(Value::Array(list)))
}

/// `GET .../subnets/{subnet}`: refused when the subnet is another vnet's.
async fn subnet(
    state: SimState,
    Path((vnet, id)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let vnet = spec::check_path(&sdn::VNET_ID, &vnet)?;
    let id = spec::check_path(&write::SUBNET_ID, &id)?;
    let p = sdn::read_params(&params, &[])?;
    let cluster = state.0.cluster();
    if !cluster.sdn.config.vnets.contains_key(&vnet) {
        return Err(Kind::Vnet.missing(&vnet));
    }
    let found = cluster.sdn.read(Kind::Subnet, View::of(&p), &id)?;
    if found.get("vnet").and_then(Value::as_str) != Some(vnet.as_str()) {
        return Err(ApiError::param("vnet", "wrong vnet"));
    }
    Ok(data(found))
}

async fn subnet_create(
    state: SimState,
    Path(vnet): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    done(write::subnet_create(&mut state.0.cluster(), &vnet, &params))
}

async fn subnet_update(
    state: SimState,
    Path((vnet, id)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    done(write::subnet_update(
        &mut state.0.cluster(),
        &vnet,
        &id,
        &params,
    ))
}

async fn subnet_delete(
    state: SimState,
    Path((vnet, id)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    done(write::subnet_delete(
        &mut state.0.cluster(),
        &vnet,
        &id,
        &params,
    ))
}
