//! Values generated at apply time (`random_password`): made once, stored in state, sent to
//! PVE, never shown in any output, and stable across later plans.

use crate::engine_support;

use std::collections::BTreeMap;

use crate::support::Container;
use atoll::proxmox::state::StateHandle;
use atoll::store::StateScope;
use engine_support::{Env, text};

fn tf() -> String {
    r#"
resource "random_password" "root" {
  length  = 20
  special = false
}
"#
    .to_owned()
        + &Container::new("pw")
            .vm_id(901)
            .body(
                r#"  initialization {
    user_account {
      password = random_password.root.result
    }
  }"#,
            )
            .hcl()
}

async fn stored_password(env: &Env) -> String {
    let store = atoll::store::connect(&env.store_url())
        .await
        .expect("store");
    let scope = StateScope {
        repo: "local".to_owned(),
        project_dir: "stack".to_owned(),
        workspace: "default".to_owned(),
    };
    let state = StateHandle::new(store, scope).load().await.expect("state");
    let values: BTreeMap<String, BTreeMap<String, String>> = state.generated_values();
    values["random_password.root"]["result"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_password_is_created_once_used_and_never_shown() {
    let env = Env::start().await;
    env.write_tf(&tf());
    let plan = env.plan().await;
    assert!(
        plan.contains("random_password.root will be created"),
        "{plan}"
    );
    assert!(plan.contains("(sensitive value)"), "{plan}");
    let applied = env.apply().await;
    let password = stored_password(&env).await;
    assert_eq!(password.chars().count(), 20);
    assert!(password.chars().all(char::is_alphanumeric));
    assert_eq!(env.lxc_ids().await, vec![901]);
    let show = env.atoll(&["state", "show", "random_password.root"]).await;
    let guest = env
        .atoll(&["state", "show", "proxmox_virtual_environment_container.pw"])
        .await;
    let again = env.plan().await;
    assert!(again.contains("No changes."), "{again}");
    let json = env.atoll(&["plan", "--json"]).await;
    for (what, out) in [
        ("apply", text(&applied)),
        ("state show", text(&show)),
        ("state show guest", text(&guest)),
        ("plan", again),
        ("plan --json", text(&json)),
    ] {
        assert!(!out.contains(&password), "{what} printed the password");
    }
    assert!(
        text(&show).contains("result = (sensitive value)"),
        "{}",
        text(&show)
    );
    assert!(
        text(&guest).contains("config.password = (sensitive value)"),
        "{}",
        text(&guest)
    );
    // a second apply keeps the same value
    env.apply().await;
    assert_eq!(stored_password(&env).await, password);
}
