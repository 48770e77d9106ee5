//! `moved` and `removed` blocks against the loaded state, as Terraform 1.15 applies them
//! (checked with its oracle, `tests/oracle/moved.txt`): moves rename state addresses before the
//! plan (chains followed to their end, whole resources and module instances with their keys),
//! a move onto an object already in state is left undone with Terraform's warning, and
//! `destroy = false` turns a destroy into a forget. Nothing here talks to the cluster; apply
//! persists what the plan says in one store transaction ([`persist`]).

use std::collections::{BTreeMap, BTreeSet};

use tfconfig::{MoveStatement, Removal};

use super::EngineError;
use crate::proxmox::plan::{Action, Plan, ResourceChange, StateEntry};
use crate::proxmox::state::{ProjectState, StateHandle};

/// The renames a plan makes, and the moves left undone (their target is taken).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Renames {
    /// `from` -> `to`, by final address.
    pub(crate) moved: BTreeMap<String, String>,
    pub(crate) unresolved: Vec<(String, String)>,
}

/// Where `address` goes under one statement, if it matches.
fn target(statement: &MoveStatement, address: &str) -> Option<String> {
    let (from, to) = (statement.from.as_str(), statement.to.as_str());
    let rest = address.strip_prefix(from)?;
    let follows = match (statement.module, statement.keyed) {
        // a whole module call: its instances keep their keys
        (true, false) => rest.starts_with('.') || rest.starts_with('['),
        (true, true) => rest.starts_with('.'),
        // a whole resource: its instances keep their keys
        (false, false) => rest.is_empty() || rest.starts_with('['),
        (false, true) => rest.is_empty(),
    };
    follows.then(|| format!("{to}{rest}"))
}

/// The addresses in state after every statement, followed through chains. A chain that
/// comes back on itself is refused as Terraform refuses it.
pub(crate) fn resolve(
    statements: &[MoveStatement],
    state: &ProjectState,
) -> Result<Renames, EngineError> {
    let mut renames = Renames::default();
    if statements.is_empty() {
        return Ok(renames);
    }
    let addresses: BTreeSet<&str> = state
        .entries
        .iter()
        .map(StateEntry::address)
        .chain(state.generated.iter().map(|g| g.address.as_str()))
        .collect();
    let mut taken: BTreeSet<String> = BTreeSet::new();
    for address in &addresses {
        let mut current = (*address).to_owned();
        let mut steps = 0;
        while let Some(next) = statements.iter().find_map(|s| target(s, &current)) {
            steps += 1;
            if steps > statements.len() {
                let chain: Vec<String> = statements
                    .iter()
                    .filter(|s| target(s, &current).is_some())
                    .map(|s| format!("  - {}: {} → {}", s.declared_at, s.from, s.to))
                    .collect();
                return Err(EngineError::Config(format!(
                    "Error: Cyclic dependency in move statements\n\nThe following chained move \
                     statements form a cycle, and so there is no final location to move objects \
                     to:\n{}\n\nA chain of move statements must end with an address that \
                     doesn't appear in any other statements, and which typically also refers to \
                     an object still declared in the configuration.",
                    chain.join("\n")
                )));
            }
            current = next;
        }
        if current == *address {
            continue;
        }
        if (addresses.contains(current.as_str()) && !moves_away(statements, &current))
            || taken.contains(&current)
        {
            renames.unresolved.push(((*address).to_owned(), current));
            continue;
        }
        taken.insert(current.clone());
        renames.moved.insert((*address).to_owned(), current);
    }
    Ok(renames)
}

fn moves_away(statements: &[MoveStatement], address: &str) -> bool {
    statements.iter().any(|s| target(s, address).is_some())
}

/// The state as the moves leave it, for the plan.
pub(crate) fn rename(state: &mut ProjectState, renames: &Renames) {
    let new = |address: &str| renames.moved.get(address).cloned();
    for entry in &mut state.entries {
        if let Some(to) = new(entry.address()) {
            set_address(entry, to);
        }
    }
    for generated in state.generated.iter_mut().chain(&mut state.object_values) {
        if let Some(to) = new(&generated.address) {
            generated.address = to;
        }
    }
}

/// Whether a rename moved a generated value (the configuration is evaluated again with it
/// under its new address); `state` is the renamed one.
pub(crate) fn touches_generated(state: &ProjectState, renames: &Renames) -> bool {
    let moved: BTreeSet<&String> = renames.moved.values().collect();
    state
        .generated
        .iter()
        .chain(&state.object_values)
        .any(|g| moved.contains(&g.address))
}

fn resource_type_of(entry: &StateEntry) -> &str {
    match entry {
        StateEntry::Guest { resource_type, .. }
        | StateEntry::Download { resource_type, .. }
        | StateEntry::Object { resource_type, .. } => resource_type,
    }
}

fn set_address(entry: &mut StateEntry, to: String) {
    match entry {
        StateEntry::Guest { address, .. }
        | StateEntry::Download { address, .. }
        | StateEntry::Object { address, .. } => *address = to,
    }
}

/// Marks the plan: each renamed object's change carries its previous address (a no-op change
/// is added for one that is otherwise unchanged), and a destroy that a `removed` block with
/// `destroy = false` covers becomes a forget. Returns the warnings Terraform prints with them.
pub(crate) fn mark(
    plan: &mut Plan,
    state: &ProjectState,
    renames: &Renames,
    removals: &[Removal],
) -> Vec<String> {
    for (from, to) in &renames.moved {
        if let Some(change) = plan.resource_changes.iter_mut().find(|c| &c.address == to) {
            change.previous_address = Some(from.clone());
            continue;
        }
        let resource_type = state
            .entries
            .iter()
            .find(|e| e.address() == to)
            .map(|e| resource_type_of(e).to_owned())
            .or_else(|| {
                let generated = state.generated.iter().find(|g| &g.address == to);
                generated.map(|g| g.resource_type.clone())
            })
            .unwrap_or_default();
        let mut change = ResourceChange::no_op(to, &resource_type, "");
        change.previous_address = Some(from.clone());
        plan.resource_changes.push(change);
    }
    let mut forgotten = Vec::new();
    for change in &mut plan.resource_changes {
        let kept = removals
            .iter()
            .any(|r| !r.destroy && covers(r, &change.address));
        if kept && change.actions == [Action::Delete] {
            change.actions = vec![Action::NoOp];
            change.attributes.clear();
            change.forget = true;
            forgotten.push(change.address.clone());
        }
    }
    plan.resource_changes
        .sort_by(|a, b| a.address.cmp(&b.address));
    plan.recount();
    let mut warnings = Vec::new();
    if !renames.unresolved.is_empty() {
        let lines: Vec<String> = renames
            .unresolved
            .iter()
            .map(|(from, to)| format!("  - {from} could not move to {to}"))
            .collect();
        warnings.push(format!(
            "Warning: Unresolved resource instance address changes\n\natoll tried to adjust \
             resource instance addresses in the prior state based on change information \
             recorded in the configuration, but some adjustments did not succeed due to \
             existing objects already at the intended addresses:\n{}\n\natoll has planned to \
             destroy these objects. If atoll's proposed changes aren't appropriate, you must \
             first resolve the conflicts using the \"atoll state\" subcommands and then create \
             a new plan.\n",
            lines.join("\n")
        ));
    }
    if !forgotten.is_empty() {
        let lines: Vec<String> = forgotten.iter().map(|a| format!(" - {a}")).collect();
        warnings.push(format!(
            "Warning: Some objects will no longer be managed by atoll\n\nIf you apply this \
             plan, atoll will discard its tracking information for the following objects, but \
             it will not delete them:\n{}\n\nAfter applying this plan, atoll will no longer \
             manage these objects. You will need to import them into atoll to manage them \
             again.\n",
            lines.join("\n")
        ));
    }
    warnings
}

/// Whether a `removed` block names `address` (its resource, or a module it lies in).
fn covers(removal: &Removal, address: &str) -> bool {
    let Some(rest) = address.strip_prefix(&removal.from) else {
        return false;
    };
    if removal.module {
        rest.starts_with('.') || rest.starts_with('[')
    } else {
        rest.is_empty() || rest.starts_with('[')
    }
}

/// Apply's first step: the plan's renames in one transaction, then its forgets. A pure move
/// or forget changes nothing on the cluster.
pub(crate) async fn persist(state: &StateHandle, plan: &Plan) -> Result<(), EngineError> {
    let moves: Vec<(String, String)> = plan
        .resource_changes
        .iter()
        .filter_map(|c| Some((c.previous_address.clone()?, c.address.clone())))
        .collect();
    state.rename(&moves).await?;
    for change in plan.resource_changes.iter().filter(|c| c.forget) {
        state.forget(&change.address).await?;
    }
    Ok(())
}

/// The renames `atoll state mv SOURCE DESTINATION` makes: the same rules as a `moved` block
/// (a resource or module with all its instances, or one instance), with Terraform's
/// refusals for an address that matches nothing and a destination already in state.
pub fn renames_for(
    source: &str,
    destination: &str,
    state: &ProjectState,
) -> Result<Vec<(String, String)>, String> {
    let (from_module, to_module) = (is_module(source), is_module(destination));
    if from_module != to_module {
        let what = if from_module {
            "a module"
        } else {
            "a resource"
        };
        return Err(format!(
            "Error: Invalid target address\n\nCannot move {source} to {destination}: the \
             target must also be {what}."
        ));
    }
    let statement = MoveStatement {
        from: source.to_owned(),
        to: destination.to_owned(),
        module: from_module,
        keyed: source.ends_with(']') || destination.ends_with(']'),
        declared_at: "the command line".to_owned(),
    };
    let renames = resolve(std::slice::from_ref(&statement), state).map_err(|e| e.to_string())?;
    if let Some((_, to)) = renames.unresolved.first() {
        return Err(format!(
            "Error: Invalid target address\n\nCannot move to {to}: there is already a resource \
             instance at that address in the current state. Remove it first (atoll state rm \
             {to}) or choose another address."
        ));
    }
    if renames.moved.is_empty() {
        return Err(format!(
            "Error: Invalid source address\n\nCannot move {source}: does not match anything in \
             the current state (atoll state list shows what is there)."
        ));
    }
    Ok(renames.moved.into_iter().collect())
}

/// Whether an address names a module (`module.a`, `module.a["k"]`, `module.a.module.b`).
fn is_module(address: &str) -> bool {
    let mut segments = Vec::new();
    let (mut current, mut depth, mut quoted) = (String::new(), 0usize, false);
    for c in address.chars() {
        match c {
            '"' if depth > 0 => quoted = !quoted,
            '[' if !quoted => depth += 1,
            ']' if !quoted => depth = depth.saturating_sub(1),
            '.' if depth == 0 && !quoted => {
                segments.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        if depth == 0 && c != ']' {
            current.push(c);
        }
    }
    segments.push(current);
    segments.len() >= 2 && segments[segments.len() - 2] == "module"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxmox::plan::GuestKind;

    fn statement(from: &str, to: &str, module: bool, keyed: bool) -> MoveStatement {
        MoveStatement {
            from: from.to_owned(),
            to: to.to_owned(),
            module,
            keyed,
            declared_at: "main.tf:1".to_owned(),
        }
    }

    fn state(addresses: &[&str]) -> ProjectState {
        let entries = addresses
            .iter()
            .enumerate()
            .map(|(i, a)| StateEntry::Guest {
                address: (*a).to_owned(),
                resource_type: "proxmox_virtual_environment_container".to_owned(),
                kind: GuestKind::Lxc,
                node: "pve".to_owned(),
                vm_id: 100 + u32::try_from(i).unwrap_or(0),
                attributes: BTreeMap::new(),
            });
        ProjectState {
            entries: entries.collect(),
            ..ProjectState::default()
        }
    }

    fn moved(renames: &Renames) -> Vec<(&str, &str)> {
        renames
            .moved
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect()
    }

    #[test]
    fn chains_resolve_to_their_end_in_any_order() {
        let statements = [
            statement("ct.b", "ct.c", false, false),
            statement("ct.a", "ct.b", false, false),
        ];
        let renames = resolve(&statements, &state(&["ct.a"])).expect("resolves");
        assert_eq!(moved(&renames), [("ct.a", "ct.c")]);
    }

    #[test]
    fn whole_modules_and_resources_keep_their_keys_and_instances_move_alone() {
        let statements = [
            statement("module.a", "module.b", true, false),
            statement("ct.x", "ct.y", false, false),
            statement("ct.n[0]", "ct.n[\"a\"]", false, true),
            statement("module.c", "module.c[0]", true, true),
        ];
        let s = state(&[
            "module.a[\"k\"].ct.w",
            "module.ab.ct.w",
            "ct.x[1]",
            "ct.n[0]",
            "ct.n[1]",
            "module.c.ct.z",
        ]);
        let renames = resolve(&statements, &s).expect("resolves");
        assert_eq!(
            moved(&renames),
            [
                ("ct.n[0]", "ct.n[\"a\"]"),
                ("ct.x[1]", "ct.y[1]"),
                ("module.a[\"k\"].ct.w", "module.b[\"k\"].ct.w"),
                ("module.c.ct.z", "module.c[0].ct.z"),
            ]
        );
    }

    #[test]
    fn a_move_onto_an_object_in_state_is_left_undone() {
        let statements = [statement("ct.a", "ct.b", false, false)];
        let renames = resolve(&statements, &state(&["ct.a", "ct.b"])).expect("resolves");
        assert!(renames.moved.is_empty());
        assert_eq!(renames.unresolved, [("ct.a".to_owned(), "ct.b".to_owned())]);
    }

    #[test]
    fn state_mv_follows_the_same_rules() {
        let s = state(&["ct.a", "ct.b", "module.m[\"x\"].ct.c"]);
        assert_eq!(
            renames_for("module.m", "module.n", &s),
            Ok(vec![(
                "module.m[\"x\"].ct.c".to_owned(),
                "module.n[\"x\"].ct.c".to_owned()
            )])
        );
        assert!(renames_for("ct.a", "ct.b", &s).is_err_and(|e| e.contains("already")));
        assert!(renames_for("ct.z", "ct.y", &s).is_err_and(|e| e.contains("Cannot move ct.z")));
        assert!(renames_for("ct.a", "module.q", &s).is_err_and(|e| e.contains("a resource")));
        assert!(is_module("module.a[\"k.module\"]") && !is_module("module.a.ct.b"));
    }

    #[test]
    fn a_cycle_is_refused() {
        let statements = [
            statement("ct.a", "ct.b", false, false),
            statement("ct.b", "ct.a", false, false),
        ];
        let err = resolve(&statements, &state(&["ct.a"])).expect_err("cycle");
        assert!(
            err.to_string()
                .contains("Cyclic dependency in move statements")
        );
    }

    #[test]
    fn removed_covers_its_resource_and_module_only() {
        let module = Removal {
            from: "module.a".to_owned(),
            module: true,
            destroy: false,
            declared_at: String::new(),
        };
        assert!(covers(&module, "module.a.ct.x"));
        assert!(covers(&module, "module.a[\"k\"].ct.x"));
        assert!(!covers(&module, "module.ab.ct.x"));
        let resource = Removal {
            from: "ct.x".to_owned(),
            module: false,
            ..module
        };
        assert!(covers(&resource, "ct.x[0]"));
        assert!(!covers(&resource, "ct.xy"));
    }
}
