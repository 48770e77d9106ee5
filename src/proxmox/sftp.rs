//! Snippets over SFTP. PVE's API cannot upload `snippets` content, so atoll writes the file
//! into the storage's `snippets` directory on the node, over SSH's SFTP subsystem (russh and
//! russh-sftp: no `scp`, no shell, no argv). The node's host key must be listed in the
//! configured known-hosts file, under the node's name or its address: an unknown or changed key
//! is refused with its fingerprint, never trusted on first use. The file is written under a
//! temporary name and renamed into place, so a failed write leaves the old file whole.
//!
//! Must not: log the private key, run a command on the node, or write outside the directory
//! it was given.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use russh::keys::{HashAlg, PrivateKeyWithHashAlg, PublicKey};
use russh_sftp::client::SftpSession;
use russh_sftp::protocol::FileAttributes;
use tokio::io::AsyncWriteExt as _;

/// SSH access to the nodes (`proxmox.ssh`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SftpSettings {
    pub user: String,
    pub private_key_file: PathBuf,
    pub known_hosts_file: PathBuf,
    /// Node name -> `host` or `host:port` (`[v6]:port`).
    pub nodes: BTreeMap<String, String>,
    pub connect_timeout: Duration,
}

/// One file to put in a directory of a node.
#[derive(Debug)]
pub struct Put<'a> {
    pub node: &'a str,
    /// Absolute directory on the node (`/var/lib/vz/snippets`).
    pub dir: &'a str,
    pub file_name: &'a str,
    pub bytes: &'a [u8],
    /// Octal permissions; `None`: 0644, as PVE leaves uploaded files.
    pub mode: Option<u32>,
    /// Refuse when the file exists already (`overwrite = false`, not a replacement).
    pub refuse_existing: bool,
}

/// Why a file was not written.
#[derive(Debug, thiserror::Error)]
pub enum SftpError {
    #[error(
        "node {node} has no SSH address in the server settings; add it under proxmox.ssh.nodes"
    )]
    NoAddress { node: String },
    #[error("{0}")]
    HostKey(String),
    #[error("connecting to node {node} over SSH ({address}): {why}")]
    Connect {
        node: String,
        address: String,
        why: String,
    },
    #[error(
        "node {node} refused the SSH login of user {user} with the key in proxmox.ssh.private_key_file; authorise its public key for that user on the node"
    )]
    Login { node: String, user: String },
    #[error("reading the SSH private key (proxmox.ssh.private_key_file): {0}")]
    Key(String),
    #[error("refusing to override existing file '{path}' on node {node}")]
    Exists { node: String, path: String },
    #[error("writing {path} on node {node} over SFTP: {why}")]
    Write {
        node: String,
        path: String,
        why: String,
    },
}

/// `host:port` from a configured address (port 22 when none).
fn host_port(address: &str) -> (String, u16) {
    if let Some(rest) = address.strip_prefix('[')
        && let Some((host, tail)) = rest.split_once(']')
    {
        let port = tail.strip_prefix(':').and_then(|p| p.parse().ok());
        return (host.to_owned(), port.unwrap_or(22));
    }
    match address.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => match port.parse() {
            Ok(port) => (host.to_owned(), port),
            Err(_) => (address.to_owned(), 22),
        },
        _ => (address.to_owned(), 22),
    }
}

/// The russh handler: checks the host key against the known-hosts file.
struct Verifier {
    node: String,
    host: String,
    port: u16,
    known_hosts: PathBuf,
}

#[derive(Debug)]
enum HandlerError {
    HostKey(String),
    Ssh(russh::Error),
}

impl From<russh::Error> for HandlerError {
    fn from(e: russh::Error) -> Self {
        Self::Ssh(e)
    }
}

impl Verifier {
    /// The keys recorded for the node's address or for its name.
    fn recorded(&self) -> Result<Vec<PublicKey>, String> {
        let mut keys = Vec::new();
        for name in [self.host.as_str(), self.node.as_str()] {
            let found =
                russh::keys::known_hosts::known_host_keys_path(name, self.port, &self.known_hosts)
                    .map_err(|e| {
                        format!(
                            "reading the known-hosts file {} (proxmox.ssh.known_hosts_file): {e}",
                            self.known_hosts.display()
                        )
                    })?;
            keys.extend(found.into_iter().map(|(_, key)| key));
        }
        Ok(keys)
    }

    fn check(&self, offered: &PublicKey) -> Result<(), String> {
        let fingerprint = offered.fingerprint(HashAlg::Sha256);
        let recorded = self.recorded()?;
        if recorded.iter().any(|k| k.key_data() == offered.key_data()) {
            return Ok(());
        }
        let file = self.known_hosts.display();
        let (host, port, node) = (&self.host, self.port, &self.node);
        if recorded.is_empty() {
            return Err(format!(
                "the SSH host key of node {node} ({host}:{port}) is {fingerprint} ({}), and the known-hosts file {file} lists no key for it: refusing to connect. Check the fingerprint on the node (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub) and add the node's key to that file",
                offered.algorithm()
            ));
        }
        let listed: Vec<String> = recorded
            .iter()
            .map(|k| k.fingerprint(HashAlg::Sha256).to_string())
            .collect();
        Err(format!(
            "the SSH host key of node {node} ({host}:{port}) is {fingerprint} ({}), but the known-hosts file {file} lists {} for it: refusing to connect (the node may be impersonated). If the node's key changed on purpose, update that file",
            offered.algorithm(),
            listed.join(", ")
        ))
    }
}

impl russh::client::Handler for Verifier {
    type Error = HandlerError;

    async fn check_server_key(&mut self, key: &PublicKey) -> Result<bool, Self::Error> {
        self.check(key).map_err(HandlerError::HostKey)?;
        Ok(true)
    }
}

/// Writes `put` on its node.
pub async fn put(settings: &SftpSettings, put: &Put<'_>) -> Result<(), SftpError> {
    let sftp = open(settings, put.node).await?;
    let result = write(&sftp, put).await;
    let _ = sftp.close().await;
    result
}

async fn open(settings: &SftpSettings, node: &str) -> Result<SftpSession, SftpError> {
    let address = settings
        .nodes
        .get(node)
        .ok_or_else(|| SftpError::NoAddress {
            node: node.to_owned(),
        })?;
    let (host, port) = host_port(address);
    let connect_error = |why: String| SftpError::Connect {
        node: node.to_owned(),
        address: address.clone(),
        why,
    };
    let key = russh::keys::load_secret_key(&settings.private_key_file, None)
        .map_err(|e| SftpError::Key(e.to_string()))?;
    let verifier = Verifier {
        node: node.to_owned(),
        host: host.clone(),
        port,
        known_hosts: settings.known_hosts_file.clone(),
    };
    let config = Arc::new(russh::client::Config {
        inactivity_timeout: Some(Duration::from_secs(60)),
        ..Default::default()
    });
    let connecting = russh::client::connect(config, (host.as_str(), port), verifier);
    let mut session = match tokio::time::timeout(settings.connect_timeout, connecting).await {
        Err(_) => return Err(connect_error("timed out".to_owned())),
        Ok(Err(HandlerError::HostKey(why))) => return Err(SftpError::HostKey(why)),
        Ok(Err(HandlerError::Ssh(e))) => return Err(connect_error(e.to_string())),
        Ok(Ok(session)) => session,
    };
    let hash = session
        .best_supported_rsa_hash()
        .await
        .map_err(|e| connect_error(e.to_string()))?
        .flatten();
    let auth = session
        .authenticate_publickey(
            settings.user.clone(),
            PrivateKeyWithHashAlg::new(Arc::new(key), hash),
        )
        .await
        .map_err(|e| connect_error(e.to_string()))?;
    if !auth.success() {
        return Err(SftpError::Login {
            node: node.to_owned(),
            user: settings.user.clone(),
        });
    }
    let channel = session
        .channel_open_session()
        .await
        .map_err(|e| connect_error(e.to_string()))?;
    channel
        .request_subsystem(true, "sftp")
        .await
        .map_err(|e| connect_error(e.to_string()))?;
    SftpSession::new(channel.into_stream())
        .await
        .map_err(|e| connect_error(format!("starting SFTP: {e}")))
}

/// Writes under a temporary name, sets the mode, then renames into place.
async fn write(sftp: &SftpSession, put: &Put<'_>) -> Result<(), SftpError> {
    let dir = put.dir.trim_end_matches('/');
    let path = format!("{dir}/{}", put.file_name);
    let fail = |why: String| SftpError::Write {
        node: put.node.to_owned(),
        path: path.clone(),
        why,
    };
    let exists = sftp
        .try_exists(path.clone())
        .await
        .map_err(|e| fail(e.to_string()))?;
    if exists && put.refuse_existing {
        return Err(SftpError::Exists {
            node: put.node.to_owned(),
            path,
        });
    }
    let temp = format!(
        "{dir}/.{}.atoll-{:016x}",
        put.file_name,
        rand::random::<u64>()
    );
    let written = async {
        let mut file = sftp.create(temp.clone()).await?;
        file.write_all(put.bytes).await?;
        file.shutdown().await?;
        let mode = FileAttributes {
            permissions: Some(put.mode.unwrap_or(0o644)),
            ..FileAttributes::empty()
        };
        sftp.set_metadata(temp.clone(), mode).await?;
        if exists {
            sftp.remove_file(path.clone()).await?;
        }
        sftp.rename(temp.clone(), path.clone()).await?;
        Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
    }
    .await;
    if let Err(e) = written {
        let _ = sftp.remove_file(temp).await;
        return Err(fail(e.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::host_port;

    #[test]
    fn addresses_take_an_optional_port() {
        assert_eq!(host_port("192.0.2.11"), ("192.0.2.11".to_owned(), 22));
        assert_eq!(
            host_port("pve1.example:2222"),
            ("pve1.example".to_owned(), 2222)
        );
        assert_eq!(host_port("[fd00::2]:2200"), ("fd00::2".to_owned(), 2200));
        assert_eq!(host_port("fd00::2"), ("fd00::2".to_owned(), 22));
    }
}
