//! `/nodes/{node}/tasks/{upid}/status|log`: tasks are found on the node named in the UPID.

use axum::extract::Path;
use axum::response::Response;

use super::{Params, SimState, data};
use crate::pvesim::error::{ApiError, ApiResult};
use crate::pvesim::tasks::Upid;

fn check_upid(node: &str, upid: &str) -> ApiResult<()> {
    match Upid::parse(upid) {
        None => Err(ApiError::param("upid", "unable to parse worker upid")),
        Some(u) if u.node != node => Err(ApiError::param("upid", "no such task")),
        Some(_) => Ok(()),
    }
}

/// `GET .../tasks/{upid}/status`.
pub(crate) async fn status(
    state: SimState,
    Path((node, upid)): Path<(String, String)>,
) -> ApiResult<Response> {
    check_upid(&node, &upid)?;
    let cluster = state.0.cluster();
    let task = cluster
        .tasks
        .get(&upid)
        .ok_or_else(|| ApiError::param("upid", "no such task"))?;
    Ok(data(task.status_json()))
}

/// `GET .../tasks/{upid}/log?start=&limit=`.
pub(crate) async fn log(
    state: SimState,
    Path((node, upid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    check_upid(&node, &upid)?;
    let start = params.int("start")?.unwrap_or(0) as usize;
    let limit = params.int("limit")?.unwrap_or(50) as usize;
    let cluster = state.0.cluster();
    let task = cluster
        .tasks
        .get(&upid)
        .ok_or_else(|| ApiError::param("upid", "no such task"))?;
    Ok(data(task.log_json(start, limit)))
}
