//! Files put in a storage through the API: `POST /nodes/{node}/storage/{storage}/upload`
//! (pve-storage `API2/Storage/Status.pm` `upload`: a `multipart/form-data` body whose file
//! field is `filename`; an `imgcopy` task that overwrites an existing file), the storage's
//! configuration (`GET /storage/{storage}`), and `DELETE .../content/{volume}` (an `imgdel`
//! task). Snippets cannot be uploaded, as in PVE; see [`crate::snippets`].

use axum::Extension;
use axum::body::Bytes;
use axum::extract::Path;
use axum::http::HeaderMap;
use axum::response::Response;
use serde_json::json;

use super::{SimState, data};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::model::{Cluster, now};
use crate::storage::{Volume, check_download_filename};
use crate::worker;

/// One part of a `multipart/form-data` body: field name, file name, bytes.
type Part = (String, Option<String>, Vec<u8>);

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

fn quoted(header: &str, key: &str) -> Option<String> {
    let start = header.find(&format!("{key}=\""))? + key.len() + 2;
    let end = header[start..].find('"')? + start;
    Some(header[start..end].to_owned())
}

/// Splits a multipart body; `None` when it is not one.
fn parts(headers: &HeaderMap, body: &[u8]) -> Option<Vec<Part>> {
    let content_type = headers.get("content-type")?.to_str().ok()?;
    let boundary = content_type.split("boundary=").nth(1)?.trim_matches('"');
    let delimiter = format!("--{boundary}").into_bytes();
    let mut out = Vec::new();
    let mut at = find(body, &delimiter, 0)? + delimiter.len();
    while body.get(at..at + 2) == Some(b"\r\n") {
        let head_end = find(body, b"\r\n\r\n", at)?;
        let head = String::from_utf8_lossy(&body[at + 2..head_end]).into_owned();
        let next = find(body, &[b"\r\n".as_slice(), &delimiter].concat(), head_end)?;
        let name = quoted(&head, "name")?;
        out.push((
            name,
            quoted(&head, "filename"),
            body[head_end + 4..next].to_vec(),
        ));
        at = next + 2 + delimiter.len();
    }
    Some(out)
}

struct Upload {
    node: String,
    sid: String,
    content: String,
    filename: String,
    bytes: Vec<u8>,
    checksum: Option<(String, String)>,
}

impl Upload {
    fn from_parts(node: String, sid: String, parts: Vec<Part>) -> ApiResult<Self> {
        let mut content = None;
        let mut file = None;
        let mut checksum = None;
        let mut algorithm = None;
        for (name, file_name, bytes) in parts {
            let text = || String::from_utf8_lossy(&bytes).into_owned();
            match (name.as_str(), file_name) {
                ("filename", Some(file_name)) => file = Some((file_name, bytes)),
                ("content", _) => content = Some(text()),
                ("checksum", _) => checksum = Some(text()),
                ("checksum-algorithm", _) => algorithm = Some(text()),
                (other, _) => {
                    return Err(ApiError::param(
                        other,
                        "property is not defined in schema and the schema does not allow additional properties",
                    ));
                }
            }
        }
        let content = content.ok_or_else(|| {
            ApiError::param("content", "property is missing and it is not optional")
        })?;
        if !["iso", "vztmpl", "import"].contains(&content.as_str()) {
            let msg = format!(
                "value '{content}' does not have a value in the enumeration 'iso, vztmpl, import'"
            );
            return Err(ApiError::param("content", msg));
        }
        let (filename, bytes) = file.ok_or_else(|| ApiError::die("missing temporary file name"))?;
        let checksum = match (checksum, algorithm) {
            (Some(sum), Some(algo)) => Some((sum.to_lowercase(), algo)),
            (None, None) => None,
            (Some(_), None) => {
                return Err(ApiError::param(
                    "checksum",
                    "parameter 'checksum' requires parameter 'checksum-algorithm'",
                ));
            }
            (None, Some(_)) => {
                return Err(ApiError::param(
                    "checksum-algorithm",
                    "parameter 'checksum-algorithm' requires parameter 'checksum'",
                ));
            }
        };
        Ok(Self {
            node,
            sid,
            content,
            filename,
            bytes,
            checksum,
        })
    }

    /// The synchronous checks of PVE's `upload`, in its order.
    fn check(&self, cluster: &mut Cluster) -> ApiResult<()> {
        cluster.node(&self.node)?;
        let storage = cluster.storage_mut(&self.node, &self.sid)?;
        if storage.path().is_none() {
            return Err(ApiError::die(format!(
                "can't upload to storage type '{}'",
                storage.stype
            )));
        }
        let filename_error = if self.content == "import" {
            "invalid filename or wrong extension"
        } else {
            "wrong file extension"
        };
        check_download_filename(&self.content, &self.filename)
            .map_err(|_| ApiError::param("filename", filename_error))?;
        if !storage.content.contains(&self.content) {
            return Err(ApiError::die(format!(
                "storage '{}' does not support '{}' content",
                self.sid, self.content
            )));
        }
        Ok(())
    }

    fn run(
        self,
        cluster: &mut Cluster,
        log: &mut Vec<String>,
        fail: Option<String>,
    ) -> Result<u32, String> {
        log.push("starting file import from: /var/tmp/pveupload-0123456789abcdef".to_owned());
        if let Some((expected, algo)) = &self.checksum {
            let got = digest(algo, &self.bytes)?;
            if got != *expected {
                return Err(format!(
                    "checksum mismatch: got '{got}' != expect '{expected}'"
                ));
            }
            log.push("calculating checksum...OK, checksum verified".to_owned());
        }
        if let Some(msg) = fail {
            return Err(msg);
        }
        let storage = cluster
            .storage_mut(&self.node, &self.sid)
            .map_err(|e| e.message)?;
        let volid = format!("{}:{}/{}", self.sid, self.content, self.filename);
        let size = self.bytes.len() as u64;
        let replaced = storage.volumes.get(&volid).map_or(0, |v| v.size);
        if size > storage.avail() + replaced {
            return Err(format!(
                "import failed: not enough free space ({} < {size})",
                storage.avail()
            ));
        }
        log.push(format!("target node: {}", self.node));
        log.push(format!("file size is: {size}"));
        let volume = Volume {
            volid: volid.clone(),
            content: self.content,
            size,
            vmid: None,
            ctime: now(),
        };
        storage.volumes.insert(volid, volume);
        log.push("finished file import successfully".to_owned());
        Ok(0)
    }
}

fn digest(algo: &str, bytes: &[u8]) -> Result<String, String> {
    use sha2::Digest as _;
    Ok(match algo {
        "sha1" => hex::encode(sha1::Sha1::digest(bytes)),
        "sha224" => hex::encode(sha2::Sha224::digest(bytes)),
        "sha256" => hex::encode(sha2::Sha256::digest(bytes)),
        "sha384" => hex::encode(sha2::Sha384::digest(bytes)),
        "sha512" => hex::encode(sha2::Sha512::digest(bytes)),
        other => {
            return Err(format!(
                "checksum algorithm '{other}' is not simulated by pve-sim"
            ));
        }
    })
}

/// `POST /nodes/{node}/storage/{storage}/upload`.
pub(crate) async fn upload(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, sid)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Response> {
    let parts =
        parts(&headers, &body).ok_or_else(|| ApiError::die("missing temporary file name"))?;
    let job = Upload::from_parts(node, sid, parts)?;
    let sim = state.0;
    let upid = {
        let mut cluster = sim.cluster();
        job.check(&mut cluster)?;
        cluster.new_task(&job.node, "imgcopy", "", &caller.upid_user())
    };
    let body = Box::new(move |cluster: &mut Cluster, log: &mut Vec<String>, fail| {
        job.run(cluster, log, fail)
    });
    worker::spawn(&sim, upid.clone(), "imgcopy", None, body);
    Ok(data(json!(upid)))
}

/// `GET /storage/{storage}`: the storage's configuration (the first node that has it).
pub(crate) async fn config(state: SimState, Path(sid): Path<String>) -> ApiResult<Response> {
    let cluster = state.0.cluster();
    let storage = cluster
        .storages
        .iter()
        .find(|((_, s), _)| *s == sid)
        .map(|(_, s)| s)
        .ok_or_else(|| ApiError::die(format!("storage '{sid}' does not exist")))?;
    let content: Vec<&str> = storage.content.iter().map(String::as_str).collect();
    let mut out = json!({
        "storage": storage.id, "type": storage.stype, "content": content.join(","),
        "digest": "0000000000000000000000000000000000000000",
    });
    if let Some(path) = storage.path() {
        out["path"] = json!(path);
    }
    if storage.shared {
        out["shared"] = json!(1);
    }
    Ok(data(out))
}

/// `DELETE /nodes/{node}/storage/{storage}/content/{volume}`: an `imgdel` task.
pub(crate) async fn delete(
    state: SimState,
    Extension(caller): Extension<Caller>,
    Path((node, sid, volume)): Path<(String, String, String)>,
) -> ApiResult<Response> {
    let volid = if volume.contains(':') {
        volume
    } else {
        format!("{sid}:{volume}")
    };
    let sim = state.0;
    let upid = {
        let mut cluster = sim.cluster();
        cluster.node(&node)?;
        cluster.storage_mut(&node, &sid)?;
        cluster.new_task(&node, "imgdel", &sid, &caller.upid_user())
    };
    let body = Box::new(
        move |cluster: &mut Cluster, log: &mut Vec<String>, fail: Option<String>| {
            if let Some(msg) = fail {
                return Err(msg);
            }
            let storage = cluster.storage_mut(&node, &sid).map_err(|e| e.message)?;
            let in_memory = storage.volumes.remove(&volid).is_some();
            let name = volid.split_once(":snippets/").map(|(_, n)| n);
            let on_disk = match name {
                Some(name) => storage.remove_snippet(name)?,
                None => false,
            };
            if !in_memory && !on_disk {
                return Err(format!("volume '{volid}' does not exist"));
            }
            log.push(format!("Removed volume '{volid}'"));
            Ok(0)
        },
    );
    worker::spawn(&sim, upid.clone(), "imgdel", None, body);
    Ok(data(json!(upid)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multipart_body_splits_into_its_fields_and_file() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "content-type",
            "multipart/form-data; boundary=XX".parse().expect("header"),
        );
        let body = b"--XX\r\nContent-Disposition: form-data; name=\"content\"\r\n\r\niso\r\n--XX\r\nContent-Disposition: form-data; name=\"filename\"; filename=\"a.iso\"\r\nContent-Type: application/octet-stream\r\n\r\n\r\nbin\r\n--XX--\r\n";
        let parts = parts(&headers, body).expect("a multipart body");
        assert_eq!(parts[0], ("content".to_owned(), None, b"iso".to_vec()));
        assert_eq!(
            parts[1],
            (
                "filename".to_owned(),
                Some("a.iso".to_owned()),
                b"\r\nbin".to_vec()
            )
        );
    }
}
