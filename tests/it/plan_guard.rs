//! The self-host guard: protected guests (configured or discovered by MAC) and each refusal
//! rule, at plan time and again at apply time.

use crate::plan_support;

use atoll::proxmox::guard::{GuardPolicy, ProtectSpec, ProtectedSet, SelfGuest, check, recheck};
use atoll::proxmox::plan::{GuardRule, GuestKind, LiveGuest, Plan, Power};
use plan_support::World;

const STRICT: GuardPolicy = GuardPolicy {
    allow_live_changes: false,
};
const LIVE_OK: GuardPolicy = GuardPolicy {
    allow_live_changes: true,
};
const OWN_MAC: &str = "bc:24:11:5e:7a:01";

fn by_vm_id() -> ProtectedSet {
    ProtectedSet::resolve(&[ProtectSpec::VmId(2100)], None, [])
}

/// atoll's own guest as `proxmox::discover` reports it (MAC matching itself is tested in
/// `tests/pve_client_discover.rs`): the fixture guest 2100 carries `OWN_MAC` on `net0`.
fn discovered(world: &World) -> ProtectedSet {
    let own = SelfGuest {
        vm_id: 2100,
        node: "mk33".to_owned(),
        mac: OWN_MAC.to_ascii_uppercase(),
    };
    ProtectedSet::resolve(&[], Some(&own), world.inventory.guests.values())
}

fn guarded(world: &World, protected: &ProtectedSet, policy: GuardPolicy) -> Plan {
    let mut plan = world.plan();
    check(&mut plan, protected, policy, &world.desired);
    plan
}

fn rule(plan: &Plan) -> Option<GuardRule> {
    plan.resource_changes[0].blocked.as_ref().map(|b| b.rule)
}

fn reason(plan: &Plan) -> String {
    plan.resource_changes[0]
        .blocked
        .as_ref()
        .map(|b| b.reason.clone())
        .unwrap_or_default()
}

#[test]
fn a_restart_of_a_protected_guest_is_blocked_with_the_reason() {
    let mut world = World::applied();
    world.set("features", "nesting=1");
    let plan = guarded(&world, &by_vm_id(), LIVE_OK);
    assert_eq!(rule(&plan), Some(GuardRule::Restart));
    let reason = reason(&plan);
    assert!(
        reason.contains("2100") && reason.contains("features.nesting"),
        "{reason}"
    );
    assert!(reason.contains("protect.guests"), "{reason}");
    assert_eq!(plan.summary.blocked, 1);
}

#[test]
fn a_link_reset_of_atolls_own_guest_found_by_mac_is_blocked() {
    let mut world = World::applied();
    world.set("net0", "name=eth0,bridge=vmbr1,ip=dhcp");
    let protected = discovered(&world);
    let plan = guarded(&world, &protected, LIVE_OK);
    assert_eq!(rule(&plan), Some(GuardRule::LinkReset));
    assert!(
        reason(&plan).contains("BC:24:11:5E:7A:01"),
        "{}",
        reason(&plan)
    );
}

#[test]
fn destroying_a_protected_guest_is_blocked() {
    let mut world = World::applied();
    world.desired.clear();
    assert_eq!(
        rule(&guarded(&world, &by_vm_id(), LIVE_OK)),
        Some(GuardRule::Destroy)
    );
}

#[test]
fn replacing_a_protected_guest_is_blocked() {
    let mut world = World::applied();
    world.set("unprivileged", "0");
    let plan = guarded(&world, &by_vm_id(), LIVE_OK);
    assert_eq!(rule(&plan), Some(GuardRule::Replace));
    assert!(reason(&plan).contains("unprivileged"), "{}", reason(&plan));
}

#[test]
fn moving_a_protected_guest_to_another_node_is_blocked() {
    let mut world = World::applied();
    world.guest_mut().node = "mk34".to_owned();
    assert_eq!(
        rule(&guarded(&world, &by_vm_id(), LIVE_OK)),
        Some(GuardRule::Move)
    );
}

#[test]
fn stopping_a_protected_guest_is_blocked() {
    let mut world = World::applied();
    world.guest_mut().started = false;
    assert_eq!(
        rule(&guarded(&world, &by_vm_id(), LIVE_OK)),
        Some(GuardRule::Stop)
    );
}

#[test]
fn a_live_change_is_blocked_unless_live_changes_are_allowed() {
    let mut world = World::applied();
    world.set("cpuunits", "200");
    let strict = guarded(&world, &by_vm_id(), STRICT);
    assert_eq!(rule(&strict), Some(GuardRule::LiveChange));
    assert!(
        reason(&strict).contains("allow_live_changes"),
        "{}",
        reason(&strict)
    );
    assert_eq!(rule(&guarded(&world, &by_vm_id(), LIVE_OK)), None);
}

#[test]
fn a_deferred_change_counts_as_a_live_change() {
    let mut world = World::applied();
    world.set("hostname", "renamed");
    assert_eq!(
        rule(&guarded(&world, &by_vm_id(), STRICT)),
        Some(GuardRule::LiveChange)
    );
}

#[test]
fn unprotected_guests_and_unchanged_protected_guests_are_not_blocked() {
    let mut world = World::applied();
    let other = ProtectedSet::resolve(&[ProtectSpec::VmId(999)], None, []);
    assert_eq!(rule(&guarded(&world, &by_vm_id(), STRICT)), None);
    world.set("features", "nesting=1");
    assert_eq!(rule(&guarded(&world, &other, STRICT)), None);
}

#[test]
fn a_guest_protected_by_name_is_matched_on_its_node_only() {
    let mut world = World::applied();
    world.set("features", "nesting=1");
    let name = |node: &str| ProtectSpec::Name {
        name: "dev-nextcloud".to_owned(),
        node: Some(node.to_owned()),
    };
    let here = ProtectedSet::resolve(&[name("mk33")], None, world.inventory.guests.values());
    let elsewhere = ProtectedSet::resolve(&[name("mk99")], None, world.inventory.guests.values());
    assert_eq!(
        rule(&guarded(&world, &here, LIVE_OK)),
        Some(GuardRule::Restart)
    );
    assert_eq!(rule(&guarded(&world, &elsewhere, LIVE_OK)), None);
}

#[test]
fn creating_a_guest_with_a_protected_vm_id_is_blocked() {
    let mut world = World::applied();
    world.state.clear();
    world.inventory.guests.clear();
    let plan = guarded(&world, &by_vm_id(), LIVE_OK);
    assert_eq!(rule(&plan), Some(GuardRule::VmIdTaken));
}

#[test]
fn a_plan_made_before_the_guest_became_protected_is_refused_at_apply() {
    let mut world = World::applied();
    world.set("features", "nesting=1");
    let plan = guarded(&world, &ProtectedSet::default(), STRICT);
    assert_eq!(plan.summary.blocked, 0);
    assert!(recheck(&plan, &ProtectedSet::default(), STRICT, &world.desired).is_ok());
    let refusal = recheck(&plan, &by_vm_id(), STRICT, &world.desired)
        .expect_err("the guest is protected now");
    assert_eq!(refusal.refusals.len(), 1);
    assert_eq!(refusal.refusals[0].1.rule, GuardRule::Restart);
    assert!(refusal.to_string().contains("make a new plan"), "{refusal}");
}

#[test]
fn a_saved_plan_read_back_from_json_is_rechecked_the_same_way() {
    let mut world = World::applied();
    world.set("features", "nesting=1");
    let plan = world.plan();
    let saved = serde_json::to_string(&plan).expect("the plan serialises");
    let loaded: Plan = serde_json::from_str(&saved).expect("the plan reads back");
    assert_eq!(loaded, plan);
    assert!(recheck(&loaded, &by_vm_id(), LIVE_OK, &world.desired).is_err());
}

fn qemu(vm_id: u32, net0: &str) -> LiveGuest {
    LiveGuest {
        vm_id,
        node: "mk33".to_owned(),
        kind: GuestKind::Qemu,
        name: Some(format!("vm{vm_id}")),
        power: Power::Running,
        config: [("net0".to_owned(), net0.to_owned())].into_iter().collect(),
        pending: Vec::new(),
    }
}

#[test]
fn changes_blocked_at_plan_time_are_skipped_not_refused_at_apply() {
    let mut world = World::applied();
    world.set("features", "nesting=1");
    let plan = guarded(&world, &by_vm_id(), LIVE_OK);
    assert_eq!(plan.summary.blocked, 1);
    assert!(recheck(&plan, &by_vm_id(), LIVE_OK, &world.desired).is_ok());
    assert!(atoll::proxmox::plan::steps(&plan).is_empty());
}

#[test]
fn an_address_change_of_a_protected_guest_is_blocked_even_when_live_changes_are_allowed() {
    let mut world = World::applied();
    world.set("net0", "name=eth0,bridge=vmbr0,ip=10.0.0.9/24,gw=10.0.0.1");
    let plan = guarded(&world, &by_vm_id(), LIVE_OK);
    assert_eq!(rule(&plan), Some(GuardRule::LinkReset));
    assert!(reason(&plan).contains("ipv4.address"), "{}", reason(&plan));
}

/// atoll running in a VM: the VM is found by its `virtio=` MAC and QEMU's rules apply.
fn vm_world(desired_config: &[(&str, &str)]) -> World {
    use atoll::proxmox::plan::{
        Desired, DesiredGuest, DesiredValue, Lifecycle, StateEntry, StateValue,
    };
    let config: std::collections::BTreeMap<String, DesiredValue> = desired_config
        .iter()
        .map(|(k, v)| ((*k).to_owned(), DesiredValue::Known((*v).to_owned())))
        .collect();
    let attributes = desired_config
        .iter()
        .map(|(k, _)| ((*k).to_owned(), StateValue::Plain(String::new())))
        .collect();
    let mut live = qemu(300, "virtio=BC:24:11:AA:BB:CC,bridge=vmbr0");
    live.config.insert("cores".to_owned(), "2".to_owned());
    live.config.insert("cpuunits".to_owned(), "100".to_owned());
    let mut inventory = atoll::proxmox::plan::Inventory::default();
    inventory.guests.insert(300, live);
    let address = "proxmox_virtual_environment_vm.atoll".to_owned();
    let state = vec![StateEntry::Guest {
        address: address.clone(),
        resource_type: "proxmox_virtual_environment_vm".to_owned(),
        kind: GuestKind::Qemu,
        node: "mk33".to_owned(),
        vm_id: 300,
        attributes,
    }];
    let desired = vec![Desired::Guest(DesiredGuest {
        address,
        resource_type: "proxmox_virtual_environment_vm".to_owned(),
        kind: GuestKind::Qemu,
        node: "mk33".to_owned(),
        vm_id: Some(300),
        config,
        started: true,
        lifecycle: Lifecycle::default(),
        uses: Vec::new(),
    })];
    World {
        desired,
        state,
        inventory,
    }
}

#[test]
fn atolls_own_vm_follows_qemu_rules_cpu_units_live_cores_restart() {
    for (config, expected) in [
        (("cpuunits", "200"), None),
        (("cores", "4"), Some(GuardRule::Restart)),
    ] {
        let world = vm_world(&[config]);
        let own = own_vm(&world);
        let protected = ProtectedSet::resolve(&[], Some(&own), world.inventory.guests.values());
        let plan = guarded(&world, &protected, LIVE_OK);
        assert_eq!(
            rule(&plan),
            expected,
            "{config:?}: {:#?}",
            plan.resource_changes[0]
        );
        assert!(!plan.is_empty(), "{config:?} is a change");
    }
}

/// The VM of `vm_world` as discovery reports it (it carries `BC:24:11:AA:BB:CC`).
fn own_vm(world: &World) -> SelfGuest {
    let vm = world
        .inventory
        .guests
        .values()
        .next()
        .expect("vm_world has one guest");
    SelfGuest {
        vm_id: vm.vm_id,
        node: vm.node.clone(),
        mac: "BC:24:11:AA:BB:CC".to_owned(),
    }
}

/// `World::applied()` with the protected guest 2100 on `vmbr0` as `net0`, plus a new guest
/// 2200 whose `net0` is `intruder_net0`.
fn identity_world(protected_net0: &str, intruder_net0: &str) -> World {
    let mut world = World::applied();
    let live = world.live_mut();
    live.config
        .insert("net0".to_owned(), protected_net0.to_owned());
    let mut intruder = plan_support::desired_guest("intruder", 2200);
    intruder.config.insert(
        "net0".to_owned(),
        atoll::proxmox::plan::DesiredValue::Known(intruder_net0.to_owned()),
    );
    world
        .desired
        .push(atoll::proxmox::plan::Desired::Guest(intruder));
    world
}

/// The intruder's guard decision, with 2100 protected and its config known to the guard.
fn intruder_blocked(world: &World) -> Option<atoll::proxmox::plan::Blocked> {
    let protected = ProtectedSet::resolve(
        &[ProtectSpec::VmId(2100)],
        None,
        world.inventory.guests.values(),
    );
    let plan = guarded(world, &protected, LIVE_OK);
    let intruder = plan_support::address("intruder");
    let change = plan.resource_changes.iter().find(|c| c.address == intruder);
    change.and_then(|c| c.blocked.clone())
}

const PROTECTED_NET0: &str =
    "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:AA:BB:01,ip=10.0.0.5/24,ip6=fd00::5/64,type=veth";

#[test]
fn a_new_guest_with_a_protected_guests_mac_in_any_case_is_blocked_naming_guest_and_mac() {
    let world = identity_world(
        PROTECTED_NET0,
        "name=eth0,bridge=vmbr1,hwaddr=bc:24:11:aa:bb:01",
    );
    let blocked = intruder_blocked(&world).expect("blocked");
    assert_eq!(blocked.rule, GuardRule::NetworkIdentity);
    assert!(
        blocked.reason.contains("2100") && blocked.reason.contains("BC:24:11:AA:BB:01"),
        "{}",
        blocked.reason
    );
}

#[test]
fn a_static_address_of_a_protected_guest_is_refused_only_on_its_bridge_and_vlan() {
    let on = |net0: &str| intruder_blocked(&identity_world(PROTECTED_NET0, net0));
    let same = on("name=eth0,bridge=vmbr0,ip=10.0.0.5/24").expect("same bridge");
    assert!(
        same.reason.contains("10.0.0.5") && same.reason.contains("vmbr0"),
        "{}",
        same.reason
    );
    assert!(
        on("name=eth0,bridge=vmbr0,ip6=fd00:0::5/64").is_some(),
        "IPv6"
    );
    assert_eq!(
        on("name=eth0,bridge=vmbr1,ip=10.0.0.5/24"),
        None,
        "other bridge"
    );
    assert_eq!(
        on("name=eth0,bridge=vmbr0,tag=20,ip=10.0.0.5/24"),
        None,
        "other VLAN"
    );
    assert_eq!(
        on("name=eth0,bridge=vmbr0,ip=10.0.0.6/24"),
        None,
        "other address"
    );
    assert_eq!(
        on("name=eth0,bridge=vmbr0,ip=dhcp"),
        None,
        "dhcp claims nothing"
    );
}

#[test]
fn an_address_the_protected_guest_has_pending_is_refused_too() {
    let mut world = identity_world(PROTECTED_NET0, "name=eth0,bridge=vmbr0,ip=10.0.0.7/24");
    assert_eq!(intruder_blocked(&world), None);
    let next = "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:AA:BB:01,ip=10.0.0.7/24,type=veth";
    world.pending("net0", PROTECTED_NET0, next);
    assert!(intruder_blocked(&world).is_some(), "pending net0");
}

#[test]
fn an_update_that_takes_a_protected_mac_is_blocked_and_so_is_its_saved_plan_at_apply() {
    // The protected guest is 2200 now; the applied guest 2100 is updated to take its MAC.
    let mut world = World::applied();
    world.set(
        "net0",
        "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:AA:BB:02,ip=dhcp",
    );
    let mut other = plan_support::live_guest("db", 2200);
    other.config.insert(
        "net0".to_owned(),
        "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:AA:BB:03,ip=dhcp,type=veth".to_owned(),
    );
    world.inventory.guests.insert(2200, other.clone());
    let protect = |world: &World| {
        ProtectedSet::resolve(
            &[ProtectSpec::VmId(2200)],
            None,
            world.inventory.guests.values(),
        )
    };
    let plan = guarded(&world, &protect(&world), LIVE_OK);
    assert_eq!(plan.summary.blocked, 0, "{:#?}", plan.resource_changes);
    // Before the apply, the protected guest's MAC became the one the plan gives 2100.
    other.config.insert(
        "net0".to_owned(),
        "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:AA:BB:02,ip=dhcp,type=veth".to_owned(),
    );
    world.inventory.guests.insert(2200, other);
    assert_eq!(
        rule(&guarded(&world, &protect(&world), LIVE_OK)),
        Some(GuardRule::NetworkIdentity)
    );
    let refusal = recheck(&plan, &protect(&world), LIVE_OK, &world.desired).expect_err("refused");
    assert!(
        refusal.to_string().contains("BC:24:11:AA:BB:02"),
        "{refusal}"
    );
}
