//! Objects that are neither guests nor volumes (pools, the firewall): read, create, change and
//! delete by the paths their [`ObjectId`] names. Synchronous in PVE: no tasks to wait for.

use reqwest::Method;
use serde_json::Value as Json;

use super::transport::Call;
use super::{Detail, ProxmoxClient, PveError, seg};
use crate::proxmox::types::{NodeName, ObjectId, Upid};

/// Which path of an object a request goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectTarget {
    /// The object itself ([`ObjectId::path`]): its fields, or its entries' list.
    Object,
    /// Where it is created and listed ([`ObjectId::collection`]).
    Collection,
    /// One of its entries, by position or by key (percent-encoded here).
    Entry(String),
}

/// A request that changes an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectWrite {
    Post,
    Put,
    Delete,
}

fn call(id: &ObjectId, target: &ObjectTarget, method: Method) -> Result<Call, PveError> {
    let path = match target {
        ObjectTarget::Object => id.path(),
        ObjectTarget::Entry(key) => format!("{}/{}", id.path(), seg(key)),
        ObjectTarget::Collection => match id.collection() {
            Some((path, _)) => path,
            None => {
                let detail = Detail {
                    op: format!("{method} {}", id.path()),
                    message: format!("{} has no collection", id.describe()),
                };
                return Err(PveError::Validation {
                    detail,
                    errors: Default::default(),
                });
            }
        },
    };
    let node = id.scope.node().map(|n| n.as_str().to_owned());
    Ok(Call::new(method, path, node.as_deref()))
}

impl ProxmoxClient {
    /// `GET` of one of an object's paths: PVE's `data`, as JSON.
    pub async fn object_read(
        &self,
        id: &ObjectId,
        target: &ObjectTarget,
    ) -> Result<Json, PveError> {
        self.transport
            .execute(&call(id, target, Method::GET)?)
            .await
    }

    /// A change to an object, with its parameters. A `PUT` sets the same values again when
    /// repeated, so it may be retried after an unknown outcome; a `POST` or `DELETE` may not.
    pub async fn object_write(
        &self,
        id: &ObjectId,
        target: &ObjectTarget,
        write: ObjectWrite,
        params: &[(String, String)],
    ) -> Result<(), PveError> {
        let method = match write {
            ObjectWrite::Post => Method::POST,
            ObjectWrite::Put => Method::PUT,
            ObjectWrite::Delete => Method::DELETE,
        };
        let mut call = call(id, target, method)?.idempotent(write == ObjectWrite::Put);
        for (key, value) in params {
            call = call.param(key, value);
        }
        let _: Json = self.transport.execute(&call).await?;
        Ok(())
    }

    /// `PUT /nodes/{node}/network`: applies the node's pending network configuration
    /// (`/etc/network/interfaces.new`, `ifreload -a`) as a task. Not retried after an unknown
    /// outcome: the caller waits on the task it names.
    pub async fn network_reload(&self, node: &NodeName) -> Result<Upid, PveError> {
        let path = format!("/nodes/{}/network", seg(node.as_str()));
        let call = Call::new(Method::PUT, path, Some(node.as_str()));
        self.transport.execute(&call).await
    }

    /// `GET /nodes/{node}/network`: every interface (PVE shows the pending file when there is
    /// one) and, when something is pending, PVE's diff of it against the running file.
    pub async fn network_list(&self, node: &NodeName) -> Result<(Json, Option<String>), PveError> {
        let path = format!("/nodes/{}/network", seg(node.as_str()));
        let call = Call::new(Method::GET, path, Some(node.as_str()));
        let mut body = self.transport.execute_body(&call).await?;
        let changes = body
            .get("changes")
            .and_then(Json::as_str)
            .map(str::to_owned);
        Ok((body["data"].take(), changes))
    }
    /// A `POST` that creates an object, answering PVE's `data` (an API token's secret):
    /// never retried, as a second try would make another or fail.
    pub async fn object_create(
        &self,
        id: &ObjectId,
        target: &ObjectTarget,
        params: &[(String, String)],
    ) -> Result<Json, PveError> {
        let mut call = call(id, target, Method::POST)?.idempotent(false);
        for (key, value) in params {
            call = call.param(key, value);
        }
        self.transport.execute(&call).await
    }
}
