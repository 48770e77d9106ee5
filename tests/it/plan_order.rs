//! Downloads and the apply order: templates before the guests that use them, replace as
//! delete then create, downloads that vanished from storage downloaded again.

use crate::plan_support;

use atoll::proxmox::plan::{Action, Desired, StateEntry, StepOp, steps};
use plan_support::{World, address, desired_guest, download};

#[test]
fn downloads_come_before_the_guests_that_use_them_and_replace_is_delete_then_create() {
    let mut world = World::applied();
    world.set("unprivileged", "0");
    let template = download("debian");
    let mut gitea = desired_guest("dev-gitea", 2101);
    gitea.uses = vec![template.address.clone()];
    world.desired.push(Desired::Guest(gitea));
    world.desired.push(Desired::Download(template.clone()));
    let plan = world.plan();
    let order: Vec<(String, StepOp)> = steps(&plan)
        .into_iter()
        .map(|s| (s.address, s.op))
        .collect();
    let expected = vec![
        (template.address, StepOp::Create),
        (address("dev-nextcloud"), StepOp::Delete),
        (address("dev-nextcloud"), StepOp::Create),
        (address("dev-gitea"), StepOp::Create),
    ];
    assert_eq!(order, expected);
}

#[test]
fn a_download_present_in_storage_and_state_is_unchanged() {
    let mut world = World::applied();
    let template = download("debian");
    world
        .inventory
        .volumes
        .insert("mk33".to_owned(), vec![template.volid()]);
    world.state.push(StateEntry::Download {
        address: template.address.clone(),
        resource_type: template.resource_type.clone(),
        node: "mk33".to_owned(),
        volid: template.volid(),
        arguments: template.arguments.clone(),
    });
    world.desired.push(Desired::Download(template.clone()));
    assert!(world.plan().is_empty());
    world.inventory.volumes.clear();
    let plan = world.plan();
    let again = plan
        .resource_changes
        .iter()
        .find(|c| c.address == template.address);
    assert_eq!(again.map(|c| c.actions.clone()), Some(vec![Action::Create]));
}
