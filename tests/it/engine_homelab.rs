//! A repository laid out like a real homelab (tests/fixtures/homelab: containers and a VM in
//! modules, a container template and cloud-init user data uploaded from the repository, the
//! guests' firewall options and rules, a pool, two bridges, a security group, and data
//! sources for the node and its datastores): one apply makes all of it on the simulator, with
//! the snippet written through a real sshd, and the next plan is "No changes.".

use std::path::Path;

use crate::engine_support::{Env, options, sim_get, stdout, text};
use crate::sshd_support::Sshd;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/homelab");

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("project dir");
    for entry in std::fs::read_dir(from).expect("fixture dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_homelab_repository_applies_in_one_go_and_the_next_plan_is_empty() {
    let Some(sshd) = Sshd::start() else {
        return;
    };
    let storage = tempfile::tempdir().expect("storage dir");
    std::fs::create_dir_all(storage.path().join("snippets")).expect("snippets dir");
    let scenario = format!(
        "nodes:\n- name: pve\n  storages:\n  - {{id: local, type: dir, content: [vztmpl, iso, snippets, import], path: {}}}\n  - {{id: local-lvm, type: lvmthin, content: [rootdir, images], total: 2T}}\n",
        storage.path().display()
    );
    let mut env = Env::with_scenario(&scenario, options(20)).await;
    let known = sshd.known_hosts(&sshd.host_public_key());
    env.write_config(&sshd.settings_yaml(&known));
    copy_tree(Path::new(FIXTURE), &env.project());

    let plan = env.plan().await;
    assert!(
        plan.contains("Plan: 14 to add, 0 to change, 0 to destroy."),
        "{plan}"
    );
    let out = env.apply().await;
    assert!(out.status.success(), "{}", text(&out));

    // what a user would check in the GUI
    let bridges = sim_get(&env, "/nodes/pve/network?type=bridge").await;
    let names: Vec<&str> = bridges
        .as_array()
        .expect("interfaces")
        .iter()
        .filter_map(|i| i["iface"].as_str())
        .collect();
    assert!(
        names.contains(&"vmbr1") && names.contains(&"vmbr2"),
        "{bridges}"
    );
    let pool = sim_get(&env, "/pools/homelab").await;
    let members: Vec<u64> = pool["members"]
        .as_array()
        .expect("members")
        .iter()
        .filter_map(|m| m["vmid"].as_u64())
        .collect();
    assert_eq!(members.len(), 3, "{pool}");
    let ct = sim_get(&env, "/nodes/pve/lxc/202/config").await;
    let net0 = ct["net0"].as_str().unwrap_or_default();
    assert!(
        net0.contains("bridge=vmbr1") && net0.contains("ip=10.10.0.80/24"),
        "{ct}"
    );
    let rules = sim_get(&env, "/nodes/pve/lxc/201/firewall/rules").await;
    assert_eq!(rules[0]["action"], "ssh-admins", "{rules}");
    assert_eq!(rules[1]["dport"], "53", "{rules}");
    let vm = sim_get(&env, "/nodes/pve/qemu/301/config").await;
    assert_eq!(
        vm["cicustom"], "user=local:snippets/cloud-init.yaml",
        "{vm}"
    );
    assert!(storage.path().join("snippets/cloud-init.yaml").exists());

    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(stdout(&again).contains("No changes."), "{}", text(&again));
}
