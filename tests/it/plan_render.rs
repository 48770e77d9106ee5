//! Rendering of plans: the Terraform-style text with atoll's guest lines, and the JSON plan.
//! Snapshots live in `tests/snapshots/`.

use crate::plan_support;

use atoll::proxmox::guard::{GuardPolicy, ProtectSpec, ProtectedSet, check};
use atoll::proxmox::plan::{Desired, PendingEntry, Plan};
use atoll::render::{plan_json, plan_text};
use plan_support::{PASSWORD, World, desired_guest, download, live_guest, state_for};

const ODD_KEY: &str = "<script>alert(1)</script> *x* `y` |z|";

fn add_applied(world: &mut World, key: &str, vm_id: u32) {
    let guest = desired_guest(key, vm_id);
    world.state.push(state_for(&guest, vm_id));
    world.inventory.guests.insert(vm_id, live_guest(key, vm_id));
    world.desired.push(Desired::Guest(guest));
}

fn set(world: &mut World, index: usize, key: &str, value: &str) {
    if let Desired::Guest(guest) = &mut world.desired[index] {
        let value = atoll::proxmox::plan::DesiredValue::Known(value.to_owned());
        guest.config.insert(key.to_owned(), value);
    }
}

/// One of everything: an update needing a restart (with drift), a create using a download, a
/// blocked replacement, a delete, a link reset on a guest with Markdown/HTML in its key.
fn representative() -> Plan {
    let mut world = World::applied();
    set(&mut world, 0, "features", "nesting=1");
    set(&mut world, 0, "cpuunits", "200");
    set(&mut world, 0, "hostname", "nextcloud");
    world.pending(
        "mp0",
        "local-lvm:vm-2100-disk-1,mp=/data",
        "local-lvm:vm-2100-disk-1,mp=/srv",
    );
    add_applied(&mut world, "dev-db", 2102);
    set(&mut world, 1, "rootfs", "zfs-pool:8");
    add_applied(&mut world, ODD_KEY, 2103);
    set(&mut world, 2, "net0", "name=eth0,bridge=vmbr1,ip=dhcp");
    set(&mut world, 2, "description", "**bold** <b>html</b> | pipe");
    let old = desired_guest("old", 2104);
    world.state.push(state_for(&old, 2104));
    world.inventory.guests.insert(2104, live_guest("old", 2104));
    let template = download("debian");
    let mut gitea = desired_guest("dev-gitea", 2101);
    gitea.uses = vec![template.address.clone()];
    world.desired.push(Desired::Guest(gitea));
    world.desired.push(Desired::Download(template));
    let mut plan = world.plan();
    let protected = ProtectedSet::resolve(&[ProtectSpec::VmId(2102)], None, []);
    check(
        &mut plan,
        &protected,
        GuardPolicy {
            allow_live_changes: false,
        },
        &world.desired,
    );
    plan
}

#[test]
fn representative_plan_renders_like_terraform_with_guest_lines() {
    let text = plan_text(&representative());
    insta::assert_snapshot!("representative_plan_text", text);
    assert!(
        text.contains("# (guest will be restarted: features.nesting)"),
        "{text}"
    );
    assert!(
        text.contains("# (network link will be reset: net0)"),
        "{text}"
    );
    assert!(
        text.contains("Plan: 3 to add, 2 to change, 2 to destroy. 1 restart. 1 blocked."),
        "{text}"
    );
}

#[test]
fn representative_plan_json_follows_the_contract() {
    let plan = representative();
    let json = plan_json(&plan);
    insta::assert_snapshot!("representative_plan_json", json);
    let value: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    assert_eq!(value["format_version"], "1");
    let expected =
        serde_json::json!({"add":3,"change":2,"destroy":2,"replace":1,"restart":1,"blocked":1});
    assert_eq!(value["summary"], expected);
    let first = &value["resource_changes"][0];
    for field in [
        "address",
        "type",
        "node",
        "vm_id",
        "actions",
        "disruption",
        "blocked",
        "attributes",
    ] {
        assert!(
            first.get(field).is_some(),
            "resource change lacks {field}: {first}"
        );
    }
}

#[test]
fn sensitive_values_never_appear_in_text_or_json() {
    let plan = representative();
    let (text, json) = (plan_text(&plan), plan_json(&plan));
    assert!(!text.contains(PASSWORD) && !json.contains(PASSWORD));
    assert!(text.contains("password = (sensitive value)"), "{text}");
}

#[test]
fn markup_in_names_and_values_passes_through_unchanged_in_text() {
    let text = plan_text(&representative());
    assert!(text.contains(ODD_KEY), "{text}");
    assert!(text.contains("**bold** <b>html</b> | pipe"), "{text}");
}

#[test]
fn a_clean_plan_says_no_changes() {
    let text = plan_text(&World::applied().plan());
    insta::assert_snapshot!("no_changes_text", text);
    assert!(text.starts_with("\nNo changes. Your infrastructure matches the configuration."));
}

#[test]
fn a_clean_plan_with_pending_drift_still_reports_the_drift() {
    let mut world = World::applied();
    world.live_mut().pending.push(PendingEntry {
        key: "features".to_owned(),
        value: None,
        pending: Some("nesting=1".to_owned()),
        delete: false,
    });
    let text = plan_text(&world.plan());
    assert!(
        text.contains("Objects have changed outside of atoll"),
        "{text}"
    );
    assert!(
        text.contains("features already pending on the guest"),
        "{text}"
    );
    assert!(text.contains("No changes."), "{text}");
}

#[test]
fn a_sensitive_value_pending_on_the_guest_is_not_shown_in_drift() {
    let mut world = World::applied();
    let secret = atoll::proxmox::plan::Secret::new("s3cret-description");
    if let Some(atoll::proxmox::plan::StateEntry::Guest { attributes, .. }) =
        world.state.first_mut()
    {
        let fingerprint = atoll::proxmox::plan::StateValue::Fingerprint(secret.fingerprint());
        attributes.insert("description".to_owned(), fingerprint);
    }
    let value = atoll::proxmox::plan::DesiredValue::Sensitive(secret);
    world
        .guest_mut()
        .config
        .insert("description".to_owned(), value);
    world
        .live_mut()
        .config
        .insert("description".to_owned(), "s3cret-description\n".to_owned());
    world.pending("description", "s3cret-description", "s3cret-description-v2");
    let plan = world.plan();
    let (text, json) = (plan_text(&plan), plan_json(&plan));
    assert!(
        text.contains("description already pending on the guest ((sensitive value))"),
        "{text}"
    );
    assert!(
        !text.contains("s3cret") && !json.contains("s3cret"),
        "{text}\n{json}"
    );
}
