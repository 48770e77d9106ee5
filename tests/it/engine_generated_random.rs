//! The random provider's list resources: `random_shuffle` permutes its `input`, keeps the
//! permutation across plans, shuffles anew when a keeper changes, and refuses `seed` with the
//! reason.

use crate::engine_support;

use crate::support::Container;
use engine_support::{Env, text};

fn tf(keeper: &str, extra: &str) -> String {
    format!(
        r#"
resource "random_shuffle" "zones" {{
  input        = ["a", "b", "c", "d"]
  result_count = 6
  keepers      = {{ week = "{keeper}" }}
{extra}}}
"#
    ) + &Container::new("shuffled")
        .vm_id(905)
        .body(r#"  description = join(",", random_shuffle.zones.result)"#)
        .hcl()
}

async fn stored_result(env: &Env) -> Vec<String> {
    let state = env.state().await.load().await.expect("state");
    let values = state.generated_values().remove("random_shuffle.zones");
    let result = values.expect("the shuffle is in state").values["result"].clone();
    let value = tfconfig::Value::from_stored(&result).expect("a stored list");
    let items = value.as_seq().expect("a list").iter();
    items
        .map(|v| v.as_str().expect("a string").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_shuffle_permutes_its_input_keeps_it_and_shuffles_anew_on_a_new_keeper() {
    let env = Env::start().await;
    env.write_tf(&tf("1", ""));
    let plan = env.plan().await;
    assert!(
        plan.contains("random_shuffle.zones will be created"),
        "{plan}"
    );
    env.apply().await;
    let first = stored_result(&env).await;
    assert_eq!(first.len(), 6, "{first:?}");
    // Whole permutations one after another: the first four are each input once.
    let mut head = first[..4].to_vec();
    head.sort();
    assert_eq!(head, ["a", "b", "c", "d"]);
    let description = env.live_config(905).await["description"].clone();
    assert_eq!(description.trim(), first.join(","));
    assert!(env.plan().await.contains("No changes."));

    env.write_tf(&tf("2", ""));
    let plan = env.plan().await;
    assert!(
        plan.contains("random_shuffle.zones must be replaced"),
        "{plan}"
    );
    env.apply().await;
    assert_eq!(stored_result(&env).await.len(), 6);
    assert!(env.plan().await.contains("No changes."));

    env.write_tf(&tf("2", "  seed = \"x\"\n"));
    let refused = env.atoll(&["plan"]).await;
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("seed is not supported"),
        "{}",
        text(&refused)
    );
}

fn numbered(keeper: &str) -> String {
    format!(
        r#"
resource "random_password" "db" {{
  length  = 40
  special = false
  number  = false
  keepers = {{ rotated = "{keeper}" }}
}}
resource "random_string" "tag" {{
  length = 30
  number = false
}}
resource "terraform_data" "hash" {{
  input = random_password.db.bcrypt_hash
}}
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_deprecated_number_is_honoured_and_the_bcrypt_hash_verifies_the_password() {
    let env = Env::start().await;
    env.write_tf(&numbered("1"));
    let plan = env.plan().await;
    assert!(
        plan.contains("random_password.db will be created"),
        "{plan}"
    );
    assert!(
        plan.contains("terraform_data.hash will be created"),
        "{plan}"
    );
    let applied = env.apply().await;
    let state = env.state().await.load().await.expect("state");
    let mut values = state.generated_values();
    let password = values
        .remove("random_password.db")
        .expect("password")
        .values;
    let tag = values.remove("random_string.tag").expect("string").values["result"].clone();
    let result = &password["result"];
    assert!(!result.chars().any(|c| c.is_ascii_digit()), "{result}");
    assert!(!tag.chars().any(|c| c.is_ascii_digit()), "{tag}");
    let hash = &password["bcrypt_hash"];
    assert!(hash.starts_with("$2a$10$"), "{hash}");
    assert!(bcrypt::verify(result, hash).expect("a bcrypt hash"));
    // The reference read the hash at the same apply, sensitive as it is.
    let output = values.remove("terraform_data.hash").expect("data").values["output"].clone();
    let output = tfconfig::Value::from_stored(&output).expect("stored");
    assert!(output.contains_sensitive());
    assert_eq!(output.unmark().0.as_str(), Some(hash.as_str()));
    let again = env.plan().await;
    assert!(again.contains("No changes."), "{again}");
    let show = env.atoll(&["state", "show", "random_password.db"]).await;
    for (what, out) in [
        ("apply", text(&applied)),
        ("plan", plan),
        ("state show", text(&show)),
    ] {
        assert!(!out.contains(hash.as_str()), "{what} printed the hash");
    }
    assert!(
        text(&show).contains("bcrypt_hash = (sensitive value)"),
        "{}",
        text(&show)
    );

    env.write_tf(&numbered("2"));
    let plan = env.plan().await;
    assert!(
        plan.contains("random_password.db must be replaced"),
        "{plan}"
    );
    env.apply().await;
    assert!(env.plan().await.contains("No changes."));
}
