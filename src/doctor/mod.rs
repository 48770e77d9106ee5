//! `atoll doctor`: checks, against the configured Proxmox VE endpoint, what a new user gets
//! wrong first, in the order it goes wrong: reaching the endpoint (DNS, refused, timeout, TLS),
//! logging in (token or ticket), the Proxmox VE version, the privileges atoll needs on each
//! path (`GET /access/permissions`), and which guest atoll runs on (discovery by MAC). Each
//! check is one [`Line`], a failure carries its fix. It only reads; it must not change anything
//! on the cluster, and it never shows a secret. The text is `cli`'s to print.

mod explain;
pub mod privileges;

use std::collections::BTreeMap;

pub use explain::Failure;

use crate::proxmox::client::{ClientSettings, ProxmoxApi, ProxmoxClient, Tls};
use crate::proxmox::discover::NoMatch;
use crate::proxmox::engine::{self, Protect};
use privileges::{Missing, Targets};

/// What one check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Ok(String),
    /// Holds, with something worth knowing; does not fail the run.
    Warn(String),
    Fail(Failure),
    /// Not checked, and why.
    Skipped(String),
}

/// One check and its verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// `reach`, `login`, `version`, `privileges`, `discovery`, `config`.
    pub check: &'static str,
    pub verdict: Verdict,
}

/// Every check's line, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub lines: Vec<Line>,
}

impl Report {
    /// Whether everything holds (no failure).
    pub fn healthy(&self) -> bool {
        !self
            .lines
            .iter()
            .any(|l| matches!(l.verdict, Verdict::Fail(_)))
    }

    /// The one line of a run that could not read its settings.
    pub fn from_config_error(error: String) -> Self {
        let mut report = Self::default();
        let fix = "fix the settings (atoll check-config --config FILE lists every problem)";
        report.fail("config", Failure::new(error, fix));
        report
    }

    fn push(&mut self, check: &'static str, verdict: Verdict) {
        self.lines.push(Line { check, verdict });
    }

    fn fail(&mut self, check: &'static str, failure: Failure) {
        self.push(check, Verdict::Fail(failure));
    }
}

/// Runs every check that can run: one that fails stops those that depend on it.
pub async fn run(proxmox: Option<&ClientSettings>, protect: &Protect) -> Report {
    let mut report = Report::default();
    let Some(settings) = proxmox else {
        report.fail(
            "config",
            Failure::new(
                "no Proxmox VE endpoint configured",
                "set proxmox.endpoint and proxmox.api_token in the config, or \
                 PROXMOX_VE_ENDPOINT and PROXMOX_VE_API_TOKEN",
            ),
        );
        return report;
    };
    let mut settings = settings.clone();
    // one try each: a doctor reports what happens, it does not wait it out
    settings.retry.attempts = 1;
    let client = match ProxmoxClient::new(&settings) {
        Ok(client) => client,
        Err(e) => {
            report.fail("config", explain::unreachable(&settings.endpoint, &e));
            return report;
        }
    };
    if reach(&mut report, &client, &settings).await && login(&mut report, &client).await {
        check_privileges(&mut report, &client).await;
        discovery(&mut report, &client, protect).await;
    }
    report
}

/// Step "reach": a request without credentials proves the endpoint answers over trusted TLS.
async fn reach(report: &mut Report, client: &ProxmoxClient, settings: &ClientSettings) -> bool {
    let endpoint = settings.endpoint.trim_end_matches('/');
    if let Err(e) = client.reach().await {
        report.fail("reach", explain::unreachable(endpoint, &e));
        return false;
    }
    let verdict = match &settings.tls {
        _ if endpoint.starts_with("http://") => Verdict::Warn(format!(
            "{endpoint} answers over plain http://: the token and every answer travel \
             unencrypted; use https://"
        )),
        Tls::SystemRoots => Verdict::Ok(format!(
            "{endpoint} answers; its certificate verifies against the system's CAs"
        )),
        Tls::CaFile(path) => Verdict::Ok(format!(
            "{endpoint} answers; its certificate verifies against {}",
            path.display()
        )),
        Tls::Insecure => Verdict::Warn(format!(
            "{endpoint} answers, but its certificate is not verified (proxmox.insecure); \
             prefer proxmox.ca_file = <PEM of the PVE CA>"
        )),
    };
    report.push("reach", verdict);
    true
}

/// Steps "login" and "version": `GET /version` with the credentials.
async fn login(report: &mut Report, client: &ProxmoxClient) -> bool {
    let who = client.caller().unwrap_or_default();
    let token = who.contains('!');
    let how = if token { "API token" } else { "ticket login" };
    match client.version().await {
        Err(e) => {
            report.fail("login", explain::refused_login(&who, token, &e));
            false
        }
        Ok(version) => {
            report.push("login", Verdict::Ok(format!("{how} as {who} accepted")));
            let verdict = match explain::version(&version.version) {
                Ok(None) => Verdict::Ok(format!(
                    "Proxmox VE {} (atoll supports 8.x and 9.x)",
                    version.version
                )),
                Ok(Some(note)) => Verdict::Warn(note),
                Err(failure) => Verdict::Fail(failure),
            };
            report.push("version", verdict);
            true
        }
    }
}

/// The nodes, storages and bridges the privileges are checked on.
async fn targets(client: &ProxmoxClient) -> Result<Targets, crate::proxmox::PveError> {
    let mut targets = Targets::default();
    for node in client.nodes().await? {
        let name = node.node.to_string();
        if node.status.as_deref() != Some("offline") {
            for storage in client.storages(&node.node).await.unwrap_or_default() {
                targets.storages.push(storage.storage.to_string());
            }
            targets
                .bridges
                .extend(client.bridges(&name).await.unwrap_or_default());
        }
        targets.nodes.push(name);
    }
    for list in [&mut targets.storages, &mut targets.bridges] {
        list.sort();
        list.dedup();
    }
    Ok(targets)
}

/// Step "privileges": every privilege atoll needs, asked path by path.
async fn check_privileges(report: &mut Report, client: &ProxmoxClient) {
    let listed = match targets(client).await {
        Ok(t) => t,
        Err(e) => {
            let failure = Failure::new(
                format!("listing the cluster's nodes failed: {e}"),
                "grant Sys.Audit on / (role PVEAuditor) to atoll's user or token",
            );
            report.fail("privileges", failure);
            return;
        }
    };
    let paths = listed.paths();
    let mut held = BTreeMap::new();
    for (_, path) in &paths {
        match client.permissions(path).await {
            Ok(privs) => {
                held.insert(path.clone(), privs.into_keys().collect::<Vec<_>>());
            }
            Err(e) => {
                let failure = Failure::new(
                    format!("reading the privileges on {path} failed: {e}"),
                    "check that the endpoint is Proxmox VE 8 or 9 (GET /access/permissions)",
                );
                report.fail("privileges", failure);
                return;
            }
        }
    }
    let gaps = privileges::missing(&paths, &held);
    let who = client.caller().unwrap_or_default();
    for gap in &gaps {
        let verdict = if gap.required {
            Verdict::Fail(Failure::new(
                format!(
                    "missing {} on {} (needed {})",
                    gap.privilege, gap.path, gap.why
                ),
                grant_fix(&who, gap, &gaps),
            ))
        } else {
            Verdict::Warn(format!(
                "missing {} on {} ({})",
                gap.privilege, gap.path, gap.why
            ))
        };
        report.push("privileges", verdict);
    }
    if !gaps.iter().any(|g| g.required) {
        report.push(
            "privileges",
            Verdict::Ok(format!(
                "everything atoll needs is granted on {} paths (/, /vms, and the nodes, \
                 storages and bridges Proxmox VE lets it see)",
                paths.len()
            )),
        );
    }
}

/// `pveum acl modify PATH --tokens ID --roles ROLE`, with the smallest built-in role holding
/// every privilege missing on that path.
fn grant_fix(who: &str, gap: &Missing, all: &[Missing]) -> String {
    let here: Vec<&str> = all
        .iter()
        .filter(|g| g.path == gap.path && g.required)
        .map(|g| g.privilege)
        .collect();
    let role = privileges::role_for(&here).unwrap_or_else(|| "a role holding it".to_owned());
    if who.contains('!') {
        format!(
            "pveum acl modify {} --tokens '{who}' --roles {role} (a token with privilege \
             separation holds only its own ACL entries, within its user's: grant it to the \
             token, and to the user if the user lacks it)",
            gap.path
        )
    } else {
        format!(
            "pveum acl modify {} --users '{who}' --roles {role}",
            gap.path
        )
    }
}

/// Step "discovery": the guest atoll runs on, found by MAC, or why not.
async fn discovery(report: &mut Report, client: &ProxmoxClient, protect: &Protect) {
    if !protect.discover {
        let why = "protect.discover is false: only protect.guests are protected";
        report.push("discovery", Verdict::Skipped(why.to_owned()));
        return;
    }
    let pin = "pin atoll's guest with protect.guests: [{vm_id: N}], or set protect.local_macs";
    let verdict = match engine::discover(client as &dyn ProxmoxApi, protect).await {
        Ok(Ok(found)) => {
            let name = found.name.map(|n| format!(" ({n})")).unwrap_or_default();
            Verdict::Ok(format!(
                "atoll runs in {} {}{name} on node {}: it is protected from its own plans",
                found.kind, found.vmid, found.node
            ))
        }
        Ok(Err(why @ NoMatch::NoGuest { .. })) => Verdict::Warn(why.to_string()),
        Ok(Err(why)) => Verdict::Fail(Failure::new(why.to_string(), pin)),
        Err(e) => Verdict::Fail(Failure::new(format!("discovery failed: {e}"), pin)),
    };
    report.push("discovery", verdict);
}
