//! `POST /nodes/{node}/storage/{storage}/download-url`: a `download` task that adds a file to a
//! file-based storage (`vztmpl`, `iso`, `import`), with PVE's extension, storage and checksum
//! checks. The simulated file's content is its URL text, so its checksum is `sha256(url)` etc.

use axum::Extension;
use axum::extract::Path;
use axum::response::Response;
use serde_json::json;

use super::{Params, SimState, data};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::model::{Cluster, now};
use crate::storage::{Volume, check_download_filename};
use crate::worker;

/// The simulated size of every downloaded file.
const SIZE: u64 = 125_829_120;

/// `POST /nodes/{node}/storage/{storage}/download-url`.
pub(crate) async fn download_url(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, sid)): Path<(String, String)>,
    params: Params,
) -> ApiResult<Response> {
    let job = Download::from_params(node, sid, &params)?;
    let sim = state.0;
    let upid = {
        let mut cluster = sim.cluster();
        job.check_storage(&mut cluster)?;
        cluster.new_task(&job.node, "download", &job.sid, &caller.upid_user())
    };
    let body = Box::new(move |cluster: &mut Cluster, log: &mut Vec<String>, fail| {
        job.run(cluster, log, fail)
    });
    worker::spawn(&sim, upid.clone(), "download", None, body);
    Ok(data(json!(upid)))
}

struct Download {
    node: String,
    sid: String,
    url: String,
    content: String,
    filename: String,
    /// (expected, what the simulated file hashes to)
    checksum: Option<(String, String)>,
}

impl Download {
    fn from_params(node: String, sid: String, params: &Params) -> ApiResult<Self> {
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
            let msg = format!(
                "value '{content}' does not have a value in the enumeration 'iso, vztmpl, import'"
            );
            return Err(ApiError::param("content", msg));
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
        Ok(Self {
            node,
            sid,
            url,
            content,
            filename,
            checksum,
        })
    }

    /// The synchronous checks: a file-based storage configured for the content type.
    fn check_storage(&self, cluster: &mut Cluster) -> ApiResult<()> {
        cluster.node(&self.node)?;
        let storage = cluster.storage_mut(&self.node, &self.sid)?;
        if !storage.is_file_based() {
            let msg = format!(
                "can't upload to storage type '{}', not a file based storage!",
                storage.stype
            );
            return Err(ApiError::die(msg));
        }
        if !storage.content.contains(&self.content) {
            let msg = format!(
                "storage '{}' is not configured for content-type '{}'",
                self.sid, self.content
            );
            return Err(ApiError::die(msg));
        }
        Ok(())
    }

    fn run(
        self,
        cluster: &mut Cluster,
        log: &mut Vec<String>,
        fail: Option<String>,
    ) -> Result<u32, String> {
        let storage = cluster
            .storage_mut(&self.node, &self.sid)
            .map_err(|e| e.message)?;
        let dir = if self.content == "vztmpl" {
            "template/cache"
        } else {
            "template/iso"
        };
        let path = format!("/var/lib/vz/{dir}/{}", self.filename);
        let volid = format!("{}:{}/{}", self.sid, self.content, self.filename);
        if storage.volumes.contains_key(&volid) {
            return Err(format!("refusing to override existing file '{path}'"));
        }
        log.push(format!("downloading {} to {path}", self.url));
        if let Some(msg) = fail {
            return Err(msg);
        }
        if SIZE > storage.avail() {
            return Err(format!(
                "not enough free space ({} < {SIZE})",
                storage.avail()
            ));
        }
        if let Some((expected, got)) = self.checksum.filter(|(e, g)| e != g) {
            return Err(format!(
                "checksum mismatch: got '{got}' != expect '{expected}'"
            ));
        }
        log.push(format!("download of '{}' to '{path}' finished", self.url));
        let volume = Volume {
            volid: volid.clone(),
            content: self.content,
            size: SIZE,
            vmid: None,
            ctime: now(),
        };
        storage.volumes.insert(volid, volume);
        Ok(0)
    }
}

/// The checksum PVE would compute over the simulated file (its URL text).
fn simulated_checksum(algo: &str, url: &str) -> ApiResult<String> {
    use sha2::Digest as _;
    let data = url.as_bytes();
    Ok(match algo {
        "sha1" => hex::encode(sha1::Sha1::digest(data)),
        "sha224" => hex::encode(sha2::Sha224::digest(data)),
        "sha256" => hex::encode(sha2::Sha256::digest(data)),
        "sha384" => hex::encode(sha2::Sha384::digest(data)),
        "sha512" => hex::encode(sha2::Sha512::digest(data)),
        "md5" => {
            let msg = "md5 checksums are not simulated by pve-sim; use sha1, sha224, sha256, sha384 or sha512";
            return Err(ApiError::param("checksum-algorithm", msg));
        }
        other => {
            let msg = format!(
                "value '{other}' does not have a value in the enumeration 'md5, sha1, sha224, sha256, sha384, sha512'"
            );
            return Err(ApiError::param("checksum-algorithm", msg));
        }
    })
}
