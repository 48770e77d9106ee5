//! Errors of the Proxmox VE client, classified by what the caller can do about them, and the
//! pure classification of a PVE error response (status, status-line reason, body).

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use crate::proxmox::types::{GuestKind, NodeName, VmId};

/// What was being done and what PVE (or the transport) said. Never holds a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detail {
    /// `GET /nodes/pve/lxc/100/config` style; no query string, no body.
    pub op: String,
    pub message: String,
}

impl fmt::Display for Detail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.op, self.message)
    }
}

/// Why a request conflicted with the guest's or cluster's current state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConflictKind {
    /// `CT 100 is locked (create)`.
    Locked,
    /// `CT 100 already exists on node 'pve'` / `VM 100 already exists`.
    AlreadyExists,
    /// `detected modified configuration - file changed by other user? Try again.` (pve-container),
    /// `checksum mismatch (file change by other user?)` (qemu-server's
    /// `PVE::Tools::assert_if_modified`).
    DigestMismatch,
    /// `CT 100 already running` / `CT 100 not running`.
    PowerState,
    /// `protection mode enabled`.
    Protected,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PveError {
    #[error("{0} (check the API token or username/password atoll uses for Proxmox VE)")]
    Unauthorized(Detail),
    #[error("{0} (grant the missing privilege to atoll's Proxmox VE user or token)")]
    Forbidden(Detail),
    #[error("{0}")]
    NotFound(Detail),
    #[error("{detail}")]
    Conflict { kind: ConflictKind, detail: Detail },
    #[error("{detail}{}", format_errors(.errors))]
    Validation {
        detail: Detail,
        errors: BTreeMap<String, String>,
    },
    /// Worth retrying later. `maybe_applied` is true when the request may have reached PVE and
    /// taken effect (a reset or 5xx after sending), false when it certainly did not (connection
    /// refused, `got timeout` on a lock, 595 from the proxy).
    #[error("{detail} (temporary; try again)")]
    Transient { detail: Detail, maybe_applied: bool },
    /// PVE refused the request for a reason not listed above (a plain `die` in a handler).
    #[error("{detail} (HTTP {status})")]
    Rejected { status: u16, detail: Detail },
    /// A task ran and failed.
    #[error("task {upid} failed: {exitstatus}{}", format_tail(.log_tail))]
    Task {
        upid: String,
        exitstatus: String,
        log_tail: Vec<String>,
    },
    /// A task was still running when atoll stopped waiting; it was not cancelled.
    #[error(
        "task {upid} still running after {waited:?}; it was left running, check it in the Proxmox VE task log"
    )]
    TaskTimeout { upid: String, waited: Duration },
    /// A guest stayed locked (a task still holds it) for as long as atoll waits.
    #[error("{}", locked_text(*.kind, *.vmid, .node, .lock, .holder.as_deref(), *.waited))]
    Locked {
        kind: GuestKind,
        vmid: VmId,
        node: NodeName,
        lock: String,
        /// The UPID of the running task holding it, if one was found.
        holder: Option<String>,
        waited: Duration,
    },
    /// The response could not be understood.
    #[error("{0} (unexpected response from Proxmox VE)")]
    Protocol(Detail),
    /// The client settings are unusable.
    #[error("proxmox client settings: {0}")]
    Settings(String),
}

fn format_errors(errors: &BTreeMap<String, String>) -> String {
    errors
        .iter()
        .map(|(k, v)| format!("; {k}: {}", v.trim_end()))
        .collect()
}

fn locked_text(
    kind: GuestKind,
    vmid: VmId,
    node: &NodeName,
    lock: &str,
    holder: Option<&str>,
    waited: Duration,
) -> String {
    let (word, tool) = match kind {
        GuestKind::Lxc => ("CT", "pct"),
        GuestKind::Qemu => ("VM", "qm"),
    };
    let why = match holder {
        Some(upid) => format!(
            "task {upid} holds it; wait for that task to end (see the Proxmox VE task log), then try again"
        ),
        None => format!(
            "no running task holds it, so the lock is stale (its task or node died); once nothing works on the guest, clear it with `{tool} unlock {vmid}` on node {node}, then try again"
        ),
    };
    format!(
        "{word} {vmid} on node {node} is still locked ({lock}) after {}s: {why}; raise proxmox.lock_wait_secs to wait longer",
        waited.as_secs()
    )
}

fn format_tail(tail: &[String]) -> String {
    if tail.is_empty() {
        String::new()
    } else {
        format!("\n  {}", tail.join("\n  "))
    }
}

impl PveError {
    /// Whether repeating the same request later might succeed.
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Transient { .. })
    }

    /// Transient and certainly not applied: safe to repeat even a non-idempotent request.
    pub(crate) fn is_retry_safe_for_writes(&self) -> bool {
        matches!(
            self,
            Self::Transient {
                maybe_applied: false,
                ..
            }
        )
    }
}

/// Turns a PVE error response into a `PveError`. `reason` is the status line's reason phrase
/// (older PVE puts the only message there); `body` the raw response body.
pub(crate) fn classify(op: &str, status: u16, reason: Option<&str>, body: &[u8]) -> PveError {
    let json: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let body_message = json
        .as_ref()
        .and_then(|j| j.get("message"))
        .and_then(|m| m.as_str())
        .map(|m| m.trim().to_owned())
        .filter(|m| !m.is_empty());
    let message = body_message
        .or_else(|| {
            reason
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| format!("HTTP {status}"));
    let errors: BTreeMap<String, String> = json
        .as_ref()
        .and_then(|j| j.get("errors"))
        .and_then(|e| e.as_object())
        .map(|o| {
            o.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_owned),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let detail = Detail {
        op: op.to_owned(),
        message,
    };
    classify_detail(status, detail, errors)
}

fn classify_detail(status: u16, detail: Detail, errors: BTreeMap<String, String>) -> PveError {
    let m = detail.message.to_ascii_lowercase();
    let conflict = |kind| PveError::Conflict {
        kind,
        detail: detail.clone(),
    };
    match status {
        401 => PveError::Unauthorized(detail),
        403 => PveError::Forbidden(detail),
        404 => PveError::NotFound(detail),
        595 => PveError::Transient {
            detail,
            maybe_applied: false,
        },
        502..=504 | 596 => PveError::Transient {
            detail,
            maybe_applied: true,
        },
        _ if m.contains("got timeout") => PveError::Transient {
            detail,
            maybe_applied: false,
        },
        _ if m.contains("got no worker upid") => PveError::Transient {
            detail,
            maybe_applied: true,
        },
        _ if m.contains("is locked") => conflict(ConflictKind::Locked),
        _ if m.contains("already exists") => conflict(ConflictKind::AlreadyExists),
        _ if m.contains("detected modified configuration") || m.contains("checksum mismatch") => {
            conflict(ConflictKind::DigestMismatch)
        }
        _ if m.contains("already running") || m.ends_with("not running") => {
            conflict(ConflictKind::PowerState)
        }
        _ if m.contains("protection mode enabled") => conflict(ConflictKind::Protected),
        400 if errors.values().any(|v| v.contains("already exists")) => {
            conflict(ConflictKind::AlreadyExists)
        }
        400 => PveError::Validation { detail, errors },
        500 if m.contains("does not exist") || m.contains("no such") => PveError::NotFound(detail),
        // pveproxy cannot route to a node name the cluster does not know.
        500 if m.starts_with("hostname lookup") => PveError::NotFound(detail),
        _ => PveError::Rejected { status, detail },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op() -> &'static str {
        "PUT /nodes/pve/lxc/100/config"
    }

    #[test]
    fn legacy_body_takes_message_from_status_line() {
        let e = classify(op(), 500, Some("CT is locked (disk)"), br#"{"data":null}"#);
        assert!(
            matches!(
                e,
                PveError::Conflict {
                    kind: ConflictKind::Locked,
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "PUT /nodes/pve/lxc/100/config: CT is locked (disk)"
        );
    }

    #[test]
    fn a_vms_digest_mismatch_is_a_conflict_too() {
        let body = br#"{"data":null}"#;
        let status = "checksum mismatch (file change by other user?)";
        let e = classify(op(), 500, Some(status), body);
        assert!(matches!(
            e,
            PveError::Conflict {
                kind: ConflictKind::DigestMismatch,
                ..
            }
        ));
    }

    #[test]
    fn newer_body_message_wins_over_status_line() {
        let body = br#"{"data":null,"message":"detected modified configuration - file changed by other user? Try again.\n"}"#;
        let e = classify(op(), 500, Some("detected modified configuration"), body);
        assert!(matches!(
            e,
            PveError::Conflict {
                kind: ConflictKind::DigestMismatch,
                ..
            }
        ));
        assert!(e.to_string().ends_with("Try again."), "{e}");
    }

    #[test]
    fn parameter_errors_become_validation_with_per_key_messages() {
        let body = br#"{"data":null,"errors":{"memory":"value must have a minimum value of 16"},"message":"Parameter verification failed.\n"}"#;
        let e = classify(op(), 400, Some("Parameter verification failed."), body);
        let PveError::Validation { errors, .. } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(errors["memory"], "value must have a minimum value of 16");
        assert!(
            e.to_string()
                .contains("memory: value must have a minimum value of 16")
        );
    }

    #[test]
    fn lock_timeouts_and_proxy_errors_are_transient() {
        let e = classify(
            op(),
            500,
            Some("can't lock file '/run/lock/lxc/pve-config-100.lock' - got timeout"),
            b"",
        );
        assert!(e.is_retry_safe_for_writes());
        assert!(classify(op(), 595, Some("Connection refused"), b"").is_retry_safe_for_writes());
        let e = classify(op(), 596, Some("Connection timed out"), b"");
        assert!(e.is_transient() && !e.is_retry_safe_for_writes());
        assert!(classify(op(), 503, None, b"").is_transient());
    }

    #[test]
    fn status_codes_map_to_caller_actions() {
        assert!(matches!(
            classify(op(), 401, Some("No ticket"), b""),
            PveError::Unauthorized(_)
        ));
        assert!(matches!(
            classify(op(), 403, Some("Permission check failed"), b""),
            PveError::Forbidden(_)
        ));
        let gone = classify(
            op(),
            500,
            Some("Configuration file 'nodes/pve/lxc/100.conf' does not exist"),
            b"",
        );
        assert!(matches!(gone, PveError::NotFound(_)));
        let exists = classify(op(), 500, Some("CT 100 already exists on node 'pve'"), b"");
        assert!(matches!(
            exists,
            PveError::Conflict {
                kind: ConflictKind::AlreadyExists,
                ..
            }
        ));
        let nextid = classify(
            op(),
            400,
            None,
            br#"{"data":null,"errors":{"vmid":"VM 123 already exists"}}"#,
        );
        assert!(matches!(
            nextid,
            PveError::Conflict {
                kind: ConflictKind::AlreadyExists,
                ..
            }
        ));
        let running = classify(op(), 500, Some("CT 100 already running"), b"");
        assert!(matches!(
            running,
            PveError::Conflict {
                kind: ConflictKind::PowerState,
                ..
            }
        ));
        let node = "hostname lookup 'pve9' failed - failed to get address info for: pve9: Name or service not known";
        assert!(matches!(
            classify(op(), 500, Some(node), b""),
            PveError::NotFound(_)
        ));
        let plain = classify(op(), 500, Some("no options specified"), b"");
        assert!(matches!(plain, PveError::Rejected { status: 500, .. }));
        assert!(!plain.is_transient());
    }
}
