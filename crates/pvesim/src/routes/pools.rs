//! `/pools` and `/pools/{poolid}` (the deprecated per-pool paths PVE still serves). Thin: see
//! `crate::pools`.

use axum::extract::Path;
use axum::response::Response;
use serde_json::Value;

use super::{Params, SimState, data};
use crate::error::ApiResult;
use crate::firewall::spec;
use crate::pools;

/// `GET /pools[?poolid=..&type=..]`.
pub(crate) async fn index(state: SimState, params: Params) -> ApiResult<Response> {
    pools::index(&state.0.cluster(), &params).map(data)
}

/// `POST /pools`.
pub(crate) async fn create(state: SimState, params: Params) -> ApiResult<Response> {
    pools::create(&mut state.0.cluster(), &params)?;
    Ok(data(Value::Null))
}

/// `PUT /pools` (`poolid` in the parameters).
pub(crate) async fn update(state: SimState, params: Params) -> ApiResult<Response> {
    pools::update(&mut state.0.cluster(), &params, None)?;
    Ok(data(Value::Null))
}

/// `DELETE /pools?poolid=`.
pub(crate) async fn delete(state: SimState, params: Params) -> ApiResult<Response> {
    pools::delete(&mut state.0.cluster(), &params, None)?;
    Ok(data(Value::Null))
}

/// `GET /pools/{poolid}[?type=..]`: one pool, not a list.
pub(crate) async fn read(
    state: SimState,
    Path(poolid): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let p = spec::check(
        &params,
        &[spec::Field::one_of("type", &["qemu", "lxc", "storage"])],
    )?;
    let poolid = spec::check_path(&pools::POOLID, &poolid)?;
    pools::read(
        &state.0.cluster(),
        &poolid,
        p.get("type").map(String::as_str),
    )
    .map(data)
}

/// `PUT /pools/{poolid}`.
pub(crate) async fn update_one(
    state: SimState,
    Path(poolid): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    pools::update(&mut state.0.cluster(), &params, Some(&poolid))?;
    Ok(data(Value::Null))
}

/// `DELETE /pools/{poolid}`.
pub(crate) async fn delete_one(
    state: SimState,
    Path(poolid): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    pools::delete(&mut state.0.cluster(), &params, Some(&poolid))?;
    Ok(data(Value::Null))
}
