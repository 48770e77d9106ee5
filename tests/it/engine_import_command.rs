//! The engine step of `atlantis import ADDRESS ID` (`engine::import_one`) on a protected
//! guest someone else made: it is found by its import id as an `import` block finds it, the
//! reply learns why it is protected, recording it changes nothing on the cluster, and the plan
//! after it still blocks what the guard refuses for a protected guest. A second import of the
//! same address is Terraform's "already managed" error.

use std::sync::Arc;

use crate::engine_support::{Env, options};
use crate::support::Container;
use atoll::proxmox::engine::{Engine, Protect, import_one};
use atoll::proxmox::guard::{ProtectSpec, ProtectedBy};

const SCENARIO: &str = r#"
guests:
  - vmid: 971
    status: running
    config:
      hostname: theirs
      ostype: debian
      memory: 512
      swap: 0
      unprivileged: 1
      cores: 1
      rootfs: "local-lvm:vm-971-disk-0,size=8G"
      net0: "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:09:71,ip=dhcp,type=veth"
      tags: theirs
"#;

const ADDRESS: &str = "proxmox_virtual_environment_container.theirs";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn importing_a_protected_guest_records_it_says_so_and_its_plan_stays_guarded() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&Container::new("theirs").vm_id(971).cores(2).hcl());
    let protect = Protect {
        guests: vec![ProtectSpec::VmId(971)],
        ..Protect::default()
    };
    let engine = Engine::new(Arc::new(env.client.clone()), protect);
    let state = env.state().await;
    let input = tfconfig::Input {
        checkout: env.dir.path().join("repo"),
        project_dir: "stack".into(),
        workspace: "default".to_owned(),
        vars: Vec::new(),
        limits: tfconfig::Limits::default(),
        modules: Default::default(),
    };
    let before = env.live_config(971).await;

    let prepared = engine.prepare(&state, &input).await.expect("plan");
    let imported = import_one(&prepared, ADDRESS, "pve/971").expect("import");
    assert_eq!(imported.protected, Some(ProtectedBy::Configured));
    assert_eq!(imported.what, "CT 971 on node pve");
    state
        .record(&imported.entry)
        .await
        .expect("recording the import");
    assert_eq!(env.live_config(971).await, before, "state only");

    let after = engine
        .prepare(&state, &input)
        .await
        .expect("plan after the import");
    assert!(after.plan.summary.blocked > 0, "{:?}", after.plan.summary);
    let again = import_one(&after, ADDRESS, "pve/971").expect_err("already in state");
    assert!(again.to_string().contains("already managing"), "{again}");
}
