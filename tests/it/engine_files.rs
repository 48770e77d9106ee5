//! `proxmox_virtual_environment_file`: snippets written over SFTP through a real OpenSSH server
//! into the directory the simulator treats as the storage, files uploaded through the API,
//! and the refusals: an unknown host key, a storage without `snippets`, a source outside the
//! checkout or behind a URL. Nothing is half-applied: a refused file is neither written nor
//! recorded in state.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use crate::engine_support::{Env, options, text};
use crate::sshd_support::Sshd;

const ADDRESS: &str = "proxmox_virtual_environment_file.hook";

/// A node `pve` whose `local` storage is `storage` (with `snippets`) and whose `nosnip`
/// storage is a directory without `snippets` content.
fn scenario(storage: &Path) -> String {
    format!(
        "nodes:\n- name: pve\n  storages:\n  - {{id: local, type: dir, content: [vztmpl, iso, snippets], path: {0}}}\n  - {{id: nosnip, type: dir, content: [iso], path: {0}}}\n  - {{id: local-lvm, type: lvmthin, content: [rootdir, images]}}\n",
        storage.display()
    )
}

fn snippet(data: &str, datastore: &str) -> String {
    format!(
        "resource \"proxmox_virtual_environment_file\" \"hook\" {{\n  content_type = \"snippets\"\n  datastore_id = \"{datastore}\"\n  node_name    = \"pve\"\n  file_mode    = \"0750\"\n  source_raw {{\n    data      = \"{data}\"\n    file_name = \"hook.sh\"\n  }}\n}}\n"
    )
}

struct World {
    env: Env,
    sshd: Sshd,
    storage: tempfile::TempDir,
}

impl World {
    /// The simulator, sshd and settings; `trusted`: the known-hosts file lists sshd's key.
    async fn start(trusted: bool) -> Option<Self> {
        let sshd = Sshd::start()?;
        let storage = tempfile::tempdir().expect("storage dir");
        std::fs::create_dir_all(storage.path().join("snippets")).expect("snippets dir");
        let yaml = scenario(storage.path());
        let mut env = Env::with_scenario(&yaml, options(20)).await;
        let key = if trusted {
            sshd.host_public_key()
        } else {
            sshd.other_host_key()
        };
        let known = sshd.known_hosts(&key);
        env.write_config(&sshd.settings_yaml(&known));
        Some(Self { env, sshd, storage })
    }

    fn snippet_path(&self) -> PathBuf {
        self.storage.path().join("snippets/hook.sh")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snippet_goes_through_sshd_is_replaced_when_its_content_changes_and_is_destroyed() {
    let Some(w) = World::start(true).await else {
        return;
    };
    w.env.write_tf(&snippet("#!/bin/sh\\necho one\\n", "local"));
    let plan = w.env.plan().await;
    assert!(
        plan.contains(&format!("{ADDRESS} will be created")),
        "{plan}"
    );
    w.env.apply().await;
    let written = std::fs::read_to_string(w.snippet_path()).expect("the snippet on the node");
    assert_eq!(written, "#!/bin/sh\necho one\n");
    let mode = std::fs::metadata(w.snippet_path())
        .expect("meta")
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o750);
    let plan = w.env.plan().await;
    assert!(plan.contains("No changes."), "{plan}");

    w.env.write_tf(&snippet("#!/bin/sh\\necho two\\n", "local"));
    let plan = w.env.plan().await;
    assert!(plan.contains("must be replaced"), "{plan}");
    assert!(plan.contains("content_sha256"), "{plan}");
    w.env.apply().await;
    let written = std::fs::read_to_string(w.snippet_path()).expect("the snippet on the node");
    assert_eq!(written, "#!/bin/sh\necho two\n");
    let leftovers: Vec<_> = std::fs::read_dir(w.storage.path().join("snippets"))
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "no temporary file is left: {leftovers:?}"
    );
    assert!(w.env.plan().await.contains("No changes."));

    w.env.write_tf("");
    let plan = w.env.plan().await;
    assert!(
        plan.contains(&format!("{ADDRESS} will be destroyed")),
        "{plan}"
    );
    w.env.apply().await;
    assert!(!w.snippet_path().exists(), "the snippet is deleted");
    assert!(w.env.plan().await.contains("No changes."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_host_key_is_refused_naming_the_node_and_its_fingerprint() {
    let Some(w) = World::start(false).await else {
        return;
    };
    w.env.write_tf(&snippet("#!/bin/sh\\n", "local"));
    let out = w.env.atoll(&["apply", "--auto-approve"]).await;
    assert!(!out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("node pve"), "{said}");
    assert!(said.contains(&w.sshd.host_fingerprint()), "{said}");
    assert!(said.contains("refusing to connect"), "{said}");
    assert!(!w.snippet_path().exists(), "nothing was written");
    let plan = w.env.plan().await;
    assert!(
        plan.contains(&format!("{ADDRESS} will be created")),
        "not in state: {plan}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snippet_on_a_storage_without_snippets_content_is_refused_with_pves_error() {
    let Some(w) = World::start(true).await else {
        return;
    };
    w.env.write_tf(&snippet("#!/bin/sh\\n", "nosnip"));
    let out = w.env.atoll(&["apply", "--auto-approve"]).await;
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("storage 'nosnip' does not support 'snippets' content"),
        "{}",
        text(&out)
    );
    assert!(!w.snippet_path().exists(), "nothing was written");
    let plan = w.env.plan().await;
    assert!(plan.contains("will be created"), "not in state: {plan}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_iso_from_the_checkout_is_uploaded_through_the_api() {
    let storage = tempfile::tempdir().expect("storage dir");
    let env = Env::with_scenario(&scenario(storage.path()), options(20)).await;
    std::fs::write(env.project().join("tiny.iso"), b"CD001 not really an iso").expect("iso");
    env.write_tf("resource \"proxmox_virtual_environment_file\" \"iso\" {\n  datastore_id = \"local\"\n  node_name    = \"pve\"\n  source_file {\n    path = \"tiny.iso\"\n  }\n}\n");
    let plan = env.plan().await;
    assert!(plan.contains("will be created"), "{plan}");
    env.apply().await;
    let node = crate::engine_support::node();
    let volumes = env
        .client
        .storage_content(&node, &"local".parse().expect("storage"), Some("iso"))
        .await
        .expect("content");
    assert!(
        volumes
            .iter()
            .any(|v| v.volid == "local:iso/tiny.iso" && v.size == Some(23)),
        "{volumes:?}"
    );
    assert!(env.plan().await.contains("No changes."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_outside_the_checkout_through_a_symlink_or_a_url_is_refused() {
    let env = Env::start().await;
    let outside = env.dir.path().join("secret.txt");
    std::fs::write(&outside, "server secret").expect("outside file");
    std::os::unix::fs::symlink(&outside, env.project().join("link.sh")).expect("symlink");
    for (path, says) in [
        ("../../secret.txt", "leaves the repository checkout"),
        ("link.sh", "symbolic link"),
        ("/etc/passwd", "absolute"),
        (
            "https://example.com/hook.sh",
            "proxmox_virtual_environment_download_file",
        ),
    ] {
        env.write_tf(&format!("resource \"proxmox_virtual_environment_file\" \"f\" {{\n  content_type = \"snippets\"\n  datastore_id = \"local\"\n  node_name    = \"pve\"\n  source_file {{\n    path = \"{path}\"\n  }}\n}}\n"));
        let out = env.atoll(&["plan"]).await;
        assert!(!out.status.success(), "{path}: {}", text(&out));
        let said = text(&out);
        assert!(said.contains("Error: "), "{path}: a diagnostic: {said}");
        assert!(
            said.contains("main.tf line 6"),
            "{path}: on its line: {said}"
        );
        assert!(said.to_lowercase().contains(says), "{path}: {said}");
        assert!(!said.contains("server secret"), "{path}: {said}");
    }
}
