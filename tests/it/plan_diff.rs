//! The plan diff: desired × state × inventory -> actions, effects, disruption and drift.

use crate::plan_support;

use atoll::proxmox::plan::{Action, Desired, DesiredValue, Effect, PlanError, Power, Secret};
use plan_support::{PASSWORD, World, address, desired_guest};
use serde_json::json;

fn only(plan: &atoll::proxmox::plan::Plan) -> &atoll::proxmox::plan::ResourceChange {
    assert_eq!(plan.resource_changes.len(), 1, "{plan:#?}");
    &plan.resource_changes[0]
}

fn paths(change: &atoll::proxmox::plan::ResourceChange) -> Vec<(&str, Option<Effect>)> {
    change
        .attributes
        .iter()
        .map(|a| (a.path.as_str(), a.effect))
        .collect()
}

#[test]
fn second_plan_after_apply_shows_no_changes() {
    let plan = World::applied().plan();
    assert!(
        plan.is_empty(),
        "{:#?}",
        plan.resource_changes[0].attributes
    );
    assert_eq!(only(&plan).actions, vec![Action::NoOp]);
    assert!(only(&plan).drift.is_empty(), "{:#?}", only(&plan).drift);
}

#[test]
fn cpu_units_change_on_a_running_guest_is_a_live_update() {
    let mut world = World::applied();
    world.set("cpuunits", "200");
    let plan = world.plan();
    let change = only(&plan);
    assert_eq!(change.actions, vec![Action::Update]);
    assert_eq!(change.disruption, Some(Effect::Live));
    assert_eq!(paths(change), vec![("cpu.units", Some(Effect::Live))]);
    assert_eq!(
        (&change.attributes[0].before, &change.attributes[0].after),
        (&json!(100), &json!(200))
    );
    assert_eq!(plan.summary.restart, 0);
}

#[test]
fn enabling_nesting_needs_a_restart() {
    let mut world = World::applied();
    world.set("features", "nesting=1");
    world.set("cores", "4");
    let plan = world.plan();
    let change = only(&plan);
    assert_eq!(change.disruption, Some(Effect::Restart));
    let expected = vec![
        ("cpu.cores", Some(Effect::Live)),
        ("features.nesting", Some(Effect::Restart)),
    ];
    assert_eq!(paths(change), expected);
    assert_eq!(change.attributes[1].before, json!(null));
    assert_eq!(change.attributes[1].after, json!(true));
    assert_eq!((plan.summary.change, plan.summary.restart), (1, 1));
}

#[test]
fn bridge_change_resets_the_link_and_ip_change_is_live() {
    let mut world = World::applied();
    world.set("net0", "name=eth0,bridge=vmbr1,ip=10.0.0.5/24,gw=10.0.0.1");
    let change_plan = world.plan();
    let change = only(&change_plan);
    assert_eq!(change.disruption, Some(Effect::LinkReset));
    let expected = vec![
        (
            "initialization.ip_config[0].ipv4.address",
            Some(Effect::Live),
        ),
        (
            "initialization.ip_config[0].ipv4.gateway",
            Some(Effect::Live),
        ),
        ("network_interface[0].bridge", Some(Effect::LinkReset)),
    ];
    assert_eq!(paths(change), expected);
}

#[test]
fn rootfs_on_another_datastore_replaces_the_guest() {
    let mut world = World::applied();
    world.set("rootfs", "zfs-pool:8");
    let plan = world.plan();
    let change = only(&plan);
    assert_eq!(change.actions, vec![Action::Delete, Action::Create]);
    assert_eq!(change.disruption, Some(Effect::Replace));
    assert_eq!(
        paths(change),
        vec![("disk.datastore_id", Some(Effect::Replace))]
    );
    assert_eq!(change.attributes[0].after, json!("zfs-pool"));
    assert_eq!(
        (plan.summary.add, plan.summary.destroy, plan.summary.replace),
        (1, 1, 1)
    );
}

#[test]
fn growing_the_root_disk_is_live() {
    let mut world = World::applied();
    world.set("rootfs", "local-lvm:16");
    let plan = world.plan();
    assert_eq!(paths(only(&plan)), vec![("disk.size", Some(Effect::Live))]);
    assert_eq!(only(&plan).attributes[0].after, json!(16));
}

#[test]
fn prevent_destroy_on_a_replacement_is_an_error() {
    let mut world = World::applied();
    world.set("unprivileged", "0");
    world.guest_mut().lifecycle.prevent_destroy = true;
    let errors = world
        .try_plan()
        .expect_err("prevent_destroy must stop the plan");
    let expected = PlanError::PreventDestroy {
        address: address("dev-nextcloud"),
        action: "replace",
    };
    assert_eq!(errors.0, vec![expected]);
    assert!(
        errors.to_string().contains("remove prevent_destroy"),
        "{errors}"
    );
}

#[test]
fn ignore_changes_hides_the_attribute_and_its_block() {
    let mut world = World::applied();
    world.set("cpuunits", "300");
    world.set("memory", "4096");
    world.guest_mut().lifecycle.ignore_changes = vec!["cpu".to_owned()];
    let plan = world.plan();
    assert_eq!(
        paths(only(&plan)),
        vec![("memory.dedicated", Some(Effect::Live))]
    );
}

#[test]
fn changes_already_pending_on_the_guest_are_drift() {
    let mut world = World::applied();
    world.pending("features", "nesting=0", "nesting=1,keyctl=1");
    let plan = world.plan();
    let change = only(&plan);
    assert!(change.is_no_op());
    assert_eq!(change.drift.pending.len(), 1);
    assert_eq!(change.drift.pending[0].path, "features");
    assert_eq!(change.drift.pending[0].pending, json!("nesting=1,keyctl=1"));
}

#[test]
fn a_value_changed_outside_atoll_is_drift_and_is_changed_back() {
    let mut world = World::applied();
    world
        .live_mut()
        .config
        .insert("memory".to_owned(), "4096".to_owned());
    let plan = world.plan();
    let change = only(&plan);
    assert_eq!(change.drift.changed_outside.len(), 1);
    assert_eq!(change.drift.changed_outside[0].path, "memory.dedicated");
    assert_eq!(
        (
            &change.drift.changed_outside[0].state,
            &change.drift.changed_outside[0].live
        ),
        (&json!(2048), &json!(4096))
    );
    assert_eq!(
        paths(change),
        vec![("memory.dedicated", Some(Effect::Live))]
    );
}

#[test]
fn every_change_to_a_stopped_guest_is_deferred_and_it_is_started() {
    let mut world = World::applied();
    world.live_mut().power = Power::Stopped;
    world.set("features", "nesting=1");
    let plan = world.plan();
    let change = only(&plan);
    let expected = vec![
        ("features.nesting", Some(Effect::Deferred)),
        ("started", Some(Effect::Live)),
    ];
    assert_eq!(paths(change), expected);
    assert_eq!(change.disruption, Some(Effect::Deferred));
}

#[test]
fn stopping_a_running_guest_is_reported_as_taking_it_down() {
    let mut world = World::applied();
    world.guest_mut().started = false;
    let plan = world.plan();
    let change = only(&plan);
    assert_eq!(paths(change), vec![("started", Some(Effect::Restart))]);
    assert_eq!(
        plan.summary.restart, 0,
        "a stop is not counted as a restart"
    );
    assert_eq!(change.attributes[0].after, json!(false));
}

#[test]
fn a_resource_removed_from_the_configuration_is_destroyed() {
    let mut world = World::applied();
    world.desired.clear();
    let plan = world.plan();
    let change = only(&plan);
    assert_eq!(change.actions, vec![Action::Delete]);
    assert_eq!(change.vm_id, Some(2100));
    assert_eq!(plan.summary.destroy, 1);
    let password = change
        .attributes
        .iter()
        .find(|a| a.path == "initialization.user_account.password");
    let password = password.expect("the password attribute is listed");
    assert!(password.before_sensitive && password.before.is_null());
}

#[test]
fn a_new_guest_is_created_with_its_password_hidden() {
    let mut world = World::applied();
    let mut guest = desired_guest("dev-gitea", 2101);
    guest.vm_id = None;
    world.desired.push(Desired::Guest(guest));
    let plan = world.plan();
    let created = plan
        .resource_changes
        .iter()
        .find(|c| c.address == address("dev-gitea"));
    let created = created.expect("dev-gitea is planned");
    assert_eq!(created.actions, vec![Action::Create]);
    let vm_id = created
        .attributes
        .iter()
        .find(|a| a.path == "vm_id")
        .expect("vm_id is listed");
    assert!(vm_id.after_unknown);
    let json = serde_json::to_string(&plan).expect("the plan serialises");
    assert!(
        !json.contains(PASSWORD),
        "the password leaked into the JSON plan"
    );
    assert_eq!((plan.summary.add, plan.summary.change), (1, 0));
}

#[test]
fn a_changed_password_forces_replacement_without_showing_either_value() {
    let mut world = World::applied();
    let secret = DesiredValue::Sensitive(Secret::new("another-secret"));
    world
        .guest_mut()
        .config
        .insert("password".to_owned(), secret);
    let plan = world.plan();
    let change = only(&plan);
    assert!(change.is_replace());
    let attribute = &change.attributes[0];
    assert_eq!(attribute.path, "initialization.user_account.password");
    assert!(attribute.before_sensitive && attribute.after_sensitive);
    assert!(attribute.before.is_null() && attribute.after.is_null());
}

#[test]
fn an_unknown_value_is_known_after_apply_with_the_worst_effect() {
    let mut world = World::applied();
    world
        .guest_mut()
        .config
        .insert("net0".to_owned(), DesiredValue::Unknown);
    let plan = world.plan();
    let change = only(&plan);
    assert_eq!(
        paths(change),
        vec![("network_interface[0]", Some(Effect::LinkReset))]
    );
    assert!(change.attributes[0].after_unknown);
}

#[test]
fn a_guest_deleted_outside_atoll_is_created_again() {
    let mut world = World::applied();
    world.inventory.guests.clear();
    let plan = world.plan();
    let change = only(&plan);
    assert_eq!(change.actions, vec![Action::Create]);
    assert!(
        change.drift.notes[0].contains("removed outside atoll"),
        "{:?}",
        change.drift.notes
    );
}

#[test]
fn a_nic_no_longer_configured_is_removed_and_its_link_goes_away() {
    let mut world = World::applied();
    let net1 = "name=eth1,bridge=vmbr1,hwaddr=BC:24:11:5E:7A:02,ip=dhcp,type=veth";
    world
        .live_mut()
        .config
        .insert("net1".to_owned(), net1.to_owned());
    if let Some(atoll::proxmox::plan::StateEntry::Guest { attributes, .. }) =
        world.state.first_mut()
    {
        let applied = atoll::proxmox::plan::StateValue::Plain("name=eth1,bridge=vmbr1".to_owned());
        attributes.insert("net1".to_owned(), applied);
    }
    let plan = world.plan();
    let change = only(&plan);
    assert_eq!(
        paths(change),
        vec![("network_interface[1]", Some(Effect::LinkReset))]
    );
    assert!(change.attributes[0].after.is_null());
}

#[test]
fn two_guests_with_the_same_vm_id_are_an_error() {
    let mut world = World::applied();
    world
        .desired
        .push(Desired::Guest(desired_guest("dev-gitea", 2100)));
    let errors = world
        .try_plan()
        .expect_err("duplicate vm_id must stop the plan");
    assert!(
        matches!(errors.0[0], PlanError::DuplicateVmId { vm_id: 2100, .. }),
        "{errors}"
    );
}

#[test]
fn a_live_guest_on_another_node_than_desired_is_moved_by_replacement() {
    let mut world = World::applied();
    world.live_mut().node = "mk34".to_owned();
    let plan = world.plan();
    let change = only(&plan);
    assert!(change.is_replace());
    assert_eq!(paths(change), vec![("node_name", Some(Effect::Replace))]);
}

#[test]
fn a_change_left_pending_by_an_earlier_apply_is_pending_drift_and_needs_a_restart() {
    let mut world = World::applied();
    world.set("features", "nesting=1");
    if let Some(atoll::proxmox::plan::StateEntry::Guest { attributes, .. }) =
        world.state.first_mut()
    {
        let applied = atoll::proxmox::plan::StateValue::Plain("nesting=1".to_owned());
        attributes.insert("features".to_owned(), applied);
    }
    world.pending("features", "", "nesting=1");
    let plan = world.plan();
    let change = only(&plan);
    assert_eq!(
        paths(change),
        vec![("features.nesting", Some(Effect::Restart))]
    );
    assert_eq!(change.drift.pending.len(), 1);
    assert!(
        change.drift.changed_outside.is_empty(),
        "{:?}",
        change.drift.changed_outside
    );
}
