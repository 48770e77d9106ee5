//! The engine's settings, and the one conversion of each from the server's settings tree
//! (`crate::config`), which `atoll serve` and `atoll plan/apply` both read.

use crate::config::{GuestSelector, ProtectSettings, ProxmoxAuth, ProxmoxSettings, SshSettings};
use crate::proxmox::client::{Auth, ClientSettings, Tls};
use crate::proxmox::guard::{GuardPolicy, ProtectSpec};
use crate::proxmox::sftp::SftpSettings;

/// The guard's settings (`protect`).
#[derive(Debug, Clone, Default)]
pub struct Protect {
    pub guests: Vec<ProtectSpec>,
    pub discover: bool,
    pub local_macs: Vec<String>,
    pub policy: GuardPolicy,
}

impl From<&ProtectSettings> for Protect {
    fn from(protect: &ProtectSettings) -> Self {
        let guests = protect
            .guests
            .iter()
            .map(|g| match g {
                GuestSelector::VmId(vm_id) => ProtectSpec::VmId(*vm_id),
                GuestSelector::Name { name, node } => ProtectSpec::Name {
                    name: name.clone(),
                    node: node.clone(),
                },
            })
            .collect();
        Self {
            guests,
            discover: protect.discover,
            local_macs: protect.local_macs.clone(),
            policy: GuardPolicy {
                allow_live_changes: protect.allow_live_changes,
            },
        }
    }
}

impl From<&SshSettings> for SftpSettings {
    fn from(ssh: &SshSettings) -> Self {
        Self {
            user: ssh.user.clone(),
            private_key_file: ssh.private_key_file.clone(),
            known_hosts_file: ssh.known_hosts_file.clone(),
            nodes: ssh.nodes.clone(),
            connect_timeout: std::time::Duration::from_secs(ssh.connect_timeout_secs),
        }
    }
}

impl From<&ProxmoxSettings> for ClientSettings {
    fn from(proxmox: &ProxmoxSettings) -> Self {
        let auth = match &proxmox.auth {
            ProxmoxAuth::ApiToken(token) => Auth::ApiToken(token.clone()),
            ProxmoxAuth::Password { username, password } => Auth::Password {
                username: username.clone(),
                password: password.clone(),
            },
        };
        let mut settings = ClientSettings::new(proxmox.endpoint.clone(), auth);
        settings.tls = match (proxmox.insecure, &proxmox.ca_file) {
            (true, _) => Tls::Insecure,
            (false, Some(ca)) => Tls::CaFile(ca.clone()),
            (false, None) => Tls::SystemRoots,
        };
        settings.proxy.clone_from(&proxmox.proxy);
        settings.tasks.lock_timeout = proxmox.lock_wait;
        settings
    }
}
