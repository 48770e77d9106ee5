//! `/nodes/{node}/tasks` (the node's task list, filtered as PVE's `Tasks.pm` does) and
//! `/nodes/{node}/tasks/{upid}/status|log`: tasks are found on the node named in the UPID.

use axum::extract::Path;
use axum::response::Response;

use super::{Params, SimState, data};
use crate::error::{ApiError, ApiResult};
use crate::model::Cluster;
use crate::tasks::{Task, Upid};

fn check_upid(node: &str, upid: &str) -> ApiResult<()> {
    match Upid::parse(upid) {
        None => Err(ApiError::param("upid", "unable to parse worker upid")),
        Some(u) if u.node != node => Err(ApiError::param("upid", "no such task")),
        Some(_) => Ok(()),
    }
}

/// `GET /nodes/{node}/tasks?vmid=&source=active|archive|all&typefilter=&start=&limit=`:
/// newest first; `source` defaults to `archive` (finished tasks), `active` lists running ones.
pub(crate) async fn list(
    state: SimState,
    Path(node): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let vmid = params.int("vmid")?;
    let source = params.get("source")?.unwrap_or("archive").to_owned();
    if !matches!(source.as_str(), "archive" | "active" | "all") {
        return Err(ApiError::param(
            "source",
            format!(
                "value '{source}' does not have a value in the enumeration 'archive, active, all'"
            ),
        ));
    }
    let kind = params.get("typefilter")?.map(str::to_owned);
    let start = params.int("start")?.unwrap_or(0) as usize;
    let limit = params.int("limit")?.unwrap_or(50) as usize;
    let cluster = state.0.cluster();
    cluster.node(&node)?;
    let now = std::time::Instant::now();
    let mut found: Vec<&Task> = cluster
        .tasks
        .values()
        .filter(|t| t.upid.node == node && t.visible_at <= now)
        .filter(|t| vmid.is_none_or(|id| t.upid.id == id.to_string()))
        .filter(|t| kind.as_ref().is_none_or(|k| t.upid.kind == *k))
        .filter(|t| match source.as_str() {
            "active" => t.exit.is_none(),
            "archive" => t.exit.is_some(),
            _ => true,
        })
        .collect();
    found.sort_by_key(|t| std::cmp::Reverse(t.upid.starttime));
    let rows: Vec<serde_json::Value> = found
        .into_iter()
        .skip(start)
        .take(limit)
        .map(Task::list_json)
        .collect();
    Ok(data(serde_json::Value::Array(rows)))
}

/// `GET .../tasks/{upid}/status`.
pub(crate) async fn status(
    state: SimState,
    Path((node, upid)): Path<(String, String)>,
) -> ApiResult<Response> {
    check_upid(&node, &upid)?;
    let cluster = state.0.cluster();
    let task = visible(&cluster, &upid)?;
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
    let task = visible(&cluster, &upid)?;
    Ok(data(task.log_json(start, limit)))
}

/// The task, unless it is unknown or not yet listed.
fn visible<'a>(cluster: &'a Cluster, upid: &str) -> ApiResult<&'a Task> {
    cluster
        .tasks
        .get(upid)
        .filter(|t| t.visible_at <= std::time::Instant::now())
        .ok_or_else(|| ApiError::param("upid", "no such task"))
}
