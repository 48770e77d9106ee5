//! `/nodes/{node}/storage`, `.../content`, `download-url` (a `download` task into `vztmpl`,
//! `iso` or `import`) and `query-url-metadata`.

use axum::Extension;
use axum::extract::Path;
use axum::response::Response;
use serde_json::{Value, json};

use super::{Params, SimState, data};
use crate::pvesim::auth::Caller;
use crate::pvesim::error::{ApiError, ApiResult};
use crate::pvesim::model::now;
use crate::pvesim::storage::{Storage, Volume, check_download_filename};
use crate::pvesim::worker;

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
    let storage = cluster.storage_mut(&node, &sid)?;
    let content = params.get("content")?;
    let vmid = params.int("vmid")?;
    let list: Vec<Value> = storage
        .volumes
        .values()
        .filter(|v| {
            content.is_none_or(|c| v.content == c || (c == "images" && v.content == "rootdir"))
        })
        .filter(|v| vmid.is_none_or(|id| v.vmid.map(u64::from) == Some(id)))
        .map(Storage::volume_json)
        .collect();
    Ok(data(Value::Array(list)))
}

fn file_name_from_url(url: &str) -> String {
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

/// `POST /nodes/{node}/storage/{storage}/download-url`.
pub(crate) async fn download_url(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, sid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let missing = |k: &str| ApiError::param(k, "property is missing and it is not optional");
    let url = params.get("url")?.ok_or_else(|| missing("url"))?.to_owned();
    let content = params
        .get("content")?
        .ok_or_else(|| missing("content"))?
        .to_owned();
    let filename = params
        .get("filename")?
        .ok_or_else(|| missing("filename"))?
        .to_owned();
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(ApiError::param(
            "url",
            "value does not match the regex pattern",
        ));
    }
    if !["iso", "vztmpl", "import"].contains(&content.as_str()) {
        return Err(ApiError::param(
            "content",
            format!(
                "value '{content}' does not have a value in the enumeration 'iso, vztmpl, import'"
            ),
        ));
    }
    check_download_filename(&content, &filename).map_err(|e| ApiError::param("filename", e))?;
    if params.get("compression")?.is_some() && content != "iso" {
        return Err(ApiError::param(
            "compression",
            "decompression only supported for 'iso' content",
        ));
    }
    let checksum = match (params.get("checksum")?, params.get("checksum-algorithm")?) {
        (Some(sum), Some(algo)) => Some((sum.to_lowercase(), simulated_checksum(algo, &url)?)),
        (Some(_), None) => {
            return Err(ApiError::param(
                "checksum-algorithm",
                "missing checksum algorithm",
            ));
        }
        _ => None,
    };
    let sim = state.0;
    let upid = {
        let mut cluster = sim.cluster();
        cluster.node(&node)?;
        let storage = cluster.storage_mut(&node, &sid)?;
        if !storage.is_file_based() {
            return Err(ApiError::die(format!(
                "can't upload to storage type '{}', not a file based storage!",
                storage.stype
            )));
        }
        if !storage.content.contains(&content) {
            return Err(ApiError::die(format!(
                "storage '{sid}' is not configured for content-type '{content}'"
            )));
        }
        cluster.new_task(&node, "download", &sid, &caller.upid_user())
    };
    let volid = format!("{sid}:{content}/{filename}");
    worker::spawn(
        &sim,
        upid.clone(),
        "download",
        None,
        Box::new(move |cluster, log, fail| {
            let storage = cluster.storage_mut(&node, &sid).map_err(|e| e.message)?;
            let dir = if content == "vztmpl" {
                "template/cache"
            } else {
                "template/iso"
            };
            let path = format!("/var/lib/vz/{dir}/{filename}");
            if storage.volumes.contains_key(&volid) {
                return Err(format!("refusing to override existing file '{path}'"));
            }
            log.push(format!("downloading {url} to {path}"));
            if let Some(msg) = fail {
                return Err(msg);
            }
            let size = 125_829_120;
            if size > storage.avail() {
                return Err(format!(
                    "not enough free space ({} < {size})",
                    storage.avail()
                ));
            }
            if let Some((expected, got)) = checksum.filter(|(e, g)| e != g) {
                return Err(format!(
                    "checksum mismatch: got '{got}' != expect '{expected}'"
                ));
            }
            log.push(format!("download of '{url}' to '{path}' finished"));
            storage.volumes.insert(
                volid.clone(),
                Volume {
                    volid,
                    content,
                    size,
                    vmid: None,
                    ctime: now(),
                },
            );
            Ok(0)
        }),
    );
    Ok(data(json!(upid)))
}

/// The simulated download's content is the URL text; its checksum is what PVE would compute.
fn simulated_checksum(algo: &str, url: &str) -> ApiResult<String> {
    use sha2::Digest as _;
    Ok(match algo {
        "sha1" => hex::encode(sha1::Sha1::digest(url.as_bytes())),
        "sha224" => hex::encode(sha2::Sha224::digest(url.as_bytes())),
        "sha256" => hex::encode(sha2::Sha256::digest(url.as_bytes())),
        "sha384" => hex::encode(sha2::Sha384::digest(url.as_bytes())),
        "sha512" => hex::encode(sha2::Sha512::digest(url.as_bytes())),
        other => {
            return Err(ApiError::param(
                "checksum-algorithm",
                format!(
                    "value '{other}' does not have a value in the enumeration 'md5, sha1, sha224, sha256, sha384, sha512'"
                ),
            ));
        }
    })
}
