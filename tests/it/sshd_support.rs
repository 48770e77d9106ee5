//! A real OpenSSH server for the snippet tests: Debian's `sshd`, started on a loopback port
//! with a throw-away host key, a throw-away user key authorised for the current user, and
//! nothing else (no passwords, no PAM). Killed when dropped. Without `/usr/sbin/sshd` the
//! tests fail under CI (`CI` set: `deploy/install-test-deps.sh` installs `openssh-server`) and
//! are skipped elsewhere.
#![allow(dead_code, reason = "each snippet test uses part of this")]

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

const SSHD: &str = "/usr/sbin/sshd";

pub(crate) struct Sshd {
    child: Child,
    pub(crate) dir: TempDir,
    pub(crate) port: u16,
    pub(crate) user: String,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn keygen(path: &Path) {
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "atoll-test", "-f"])
        .arg(path)
        .status()
        .expect("running ssh-keygen (openssh-client)");
    assert!(status.success(), "ssh-keygen failed for {}", path.display());
}

fn current_user() -> String {
    let out = Command::new("id").arg("-un").output().expect("running id");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

impl Sshd {
    /// Starts sshd, or `None` (skip) when it is not installed and `CI` is not set.
    pub(crate) fn start() -> Option<Self> {
        if !Path::new(SSHD).exists() {
            assert!(
                std::env::var_os("CI").is_none(),
                "{SSHD} is missing: run deploy/install-test-deps.sh (openssh-server)"
            );
            eprintln!("skipping: {SSHD} is not installed (deploy/install-test-deps.sh)");
            return None;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path();
        keygen(&d.join("host_key"));
        keygen(&d.join("id_ed25519"));
        std::fs::copy(d.join("id_ed25519.pub"), d.join("authorized_keys")).expect("authorize");
        // sshd started as root wants its privilege separation directory
        let _ = std::fs::create_dir_all("/run/sshd");
        let user = current_user();
        let port = free_port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {host}\nPidFile {pid}\n\
             AuthorizedKeysFile {keys}\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin prohibit-password\n\
             AllowUsers {user}\nSubsystem sftp internal-sftp\nLogLevel ERROR\n",
            host = d.join("host_key").display(),
            pid = d.join("sshd.pid").display(),
            keys = d.join("authorized_keys").display(),
        );
        std::fs::write(d.join("sshd_config"), config).expect("sshd_config");
        let child = Command::new(SSHD)
            .arg("-f")
            .arg(d.join("sshd_config"))
            .args(["-D", "-E"])
            .arg(d.join("sshd.log"))
            .stdin(Stdio::null())
            .spawn()
            .expect("starting sshd");
        let sshd = Self {
            child,
            dir,
            port,
            user,
        };
        sshd.wait_listening();
        Some(sshd)
    }

    fn wait_listening(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "sshd did not listen on port {}",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub(crate) fn private_key(&self) -> PathBuf {
        self.dir.path().join("id_ed25519")
    }

    /// The host key's public line (`ssh-ed25519 AAAA... atoll-test`).
    pub(crate) fn host_public_key(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("host_key.pub"))
            .expect("host key")
            .trim()
            .to_owned()
    }

    /// The host key's `SHA256:...` fingerprint, as `ssh-keygen -l` prints it.
    pub(crate) fn host_fingerprint(&self) -> String {
        let out = Command::new("ssh-keygen")
            .arg("-lf")
            .arg(self.dir.path().join("host_key.pub"))
            .output()
            .expect("ssh-keygen -l");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.split_whitespace()
            .nth(1)
            .expect("a fingerprint")
            .to_owned()
    }

    /// Writes a known-hosts file holding `line` for this server's address; returns its path.
    pub(crate) fn known_hosts(&self, key_line: &str) -> PathBuf {
        let path = self.dir.path().join("known_hosts");
        std::fs::write(&path, format!("[127.0.0.1]:{} {key_line}\n", self.port))
            .expect("known_hosts");
        path
    }

    /// A key line of another host (a different key than this server's).
    pub(crate) fn other_host_key(&self) -> String {
        let path = self.dir.path().join("other_host_key");
        keygen(&path);
        std::fs::read_to_string(path.with_extension("pub"))
            .expect("other host key")
            .trim()
            .to_owned()
    }

    /// The `proxmox.ssh` settings for node `pve` reaching this server.
    pub(crate) fn settings_yaml(&self, known_hosts: &Path) -> String {
        format!(
            "proxmox:\n  ssh:\n    user: {}\n    private_key_file: {}\n    known_hosts_file: {}\n    nodes:\n      pve: 127.0.0.1:{}\nprotect:\n  discover: false\n",
            self.user,
            self.private_key().display(),
            known_hosts.display(),
            self.port
        )
    }
}
