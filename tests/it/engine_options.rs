//! `atoll plan` with Terraform's plan options, on the simulator: `--target` plans the targeted
//! resource and what it depends on and says the plan is partial; a saved targeted plan applies
//! only that; `--replace` replaces without a change; `--destroy` plans everything in state
//! away; `--var-file` and then `--var` override the configuration's defaults.

use crate::engine_support::{self, Env, text};
use crate::support::Container;

const CT: &str = "proxmox_virtual_environment_container";

/// Three containers: `b` depends on `a`; `c` stands alone.
fn three() -> String {
    format!(
        "{}{}{}",
        Container::new("a").vm_id(960).hcl(),
        Container::new("b")
            .vm_id(961)
            .body(&format!("  depends_on = [{CT}.a]"))
            .hcl(),
        Container::new("c").vm_id(962).hcl(),
    )
}

fn addresses(plan: &serde_json::Value) -> Vec<String> {
    let mut out: Vec<String> = plan["resource_changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| c["address"].as_str().unwrap_or_default().to_owned())
        .collect();
    out.sort();
    out
}

async fn plan_json(env: &Env, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["plan", "--json"];
    all.extend(args);
    let out = env.atoll(&all).await;
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_slice(&out.stdout).expect("plan JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn target_plans_the_resource_and_its_dependencies_and_warns_that_it_is_partial() {
    let env = Env::start().await;
    env.write_tf(&three());
    let target = format!("--target={CT}.b");
    let plan = plan_json(&env, &[&target]).await;
    assert_eq!(addresses(&plan), [format!("{CT}.a"), format!("{CT}.b")]);
    assert_eq!(plan["options"]["targets"][0], format!("{CT}.b"));
    let out = env.atoll(&["plan", &target]).await;
    assert!(
        text(&out).contains("Resource targeting is in effect")
            && text(&out).contains("The -target option is not for routine use"),
        "{}",
        text(&out)
    );
    let saved = env.dir.path().join("t.plan").display().to_string();
    let out = env.atoll(&["plan", &target, "--out", &saved]).await;
    assert!(out.status.success(), "{}", text(&out));
    let out = env.atoll(&["apply", "--plan", &saved]).await;
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(env.lxc_ids().await, [960, 961], "c is not created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_module_or_whole_resource_target_covers_its_instances() {
    let env = Env::start().await;
    env.write_tf(&format!(
        "{}{}",
        Container::new("many").count(2).hcl(),
        Container::new("other").vm_id(963).hcl()
    ));
    let plan = plan_json(&env, &[&format!("--target={CT}.many")]).await;
    assert_eq!(
        addresses(&plan),
        [format!("{CT}.many[0]"), format!("{CT}.many[1]")]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_plans_a_replace_of_an_unchanged_resource() {
    let env = Env::start().await;
    env.write_tf(&three());
    env.apply().await;
    let plan = plan_json(&env, &[&format!("--replace={CT}.c")]).await;
    let change = engine_support::change(&plan, &format!("{CT}.c"));
    assert_eq!(change["actions"], serde_json::json!(["delete", "create"]));
    let a = engine_support::change(&plan, &format!("{CT}.a"));
    assert_eq!(a["actions"], serde_json::json!(["no-op"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn destroy_plans_everything_in_state_away_and_the_saved_plan_destroys_it() {
    let env = Env::start().await;
    env.write_tf(&three());
    env.apply().await;
    let plan = plan_json(&env, &["--destroy"]).await;
    for name in ["a", "b", "c"] {
        let change = engine_support::change(&plan, &format!("{CT}.{name}"));
        assert_eq!(change["actions"], serde_json::json!(["delete"]), "{name}");
    }
    let saved = env.dir.path().join("d.plan").display().to_string();
    let out = env.atoll(&["plan", "--destroy", "--out", &saved]).await;
    assert!(out.status.success(), "{}", text(&out));
    let out = env.atoll(&["apply", "--plan", &saved]).await;
    assert!(out.status.success(), "{}", text(&out));
    assert!(env.lxc_ids().await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn var_file_and_var_override_the_default_and_the_var_comes_last() {
    let env = Env::start().await;
    env.write_tf(&format!(
        "variable \"cores\" {{\n  default = 1\n}}\n{}",
        Container::new("v")
            .vm_id(964)
            .body("  cpu {\n    cores = var.cores\n  }")
            .hcl()
    ));
    let big = env.project().join("big.tfvars");
    std::fs::write(&big, "cores = 4\n").expect("tfvars");
    let big = big.display().to_string();
    let cores = |plan: &serde_json::Value| {
        let change = engine_support::change(plan, &format!("{CT}.v"));
        change.to_string()
    };
    let plain = plan_json(&env, &[]).await;
    let file_only = plan_json(&env, &["--var-file", &big]).await;
    let var_only = plan_json(&env, &["--var", "cores=4"]).await;
    let file_then_var = plan_json(&env, &["--var-file", &big, "--var", "cores=3"]).await;
    let three = plan_json(&env, &["--var", "cores=3"]).await;
    assert_ne!(cores(&plain), cores(&file_only));
    assert_eq!(cores(&var_only), cores(&file_only));
    assert_eq!(cores(&file_then_var), cores(&three));
    assert_ne!(cores(&three), cores(&file_only));
}
