//! `moved` and `removed` blocks and `atoll state mv` / `atoll state rm` against the
//! simulator: a container moved into a module is renamed in state and never touched (0 to add,
//! 0 to destroy, never stopped), `destroy = false` forgets a guest that keeps running, and the
//! next plan is empty. The plan's words are Terraform 1.15's (`tests/oracle/moved.txt`).

use crate::engine_support;

use crate::support::Container;
use engine_support::{Env, stdout, text};
use pvesim::GuestEvent;

fn module_call(extra: &str) -> String {
    format!("module \"lxc\" {{\n  source = \"./modules/lxc\"\n}}\n{extra}")
}

fn write_module(env: &Env, hcl: &str) {
    let dir = env.project().join("modules/lxc");
    std::fs::create_dir_all(&dir).expect("module dir");
    std::fs::write(dir.join("main.tf"), hcl).expect("module main.tf");
}

fn never_stopped(env: &Env, vm_id: u32, before: usize) {
    let events = env.sim.guest_events(vm_id);
    assert!(
        !events[before..]
            .iter()
            .any(|e| matches!(e, GuestEvent::Stopped | GuestEvent::Started)),
        "never stopped: {events:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_moved_into_a_module_is_renamed_and_never_touched() {
    let env = Env::start().await;
    let ct = Container::new("web").vm_id(640).hcl();
    env.write_tf(&ct);
    env.apply().await;
    let before = env.sim.guest_events(640).len();

    write_module(&env, &ct);
    let moved = "moved {\n  from = proxmox_virtual_environment_container.web\n  to   = module.lxc.proxmox_virtual_environment_container.web\n}\n";
    env.write_tf(&module_call(moved));
    let shown = env.plan().await;
    assert!(
        shown.contains("# proxmox_virtual_environment_container.web has moved to module.lxc.proxmox_virtual_environment_container.web"),
        "{shown}"
    );
    assert!(
        shown.contains("Plan: 0 to add, 0 to change, 0 to destroy."),
        "{shown}"
    );
    let json = env.plan_json().await;
    let change = engine_support::change(
        &json,
        "module.lxc.proxmox_virtual_environment_container.web",
    );
    assert_eq!(
        change["previous_address"], "proxmox_virtual_environment_container.web",
        "{change}"
    );
    assert_eq!(change["actions"], serde_json::json!(["no-op"]), "{change}");

    env.apply().await;
    never_stopped(&env, 640, before);
    let listed = text(&env.atoll(&["state", "list"]).await);
    assert!(
        listed.contains("module.lxc.proxmox_virtual_environment_container.web"),
        "{listed}"
    );
    assert!(
        !listed
            .lines()
            .any(|l| l.starts_with("proxmox_virtual_environment_container.web")),
        "{listed}"
    );
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
    assert!(stdout(&again).contains("No changes."), "{}", text(&again));
    assert_eq!(env.lxc_ids().await, vec![640]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_with_a_change_says_both_and_a_move_onto_a_taken_address_is_left_undone() {
    let env = Env::start().await;
    let a = Container::new("a").vm_id(641).hcl();
    let b = Container::new("b").vm_id(642).hcl();
    env.write_tf(&format!("{a}{b}"));
    env.apply().await;

    // renamed and given more cores: Terraform's two header lines
    let c = Container::new("c").vm_id(641).cores(2).hcl();
    let moved = "moved {\n  from = proxmox_virtual_environment_container.a\n  to   = proxmox_virtual_environment_container.c\n}\n";
    env.write_tf(&format!("{b}{c}{moved}"));
    let shown = env.plan().await;
    assert!(
        shown.contains("  # proxmox_virtual_environment_container.c will be updated in-place\n  # (moved from proxmox_virtual_environment_container.a)"),
        "{shown}"
    );
    assert!(
        shown.contains("Plan: 0 to add, 1 to change, 0 to destroy."),
        "{shown}"
    );

    // onto b, which is in state: not moved, a is destroyed, as Terraform plans it
    let onto = moved.replace("container.c", "container.b");
    env.write_tf(&format!("{b}{onto}"));
    let out = env.atoll(&["plan"]).await;
    let said = text(&out);
    assert!(
        said.contains("Warning: Unresolved resource instance address changes"),
        "{said}"
    );
    assert!(
        said.contains("  - proxmox_virtual_environment_container.a could not move to proxmox_virtual_environment_container.b"),
        "{said}"
    );
    assert!(
        said.contains("# proxmox_virtual_environment_container.a will be destroyed"),
        "{said}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removed_with_destroy_false_forgets_the_guest_and_it_keeps_running() {
    let env = Env::start().await;
    let ct = Container::new("keep").vm_id(650).hcl();
    env.write_tf(&ct);
    env.apply().await;
    let before = env.sim.guest_events(650).len();

    env.write_tf("removed {\n  from = proxmox_virtual_environment_container.keep\n  lifecycle {\n    destroy = false\n  }\n}\n");
    let shown = env.plan().await;
    assert!(
        shown.contains(" # proxmox_virtual_environment_container.keep will no longer be managed by atoll, but will not be destroyed\n # (destroy = false is set in the configuration)"),
        "{shown}"
    );
    assert!(
        shown.contains("Plan: 0 to add, 0 to change, 0 to destroy."),
        "{shown}"
    );
    assert!(
        shown.contains("Warning: Some objects will no longer be managed by atoll"),
        "{shown}"
    );
    env.apply().await;
    never_stopped(&env, 650, before);
    assert_eq!(env.lxc_ids().await, vec![650]);
    let listed = text(&env.atoll(&["state", "list"]).await);
    assert!(!listed.contains("container.keep"), "{listed}");
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_mv_and_state_rm_edit_state_alone() {
    let env = Env::start().await;
    let a = Container::new("a").vm_id(660).hcl();
    let b = Container::new("b").vm_id(661).hcl();
    env.write_tf(&format!("{a}{b}"));
    env.apply().await;

    let dry = env
        .atoll(&[
            "state",
            "mv",
            "--dry-run",
            "proxmox_virtual_environment_container.a",
            "module.lxc.proxmox_virtual_environment_container.a",
        ])
        .await;
    assert!(dry.status.success(), "{}", text(&dry));
    assert!(
        stdout(&dry).contains("Would move \"proxmox_virtual_environment_container.a\" to \"module.lxc.proxmox_virtual_environment_container.a\""),
        "{}",
        text(&dry)
    );
    let onto = env
        .atoll(&[
            "state",
            "mv",
            "proxmox_virtual_environment_container.a",
            "proxmox_virtual_environment_container.b",
        ])
        .await;
    assert_eq!(onto.status.code(), Some(1), "{}", text(&onto));
    assert!(
        text(&onto).contains("already a resource instance at that address"),
        "{}",
        text(&onto)
    );

    let mv = env
        .atoll(&[
            "state",
            "mv",
            "proxmox_virtual_environment_container.a",
            "module.lxc.proxmox_virtual_environment_container.a",
        ])
        .await;
    assert!(mv.status.success(), "{}", text(&mv));
    assert!(
        stdout(&mv).contains("Successfully moved 1 object(s)."),
        "{}",
        text(&mv)
    );
    write_module(&env, &a);
    env.write_tf(&module_call(&b));
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));

    let rm = env.atoll(&["state", "rm", "--dry-run", "module.lxc"]).await;
    assert!(
        stdout(&rm).contains("Would remove module.lxc.proxmox_virtual_environment_container.a"),
        "{}",
        text(&rm)
    );
    let rm = env
        .atoll(&[
            "state",
            "rm",
            "module.lxc",
            "proxmox_virtual_environment_container.b",
        ])
        .await;
    assert!(rm.status.success(), "{}", text(&rm));
    assert!(
        stdout(&rm).contains("Successfully removed 2 resource instance(s)."),
        "{}",
        text(&rm)
    );
    let listed = text(&env.atoll(&["state", "list"]).await);
    assert!(
        !listed.contains("proxmox_virtual_environment_container"),
        "{listed}"
    );
    assert_eq!(env.lxc_ids().await, vec![660, 661]);
    let missing = env
        .atoll(&["state", "rm", "proxmox_virtual_environment_container.zz"])
        .await;
    assert_eq!(missing.status.code(), Some(1), "{}", text(&missing));
    assert!(
        text(&missing).contains("No matching objects found"),
        "{}",
        text(&missing)
    );
    // the apply, the move and the removal are versions of the state; the refused ones are not
    let versions = stdout(&env.atoll(&["state", "versions"]).await);
    let reasons: Vec<&str> = ["apply", "state_mv", "state_rm"]
        .into_iter()
        .filter(|r| versions.contains(r))
        .collect();
    assert_eq!(reasons, ["apply", "state_mv", "state_rm"], "{versions}");
    assert_eq!(versions.matches("state_mv").count(), 1, "{versions}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_blocks_warn_after_plan_and_again_after_apply() {
    let env = Env::start().await;
    let ct = Container::new("web").vm_id(670).cores(1).hcl();
    let checks = "resource \"random_password\" \"p\" {\n  length = 16\n}\n\
        check \"cores\" {\n  assert {\n    condition     = proxmox_virtual_environment_container.web.cpu[0].cores >= 2\n    error_message = \"web needs two cores\"\n  }\n}\n\
        check \"password\" {\n  assert {\n    condition     = length(random_password.p.result) == 16\n    error_message = \"the password is not 16 long\"\n  }\n}\n";
    env.write_tf(&format!("{ct}{checks}"));
    let out = env.atoll(&["plan"]).await;
    assert!(
        out.status.success(),
        "a check never stops a plan: {}",
        text(&out)
    );
    let said = stdout(&out);
    assert!(said.contains("Plan: 2 to add"), "{said}");
    assert!(
        said.contains("Warning: Check block assertion failed")
            && said.contains("web needs two cores"),
        "{said}"
    );
    assert!(
        said.contains("Warning: Check block assertion known after apply")
            && said.contains("The condition could not be evaluated at this time"),
        "{said}"
    );

    let applied = env.apply().await;
    let said = stdout(&applied);
    let after = &said[said.find("Apply complete").unwrap_or(0)..];
    assert!(
        said.contains("web needs two cores"),
        "the failed assertion is said again after apply: {said}"
    );
    // the password is known once generated: checked, and true
    assert!(!after.contains("known after apply"), "{said}");
    assert!(!said.contains("the password is not 16 long"), "{said}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_password_moved_into_a_module_keeps_its_value() {
    let env = Env::start().await;
    let password = "resource \"random_password\" \"p\" {\n  length = 20\n}\n";
    env.write_tf(password);
    env.apply().await;
    let state = env.state().await;
    let before = state.load().await.expect("state").generated_values();
    let value = before["random_password.p"].values["result"].clone();

    write_module(&env, password);
    let moved = "moved {\n  from = random_password.p\n  to   = module.lxc.random_password.p\n}\n";
    env.write_tf(&module_call(moved));
    let shown = env.plan().await;
    assert!(
        shown.contains("# random_password.p has moved to module.lxc.random_password.p"),
        "{shown}"
    );
    assert!(
        shown.contains("Plan: 0 to add, 0 to change, 0 to destroy."),
        "{shown}"
    );
    env.apply().await;
    let after = state.load().await.expect("state").generated_values();
    assert_eq!(
        after["module.lxc.random_password.p"].values["result"],
        value
    );
    assert!(!after.contains_key("random_password.p"));
    let again = env.atoll(&["plan", "--detailed-exitcode"]).await;
    assert_eq!(again.status.code(), Some(0), "{}", text(&again));
}
