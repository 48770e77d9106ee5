//! The order apply executes a plan in: downloads before the guests that use them, a replace
//! as delete then create, downloads deleted only after the guests that used them.

use super::change::{Action, Plan, ResourceChange};

/// One step of an apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepOp {
    Create,
    Update,
    Delete,
}

/// A step: what to do to which resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub address: String,
    pub op: StepOp,
}

fn is_guest(change: &ResourceChange) -> bool {
    change.kind.is_some() || change.vm_id.is_some()
}

/// The steps of a plan, in execution order. Blocked and no-op resources have no steps.
pub fn steps(plan: &Plan) -> Vec<Step> {
    let active: Vec<&ResourceChange> = plan
        .resource_changes
        .iter()
        .filter(|c| c.blocked.is_none() && !c.is_no_op())
        .collect();
    let step = |change: &ResourceChange, op| Step {
        address: change.address.clone(),
        op,
    };
    let mut out = Vec::new();
    // 1. downloads created or replaced, so templates exist before guests are created
    for change in active
        .iter()
        .filter(|c| !is_guest(c) && c.actions.contains(&Action::Create))
    {
        if change.is_replace() {
            out.push(step(change, StepOp::Delete));
        }
        out.push(step(change, StepOp::Create));
    }
    // generated values updated in place (`terraform_data.input`), as state changes alone
    out.extend(
        active
            .iter()
            .filter(|c| !is_guest(c) && c.actions == [Action::Update])
            .map(|c| step(c, StepOp::Update)),
    );
    // 2. guests: deletes, then replaces (delete then create), creates, updates
    let guests: Vec<&&ResourceChange> = active.iter().filter(|c| is_guest(c)).collect();
    out.extend(
        guests
            .iter()
            .filter(|c| c.actions == [Action::Delete])
            .map(|c| step(c, StepOp::Delete)),
    );
    for change in guests.iter().filter(|c| c.is_replace()) {
        out.push(step(change, StepOp::Delete));
        out.push(step(change, StepOp::Create));
    }
    out.extend(
        guests
            .iter()
            .filter(|c| c.actions == [Action::Create])
            .map(|c| step(c, StepOp::Create)),
    );
    out.extend(
        guests
            .iter()
            .filter(|c| c.actions == [Action::Update])
            .map(|c| step(c, StepOp::Update)),
    );
    // 3. downloads no longer declared, once nothing uses them
    let removed = active
        .iter()
        .filter(|c| !is_guest(c) && c.actions == [Action::Delete]);
    out.extend(removed.map(|c| step(c, StepOp::Delete)));
    out
}
