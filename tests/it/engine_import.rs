//! `import` blocks: an existing container made outside atoll, a pool and a node's DNS settings
//! are taken over by bpg's import id; the plan says what is imported and what changes after,
//! the apply changes only that (the container keeps running), and the next plan is empty. An
//! id that names nothing, or another object than the configuration declares, is refused
//! before anything is planned.

use crate::engine_support;

use crate::support::Container;
use engine_support::{Env, options, stdout, text};
use pvesim::GuestEvent;

const SCENARIO: &str = r#"
pools:
  - {poolid: ops, comment: "ops team"}
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

fn pool(comment: &str, id: &str) -> String {
    format!(
        r#"
resource "proxmox_virtual_environment_pool" "ops" {{
  pool_id = "ops"
  comment = "{comment}"
}}

import {{
  to = proxmox_virtual_environment_pool.ops
  id = "{id}"
}}
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_existing_pool_is_imported_changed_as_planned_and_the_next_plan_is_empty() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    // the same comment: an import alone
    env.write_tf(&pool("ops team", "ops"));
    let plan = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(plan.status.code(), Some(2), "{}", text(&plan));
    let shown = stdout(&plan);
    assert!(
        shown.contains("# proxmox_virtual_environment_pool.ops will be imported"),
        "{shown}"
    );
    assert!(
        shown.contains("Plan: 1 to import, 0 to add, 0 to change, 0 to destroy."),
        "{shown}"
    );

    // another comment: imported, then updated in place
    env.write_tf(&pool("operations", "ops"));
    let json = env.plan_json().await;
    let change = json["resource_changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["address"] == "proxmox_virtual_environment_pool.ops")
        .expect("the pool's change")
        .clone();
    assert_eq!(change["importing"]["id"], "ops", "{change}");
    assert_eq!(change["actions"], serde_json::json!(["update"]), "{change}");
    assert_eq!(json["summary"]["import"], 1, "{json}");
    let shown = env.plan().await;
    assert!(shown.contains("(imported from \"ops\")"), "{shown}");
    assert!(
        shown.contains("Plan: 1 to import, 0 to add, 1 to change, 0 to destroy."),
        "{shown}"
    );
    env.apply().await;
    let listed = env.atoll(&["state", "list"]).await;
    assert!(
        text(&listed).contains("proxmox_virtual_environment_pool.ops"),
        "{}",
        text(&listed)
    );
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(stdout(&again).contains("No changes."), "{}", text(&again));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_id_that_names_nothing_or_another_object_is_refused_before_planning() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    env.write_tf(&pool("ops team", "web"));
    let out = env.atoll(&["plan"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("Error: Import id does not match the configuration"),
        "{said}"
    );
    assert!(said.contains("on main.tf line 7, in import:"), "{said}");
    assert!(said.contains("whose import id is \"ops\""), "{said}");

    env.write_tf(&pool("x", "gone").replace("pool_id = \"ops\"", "pool_id = \"gone\""));
    let out = env.atoll(&["plan"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("Error: Cannot import non-existent remote object"),
        "{}",
        text(&out)
    );
    assert!(
        text(&out).contains("Proxmox VE has no pool gone"),
        "{}",
        text(&out)
    );
    let listed = env.atoll(&["state", "list"]).await;
    assert!(!text(&listed).contains("pool"), "{}", text(&listed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_container_made_outside_atoll_is_imported_without_being_stopped() {
    let env = Env::with_scenario(SCENARIO, options(20)).await;
    let ct = Container::new("theirs")
        .vm_id(971)
        .body("  tags = [\"theirs\"]")
        .hcl();
    // without the import block, atoll would create it and Proxmox VE would refuse
    env.write_tf(&ct);
    assert!(env.plan().await.contains("Plan: 1 to add"));

    let import =
        "import {\n  to = proxmox_virtual_environment_container.theirs\n  id = \"pve/971\"\n}\n";
    env.write_tf(&format!("{ct}\n{import}"));
    let shown = env.plan().await;
    assert!(
        shown.contains("# proxmox_virtual_environment_container.theirs will be updated in-place"),
        "{shown}"
    );
    assert!(shown.contains("(imported from \"pve/971\")"), "{shown}");
    assert!(shown.contains("Plan: 1 to import, 0 to add"), "{shown}");
    let before = env.sim.guest_events(971);
    env.apply().await;
    let events = env.sim.guest_events(971);
    assert!(
        !events[before.len()..]
            .iter()
            .any(|e| matches!(e, GuestEvent::Stopped | GuestEvent::Started)),
        "never stopped: {events:?}"
    );
    let tags = env.live_config(971).await["tags"].clone();
    assert!(tags.contains("atoll") && tags.contains("theirs"), "{tags}");
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));

    // a guest the configuration declares with another vm_id is not what the id names
    let second = Container::new("second").vm_id(972).hcl();
    let import = import.replace("container.theirs", "container.second");
    env.write_tf(&format!("{ct}\n{second}\n{import}"));
    let out = env.atoll(&["plan"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("The import id names CT 971, but proxmox_virtual_environment_container.second declares vm_id = 972"),
        "{}",
        text(&out)
    );
}
