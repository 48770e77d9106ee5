//! `proxmox.ssh`: how atoll reaches each node over SSH to put snippets in a storage's
//! directory (PVE's API cannot upload them). The node's host key must be listed in the
//! known-hosts file; atoll never trusts a key on first use.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_yaml_ng::Value;

use super::tree::Reader;

/// `proxmox.ssh`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshSettings {
    /// The user atoll logs in as; it must be able to write the storages' `snippets` directories.
    pub user: String,
    /// The private key (OpenSSH format, unencrypted); read when a connection is made, never logged.
    pub private_key_file: PathBuf,
    /// OpenSSH `known_hosts` holding every node's host key.
    pub known_hosts_file: PathBuf,
    /// Node name -> `host` or `host:port` (`[v6]:port`).
    pub nodes: BTreeMap<String, String>,
    /// Seconds a connection may take to open.
    pub connect_timeout_secs: u64,
}

pub(super) fn read_ssh(r: &mut Reader<'_>) -> Option<SshSettings> {
    r.raw("proxmox.ssh")?;
    let user = r.string("proxmox.ssh.user", "root");
    let key = r.opt_string("proxmox.ssh.private_key_file");
    let known = r.opt_string("proxmox.ssh.known_hosts_file");
    let connect_timeout_secs = r.uint("proxmox.ssh.connect_timeout_secs", 10, 1, 600);
    let nodes = nodes(r);
    let file = |r: &mut Reader<'_>, path: &str, value: Option<String>| match value {
        None => {
            r.problem(path, "is required when proxmox.ssh is set");
            None
        }
        Some(f) if !std::path::Path::new(&f).is_file() => {
            r.problem(path, format!("{f} is not a readable file"));
            None
        }
        Some(f) => Some(PathBuf::from(f)),
    };
    let private_key_file = file(r, "proxmox.ssh.private_key_file", key);
    let known_hosts_file = file(r, "proxmox.ssh.known_hosts_file", known);
    if user.trim().is_empty() {
        r.problem(
            "proxmox.ssh.user",
            "is empty; name the user atoll logs in as",
        );
    }
    Some(SshSettings {
        user,
        private_key_file: private_key_file?,
        known_hosts_file: known_hosts_file?,
        nodes,
        connect_timeout_secs,
    })
}

fn nodes(r: &mut Reader<'_>) -> BTreeMap<String, String> {
    let path = "proxmox.ssh.nodes";
    let mut out = BTreeMap::new();
    match r.raw(path).cloned() {
        None => r.problem(
            path,
            "name each node's SSH address, e.g. {pve1: 192.0.2.11}",
        ),
        Some(Value::Mapping(map)) => {
            for (node, address) in map {
                match (node, address) {
                    (Value::String(node), Value::String(address)) if !address.trim().is_empty() => {
                        out.insert(node, address.trim().to_owned());
                    }
                    (node, _) => r.problem(
                        path,
                        format!("{node:?}: expected a node name mapped to an address such as 192.0.2.11 or pve1.example:22"),
                    ),
                }
            }
        }
        Some(_) => r.problem(path, "expected a mapping of node name to address"),
    }
    out
}

#[cfg(test)]
mod tests {
    fn yaml(key: &str, known: &str) -> String {
        format!(
            "proxmox:\n  endpoint: https://pve:8006/\n  api_token: a@pam!t=x\n  ssh:\n    user: atoll\n    private_key_file: {key}\n    known_hosts_file: {known}\n    nodes:\n      pve1: 192.0.2.11\n      pve2: pve2.example:2222\n"
        )
    }

    #[test]
    fn ssh_settings_name_each_nodes_address_and_both_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let key = dir.path().join("id");
        let known = dir.path().join("known_hosts");
        std::fs::write(&key, "k").expect("key");
        std::fs::write(&known, "h").expect("known");
        let yaml = yaml(&key.display().to_string(), &known.display().to_string());
        let loaded = super::super::from_sources(&yaml, []).expect("valid settings");
        let ssh = loaded
            .settings
            .proxmox
            .and_then(|p| p.ssh)
            .expect("ssh settings");
        assert_eq!(ssh.user, "atoll");
        assert_eq!(ssh.nodes["pve2"], "pve2.example:2222");
        assert_eq!(ssh.connect_timeout_secs, 10);
    }

    #[test]
    fn a_missing_known_hosts_file_is_a_problem_naming_the_key() {
        let dir = tempfile::tempdir().expect("temp dir");
        let key = dir.path().join("id");
        std::fs::write(&key, "k").expect("key");
        let yaml = yaml(&key.display().to_string(), "/nonexistent/known_hosts");
        let error = super::super::from_sources(&yaml, [])
            .map(|_| ())
            .expect_err("refused");
        let said = error.to_string();
        assert!(said.contains("proxmox.ssh.known_hosts_file"), "{said}");
    }
}
