//! `/nodes/{node}/storage`, `.../content` and `query-url-metadata`.

use axum::extract::Path;
use axum::response::Response;
use serde_json::{Value, json};

use super::{Params, SimState, data};
use crate::error::{ApiError, ApiResult};
use crate::storage::Storage;

/// `GET /nodes/{node}/storage[?content=a,b&storage=x]`.
pub(crate) async fn list(
    state: SimState,
    Path(node): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    cluster.node(&node)?;
    let content = params.list("content");
    let only = params.get("storage")?;
    let list: Vec<Value> = cluster
        .storages
        .iter()
        .filter(|((n, sid), s)| {
            *n == node
                && only.is_none_or(|o| o == sid)
                && content.iter().all(|c| s.content.contains(c))
        })
        .map(|(_, s)| s.status_json())
        .collect();
    Ok(data(Value::Array(list)))
}

/// `GET /nodes/{node}/storage/{storage}/content[?content=vztmpl&vmid=N]`.
pub(crate) async fn content(
    state: SimState,
    Path((node, sid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let mut cluster = state.0.cluster();
    let containers: std::collections::BTreeSet<u32> = cluster
        .guests
        .values()
        .filter(|g| g.kind == crate::model::GuestKind::Lxc)
        .map(|g| g.vmid)
        .collect();
    let storage = cluster.storage_mut(&node, &sid)?;
    let content = params.get("content")?;
    let vmid = params.int("vmid")?;
    // pve-storage Plugin.pm list_volumes: a guest volume is `rootdir` while a container owns
    // it, `images` otherwise (a VM's, or one whose owner is gone), and listed under that only
    let kind_of = |v: &crate::storage::Volume| match v.content.as_str() {
        "rootdir" if !v.vmid.is_some_and(|id| containers.contains(&id)) => "images".to_owned(),
        other => other.to_owned(),
    };
    let list: Vec<Value> = storage
        .volumes
        .values()
        .filter(|v| content.is_none_or(|c| kind_of(v) == c))
        .filter(|v| vmid.is_none_or(|id| v.vmid.map(u64::from) == Some(id)))
        .map(|v| {
            let mut entry = Storage::volume_json(v);
            entry["content"] = json!(kind_of(v));
            entry
        })
        .chain(
            storage
                .snippets_json()
                .into_iter()
                .filter(|_| vmid.is_none() && content.is_none_or(|c| c == "snippets")),
        )
        .collect();
    Ok(data(Value::Array(list)))
}

pub(crate) fn file_name_from_url(url: &str) -> String {
    url.split(['?', '#'])
        .next()
        .unwrap_or(url)
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// `GET /nodes/{node}/query-url-metadata?url=`: name from the URL, a fixed plausible size.
pub(crate) async fn query_url_metadata(
    state: SimState,
    Path(node): Path<String>,
    params: Params,
) -> ApiResult<Response> {
    state.0.cluster().node(&node)?;
    let url = params
        .get("url")?
        .ok_or_else(|| ApiError::param("url", "property is missing and it is not optional"))?;
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(ApiError::param(
            "url",
            "value does not match the regex pattern",
        ));
    }
    Ok(data(
        json!({ "filename": file_name_from_url(url), "size": 125_829_120, "mimetype": "application/octet-stream" }),
    ))
}
