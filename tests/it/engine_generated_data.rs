//! `terraform_data`, Terraform's built-in resource: its `output` follows `input` in place (the
//! `id` stays), a changed `triggers_replace` replaces it, values of any type reach a guest
//! with their type, a sensitive input is never shown, and one that reads another generated
//! value is made after it, at the same apply.

use crate::engine_support;

use std::collections::BTreeMap;

use crate::support::Container;
use engine_support::{Env, text};

/// The values stored for `address`, by attribute.
async fn stored(env: &Env, address: &str) -> BTreeMap<String, String> {
    let state = env.state().await.load().await.expect("state");
    let values = state.generated_values().remove(address).map(|g| g.values);
    values.unwrap_or_else(|| panic!("{address} is in state"))
}

const TOKEN: &str = "s3cret-t0ken-never-shown";

fn tf(version: &str, trigger: &str) -> String {
    format!(
        r#"
variable "token" {{
  type      = string
  default   = "{TOKEN}"
  sensitive = true
}}
resource "terraform_data" "release" {{
  input            = {{ version = "{version}", cores = 2, tags = ["a", "b"] }}
  triggers_replace = ["{trigger}"]
}}
resource "terraform_data" "secret" {{
  input = {{ token = var.token }}
}}
resource "random_uuid" "build" {{}}
resource "terraform_data" "stamp" {{
  input = random_uuid.build.result
}}
"#
    ) + &Container::new("data")
        .vm_id(904)
        .body(
            r#"  description = "v${terraform_data.release.output.version} ${terraform_data.stamp.output} ${length(terraform_data.release.output.tags)}"
  cpu {
    cores = terraform_data.release.output.cores
  }"#,
        )
        .hcl()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terraform_data_follows_its_input_in_place_and_its_trigger_replaces_it() {
    let env = Env::start().await;
    env.write_tf(&tf("1.0", "blue"));
    let plan = env.plan().await;
    for created in [
        "terraform_data.release will be created",
        "terraform_data.secret will be created",
        "terraform_data.stamp will be created",
    ] {
        assert!(plan.contains(created), "{created}: {plan}");
    }
    let applied = env.apply().await;
    let release = stored(&env, "terraform_data.release").await;
    let uuid = stored(&env, "random_uuid.build").await["result"].clone();
    let config = env.live_config(904).await;
    assert_eq!(
        config.get("description").map(|d| d.trim()),
        Some(format!("v1.0 {uuid} 2").as_str()),
        "the input of another generated value is made at the same apply: {config:?}"
    );
    assert_eq!(config.get("cores").map(String::as_str), Some("2"));
    assert!(uuid::Uuid::parse_str(&release["id"]).is_ok(), "{release:?}");
    let again = env.plan().await;
    assert!(again.contains("No changes."), "{again}");

    // A new input is an update in place: the id stays, the output and its users follow.
    env.write_tf(&tf("1.1", "blue"));
    let plan = env.plan().await;
    assert!(
        plan.contains("terraform_data.release will be updated in-place"),
        "{plan}"
    );
    assert!(
        !plan.contains("terraform_data.release must be replaced"),
        "{plan}"
    );
    env.apply().await;
    let updated = stored(&env, "terraform_data.release").await;
    assert_eq!(updated["id"], release["id"]);
    let description = env.live_config(904).await["description"].clone();
    assert!(description.starts_with("v1.1 "), "{description}");
    assert!(env.plan().await.contains("No changes."));

    // A new trigger replaces it: a new id.
    env.write_tf(&tf("1.1", "green"));
    let plan = env.plan().await;
    assert!(
        plan.contains("terraform_data.release must be replaced"),
        "{plan}"
    );
    env.apply().await;
    assert_ne!(
        stored(&env, "terraform_data.release").await["id"],
        release["id"]
    );
    assert!(env.plan().await.contains("No changes."));

    // The sensitive input is never shown, nor the output it makes.
    let show = env.atoll(&["state", "show", "terraform_data.secret"]).await;
    let json = env.atoll(&["plan", "--json"]).await;
    env.write_tf("");
    let destroy = env.plan().await;
    assert!(
        destroy.contains("terraform_data.secret will be destroyed"),
        "{destroy}"
    );
    for (what, out) in [
        ("plan", plan),
        ("apply", text(&applied)),
        ("state show", text(&show)),
        ("plan --json", text(&json)),
        ("destroy plan", destroy),
    ] {
        assert!(!out.contains(TOKEN), "{what} printed the token: {out}");
    }
    assert!(
        text(&show).contains("input = (sensitive value)"),
        "{}",
        text(&show)
    );
}
