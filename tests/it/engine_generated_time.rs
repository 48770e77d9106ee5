//! The time provider's resources that depend on when atoll runs, and `random_pet`:
//! `time_offset` moves its base in place when an offset changes and takes a new base on a new
//! trigger; `time_rotating` is made anew once its rotation time has passed, with the reason in
//! the plan; `time_sleep` makes the apply wait after creating it and before destroying it, and
//! its durations are bounded; `random_pet` names from golang-petname's words.

use crate::engine_support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::support::Container;
use atoll::proxmox::state::{GeneratedEntry, secrets};
use engine_support::{Env, text};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The values stored for `address`, by attribute.
async fn stored(env: &Env, address: &str) -> BTreeMap<String, String> {
    let state = env.state().await.load().await.expect("state");
    let values = state.generated_values().remove(address).map(|g| g.values);
    values.unwrap_or_else(|| panic!("{address} is in state"))
}

fn at(text: &str) -> OffsetDateTime {
    OffsetDateTime::parse(text, &Rfc3339).expect("an RFC 3339 timestamp")
}

fn tf(days: u32, trigger: &str) -> String {
    format!(
        r#"
resource "time_offset" "expiry" {{
  offset_days = {days}
  triggers    = {{ image = "{trigger}" }}
}}
resource "time_rotating" "key" {{
  rotation_days = 30
}}
resource "random_pet" "name" {{
  length  = 3
  prefix  = "ct"
  keepers = {{ image = "{trigger}" }}
}}
"#
    ) + &Container::new("timed")
        .vm_id(906)
        .body(
            r#"  description = "${time_offset.expiry.rfc3339} ${time_rotating.key.rotation_rfc3339} ${random_pet.name.id}""#,
        )
        .hcl()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offsets_move_in_place_rotations_come_due_and_pets_are_named() {
    let env = Env::start().await;
    env.write_tf(&tf(7, "debian-12"));
    let plan = env.plan().await;
    for created in [
        "time_offset.expiry will be created",
        "time_rotating.key will be created",
        "random_pet.name will be created",
    ] {
        assert!(plan.contains(created), "{created}: {plan}");
    }
    env.apply().await;
    let offset = stored(&env, "time_offset.expiry").await;
    let rotating = stored(&env, "time_rotating.key").await;
    let pet = stored(&env, "random_pet.name").await["id"].clone();
    assert_eq!(
        at(&offset["rfc3339"]) - at(&offset["base_rfc3339"]),
        time::Duration::days(7)
    );
    assert_eq!(offset["id"], offset["base_rfc3339"]);
    assert_eq!(
        at(&rotating["rotation_rfc3339"]) - at(&rotating["rfc3339"]),
        time::Duration::days(30)
    );
    assert_eq!(
        rotating["day"],
        at(&rotating["rotation_rfc3339"]).day().to_string()
    );
    let words: Vec<&str> = pet.split('-').collect();
    assert!(words.len() == 4 && words[0] == "ct", "{pet}");
    let description = env.live_config(906).await["description"].clone();
    assert_eq!(
        description.trim(),
        format!(
            "{} {} {pet}",
            offset["rfc3339"], rotating["rotation_rfc3339"]
        )
    );
    assert!(env.plan().await.contains("No changes."));

    // A new offset is an update in place from the same base.
    env.write_tf(&tf(14, "debian-12"));
    let plan = env.plan().await;
    assert!(
        plan.contains("time_offset.expiry will be updated in-place"),
        "{plan}"
    );
    env.apply().await;
    let moved = stored(&env, "time_offset.expiry").await;
    assert_eq!(moved["base_rfc3339"], offset["base_rfc3339"]);
    assert_eq!(
        at(&moved["rfc3339"]) - at(&moved["base_rfc3339"]),
        time::Duration::days(14)
    );
    assert!(env.plan().await.contains("No changes."));

    // A new trigger or keeper replaces them; the rotation stays.
    env.write_tf(&tf(14, "debian-13"));
    let plan = env.plan().await;
    assert!(
        plan.contains("time_offset.expiry must be replaced"),
        "{plan}"
    );
    assert!(plan.contains("random_pet.name must be replaced"), "{plan}");
    assert!(!plan.contains("time_rotating.key"), "{plan}");
    env.apply().await;
    assert_ne!(stored(&env, "random_pet.name").await["id"], pet);
    assert!(env.plan().await.contains("No changes."));

    // Time passes: the rotation time is behind us, and the plan says so.
    let handle = env.state().await;
    let mut values = stored(&env, "time_rotating.key").await;
    values.insert(
        "rotation_rfc3339".to_owned(),
        "2020-01-01T00:00:00Z".to_owned(),
    );
    let state = handle.load().await.expect("state");
    let entry = state
        .generated
        .iter()
        .find(|g| g.address == "time_rotating.key")
        .expect("in state");
    let expired = GeneratedEntry {
        values: secrets(values),
        ..entry.clone()
    };
    handle.record_generated(&expired).await.expect("recorded");
    let plan = env.plan().await;
    assert!(
        plan.contains("time_rotating.key must be replaced"),
        "{plan}"
    );
    assert!(
        plan.contains("rotation time 2020-01-01T00:00:00Z has passed"),
        "{plan}"
    );
    env.apply().await;
    let rotated = stored(&env, "time_rotating.key").await;
    assert!(at(&rotated["rotation_rfc3339"]) > OffsetDateTime::now_utc());
    let description = env.live_config(906).await["description"].clone();
    assert!(
        description.contains(&rotated["rotation_rfc3339"]),
        "{description}"
    );
    assert!(env.plan().await.contains("No changes."));
}

fn sleep(create: &str, trigger: &str) -> String {
    format!(
        r#"resource "time_sleep" "settle" {{
  create_duration  = "{create}"
  destroy_duration = "1s"
  triggers         = {{ image = "{trigger}" }}
}}
"#
    )
}

async fn timed_apply(env: &Env) -> Duration {
    let started = Instant::now();
    env.apply().await;
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_sleep_makes_the_apply_wait_and_its_durations_are_bounded() {
    let env = Env::start().await;
    env.write_tf(&sleep("2s", "a"));
    let plan = env.plan().await;
    assert!(plan.contains("time_sleep.settle will be created"), "{plan}");
    assert!(
        plan.contains("apply will wait 2s after creating it"),
        "{plan}"
    );
    assert!(timed_apply(&env).await >= Duration::from_secs(2));
    let id = stored(&env, "time_sleep.settle").await["id"].clone();
    assert!(env.plan().await.contains("No changes."));

    // A new duration alone waits for nothing and keeps the id.
    env.write_tf(&sleep("500ms", "a"));
    let plan = env.plan().await;
    assert!(
        plan.contains("time_sleep.settle will be updated in-place"),
        "{plan}"
    );
    assert!(!plan.contains("apply will wait"), "{plan}");
    env.apply().await;
    assert_eq!(stored(&env, "time_sleep.settle").await["id"], id);

    // A new trigger waits the stored destroy_duration, then the create_duration.
    env.write_tf(&sleep("500ms", "b"));
    let plan = env.plan().await;
    assert!(
        plan.contains("time_sleep.settle must be replaced"),
        "{plan}"
    );
    assert!(
        plan.contains("apply will wait 1s before destroying it"),
        "{plan}"
    );
    assert!(
        plan.contains("apply will wait 0.5s after creating it"),
        "{plan}"
    );
    assert!(timed_apply(&env).await >= Duration::from_millis(1500));
    assert!(env.plan().await.contains("No changes."));

    let flat = |t: String| t.split_whitespace().collect::<Vec<_>>().join(" ");
    for (create, says) in [
        (
            "11m",
            "Attribute create_duration value must be at most 10m, got: 11m",
        ),
        (
            "1m30s",
            "Attribute create_duration must be a number immediately followed by ms",
        ),
    ] {
        env.write_tf(&sleep(create, "b"));
        let refused = env.atoll(&["plan"]).await;
        assert!(!refused.status.success());
        assert!(flat(text(&refused)).contains(says), "{}", text(&refused));
    }
    env.write_tf(&(sleep("6m", "b") + &sleep("6m", "b").replace("settle", "more")));
    let refused = env.atoll(&["plan"]).await;
    assert!(
        flat(text(&refused)).contains("would make one apply wait 720s in all"),
        "{}",
        text(&refused)
    );

    env.write_tf("");
    let plan = env.plan().await;
    assert!(
        plan.contains("time_sleep.settle will be destroyed"),
        "{plan}"
    );
    assert!(
        plan.contains("apply will wait 1s before destroying it"),
        "{plan}"
    );
    assert!(timed_apply(&env).await >= Duration::from_secs(1));
    assert!(env.plan().await.contains("No changes."));
}
