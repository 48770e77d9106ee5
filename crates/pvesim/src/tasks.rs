//! Worker tasks: UPIDs in PVE's format, status (`running` → `stopped` with an exit status) and
//! the task log (`{n, t}` lines ending in `TASK OK` or `TASK ERROR: ...`).

use serde_json::{Value, json};

/// `UPID:<node>:<pid>:<pstart>:<starttime>:<type>:<id>:<user>:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Upid {
    pub(crate) node: String,
    pub(crate) pid: u32,
    pub(crate) pstart: u64,
    pub(crate) starttime: u64,
    pub(crate) kind: String,
    pub(crate) id: String,
    pub(crate) user: String,
}

impl Upid {
    pub(crate) fn render(&self) -> String {
        format!(
            "UPID:{}:{:08X}:{:08X}:{:08X}:{}:{}:{}:",
            self.node, self.pid, self.pstart, self.starttime, self.kind, self.id, self.user
        )
    }

    /// Parses a UPID (as `PVE::Tools::upid_decode` does).
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let rest = text.strip_prefix("UPID:")?.strip_suffix(':')?;
        let parts: Vec<&str> = rest.splitn(7, ':').collect();
        let [node, pid, pstart, starttime, kind, id, user] = parts.as_slice() else {
            return None;
        };
        let hex = |s: &str, max: usize| {
            if s.len() >= 8 && s.len() <= max {
                u64::from_str_radix(s, 16).ok()
            } else {
                None
            }
        };
        Some(Self {
            node: (*node).to_owned(),
            pid: u32::try_from(hex(pid, 8)?).ok()?,
            pstart: hex(pstart, 9)?,
            starttime: hex(starttime, 8)?,
            kind: (*kind).to_owned(),
            id: (*id).to_owned(),
            user: (*user).to_owned(),
        })
    }
}

/// How a task ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Exit {
    Ok,
    Warnings(u32),
    Error(String),
}

/// One task and its log.
#[derive(Debug, Clone)]
pub(crate) struct Task {
    pub(crate) upid: Upid,
    pub(crate) log: Vec<String>,
    pub(crate) exit: Option<Exit>,
    /// When it ended (seconds since the epoch): the task index's `endtime`.
    pub(crate) endtime: Option<u64>,
    /// Before this instant the task index does not list it yet ("no such task").
    pub(crate) visible_at: std::time::Instant,
}

impl Task {
    pub(crate) fn new(upid: Upid) -> Self {
        Self {
            upid,
            log: Vec::new(),
            exit: None,
            endtime: None,
            visible_at: std::time::Instant::now(),
        }
    }

    /// Ends the task; the final log line follows PVE's worker.
    pub(crate) fn finish(&mut self, exit: Exit) {
        let last = match &exit {
            Exit::Ok => "TASK OK".to_owned(),
            Exit::Warnings(n) => format!("TASK WARNINGS: {n}"),
            Exit::Error(msg) => format!("TASK ERROR: {msg}"),
        };
        self.log.push(last);
        self.exit = Some(exit);
        self.endtime = Some(crate::model::now().max(self.upid.starttime));
    }

    /// `GET tasks/{upid}/status`.
    pub(crate) fn status_json(&self) -> Value {
        let u = &self.upid;
        let mut v = json!({
            "upid": u.render(), "node": u.node, "pid": u.pid, "pstart": u.pstart, "starttime": u.starttime,
            "type": u.kind, "id": u.id,
            "status": if self.exit.is_some() { "stopped" } else { "running" },
        });
        match u.user.split_once('!') {
            Some((user, token)) => {
                v["user"] = json!(user);
                v["tokenid"] = json!(token);
            }
            None => v["user"] = json!(u.user),
        }
        if let Some(exit) = &self.exit {
            v["exitstatus"] = json!(match exit {
                Exit::Ok => "OK".to_owned(),
                Exit::Warnings(n) => format!("WARNINGS: {n}"),
                Exit::Error(msg) => msg.clone(),
            });
        }
        v
    }

    /// One row of `GET /nodes/{node}/tasks` (pve-manager `PVE/API2/Tasks.pm` `node_tasks`):
    /// an ended task is a row of the task index, with `endtime` and its exit `status`; a
    /// running one comes from the active-workers file as `PVE::INotify::read_active_workers`
    /// reads it (`saved` "0", the user as the UPID names it) with `status` `RUNNING`.
    pub(crate) fn list_json(&self) -> Value {
        let u = &self.upid;
        let mut v = json!({
            "upid": u.render(), "node": u.node, "pid": u.pid, "pstart": u.pstart,
            "starttime": u.starttime, "type": u.kind, "id": u.id, "user": u.user,
        });
        if let Some(exit) = &self.exit {
            v["status"] = json!(match exit {
                Exit::Ok => "OK".to_owned(),
                Exit::Warnings(n) => format!("WARNINGS: {n}"),
                Exit::Error(msg) => msg.clone(),
            });
        }
        if let Some(end) = self.endtime {
            v["endtime"] = json!(end);
            // an archived row goes through `$convert_token_task`: user and token apart
            if let Some((user, token)) = u.user.split_once('!') {
                v["user"] = json!(user);
                v["tokenid"] = json!(token);
            }
        } else {
            v["status"] = json!("RUNNING");
            v["saved"] = json!("0");
        }
        v
    }

    /// `GET tasks/{upid}/log` with `start` and `limit`.
    pub(crate) fn log_json(&self, start: usize, limit: usize) -> Value {
        let lines: Vec<Value> = self
            .log
            .iter()
            .enumerate()
            .skip(start)
            .take(limit)
            .map(|(i, t)| json!({ "n": i + 1, "t": t }))
            .collect();
        Value::Array(lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upid() -> Upid {
        Upid {
            node: "pve1".to_owned(),
            pid: 0xA1B2,
            pstart: 0x12C3D4,
            starttime: 0x66F0_A2B1,
            kind: "vzcreate".to_owned(),
            id: "123".to_owned(),
            user: "root@pam!atlantis".to_owned(),
        }
    }

    #[test]
    fn upid_renders_like_pve() {
        assert_eq!(
            upid().render(),
            "UPID:pve1:0000A1B2:0012C3D4:66F0A2B1:vzcreate:123:root@pam!atlantis:"
        );
    }

    #[test]
    fn upid_round_trips() {
        assert_eq!(Upid::parse(&upid().render()), Some(upid()));
        assert_eq!(Upid::parse("UPID:bad"), None);
    }

    #[test]
    fn status_splits_token_from_user() {
        let t = Task::new(upid());
        let s = t.status_json();
        assert_eq!(
            (
                s["user"].as_str(),
                s["tokenid"].as_str(),
                s["status"].as_str()
            ),
            (Some("root@pam"), Some("atlantis"), Some("running"))
        );
    }

    #[test]
    fn task_list_row_is_running_until_the_task_ends_then_archived() {
        let mut t = Task::new(upid());
        let row = t.list_json();
        assert_eq!(
            (
                row["status"].as_str(),
                row["saved"].as_str(),
                row["user"].as_str()
            ),
            (Some("RUNNING"), Some("0"), Some("root@pam!atlantis"))
        );
        assert!(row.get("endtime").is_none());
        t.finish(Exit::Ok);
        let row = t.list_json();
        assert_eq!(
            (
                row["status"].as_str(),
                row["user"].as_str(),
                row["tokenid"].as_str()
            ),
            (Some("OK"), Some("root@pam"), Some("atlantis"))
        );
        assert!(row["endtime"].as_u64().is_some() && row.get("saved").is_none());
    }

    #[test]
    fn failed_task_ends_log_with_task_error() {
        let mut t = Task::new(upid());
        t.finish(Exit::Error("boom".to_owned()));
        assert_eq!(t.log.last().map(String::as_str), Some("TASK ERROR: boom"));
        assert_eq!(t.status_json()["exitstatus"], "boom");
    }
}
