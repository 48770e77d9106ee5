//! The plan options ([`PlanOptions`]) as the engine honours them, with Terraform's semantics:
//! `-var`/`-var-file` become the loader's command-line values (after the tfvars files, in
//! order), a workflow's `TF_VAR_*` its environment values (before them); `-target` keeps the targeted resources and everything they depend on; `-replace`
//! turns a resource's change into a replace; `-destroy` plans every resource in state away.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use model::{PlanOptions, VarArg};
use tfconfig::CliVar;

use super::EngineError;
use crate::proxmox::plan::{Action, Desired, Plan, StateEntry};

/// Terraform's warning for a targeted plan (`terraform plan -target`), word for word.
pub const TARGETING_WARNING: &str = "Warning: Resource targeting is in effect\n\n\
You are creating a plan with the -target option, which means that the result\n\
of this plan may not represent all of the changes requested by the current\n\
configuration.\n\n\
The -target option is not for routine use, and is provided only for\n\
exceptional situations such as recovering from errors or mistakes, or when\n\
Terraform specifically suggests to use it as part of an error message.\n";

/// The loader's command-line values: each `-var-file` read from the project directory
/// `project_dir` of the canonical `checkout` (never outside it), at most `file_bytes` each.
pub fn input_vars(
    checkout: &Path,
    project_dir: &Path,
    vars: &[VarArg],
    file_bytes: u64,
) -> Result<Vec<CliVar>, EngineError> {
    let checkout = checkout
        .canonicalize()
        .map_err(|e| EngineError::Config(format!("the checkout {}: {e}", checkout.display())))?;
    let checkout = checkout.as_path();
    vars.iter()
        .map(|var| match var {
            VarArg::Var { name, value } => Ok(CliVar::Var(format!("{name}={value}"))),
            VarArg::Env { name, value } => Ok(CliVar::Env {
                name: name.clone(),
                value: value.clone(),
            }),
            VarArg::File { path } => {
                let relative = project_dir.join(path.as_str());
                let text = tfconfig::checkout::read_confined_text(
                    checkout,
                    &relative,
                    file_bytes,
                    "limits.tfconfig.file_bytes",
                )
                .map_err(|e| EngineError::Config(format!("-var-file={path}: {e}")))?;
                Ok(CliVar::File {
                    name: path.as_str().to_owned(),
                    text,
                })
            }
        })
        .collect()
}

/// The addresses a targeted plan may change: the instances a target covers, and,
/// transitively, every instance they depend on (`depends_on`: instance address -> its
/// dependencies, whole resources and modules standing for all of their instances).
pub(super) fn targeted<'a>(
    options: &PlanOptions,
    instances: impl IntoIterator<Item = &'a str>,
    depends_on: &BTreeMap<String, Vec<String>>,
) -> BTreeSet<String> {
    let all: Vec<&str> = instances.into_iter().collect();
    let mut kept: BTreeSet<String> = all
        .iter()
        .filter(|a| options.targets.iter().any(|t| t.covers(a)))
        .map(|a| (*a).to_owned())
        .collect();
    let mut queue: Vec<String> = kept.iter().cloned().collect();
    while let Some(address) = queue.pop() {
        for dep in depends_on.get(&address).into_iter().flatten() {
            for instance in &all {
                if tfconfig::dependency_covers(dep, instance) && kept.insert((*instance).to_owned())
                {
                    queue.push((*instance).to_owned());
                }
            }
        }
    }
    kept
}

/// What a plan is made from under `options`: nothing desired for `-destroy`; for `-target`,
/// the targeted resources and their dependencies, and the state entries among them or
/// covered by a target (a targeted resource no longer declared is destroyed).
pub(super) fn scope(
    options: &PlanOptions,
    desired: &[Desired],
    entries: &[StateEntry],
    depends_on: &BTreeMap<String, Vec<String>>,
) -> (Vec<Desired>, Vec<StateEntry>) {
    if options.destroy {
        let entries = entries
            .iter()
            .filter(|e| {
                options.targets.is_empty() || options.targets.iter().any(|t| t.covers(e.address()))
            })
            .cloned()
            .collect();
        return (Vec::new(), entries);
    }
    if options.targets.is_empty() {
        return (desired.to_vec(), entries.to_vec());
    }
    let kept = targeted(options, desired.iter().map(Desired::address), depends_on);
    let desired = desired
        .iter()
        .filter(|d| kept.contains(d.address()))
        .cloned()
        .collect();
    let entries = entries
        .iter()
        .filter(|e| {
            kept.contains(e.address()) || options.targets.iter().any(|t| t.covers(e.address()))
        })
        .cloned()
        .collect();
    (desired, entries)
}

/// `-replace`: a planned update or no-op of a named resource becomes a replace.
pub(super) fn force_replace(plan: &mut Plan, options: &PlanOptions) {
    for change in &mut plan.resource_changes {
        let replaceable = change.is_no_op() || change.actions == [Action::Update];
        if replaceable && options.replaces(&change.address) {
            change.actions = vec![Action::Delete, Action::Create];
            change
                .notes
                .push("replaced as requested with -replace".to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::ResourceAddress;

    fn targeting(targets: &[&str]) -> PlanOptions {
        PlanOptions {
            targets: targets
                .iter()
                .map(|t| ResourceAddress::parse(t).expect("address"))
                .collect(),
            ..PlanOptions::default()
        }
    }

    #[test]
    fn a_target_keeps_what_it_depends_on_transitively_and_nothing_else() {
        let deps: BTreeMap<String, Vec<String>> = [
            ("t.c", vec!["t.b"]),
            ("t.b[0]", vec!["module.m"]),
            ("module.m.t.x", vec![]),
            ("t.other", vec!["t.c"]),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
        .collect();
        let all = ["t.c", "t.b[0]", "module.m.t.x", "t.other"];
        let kept = targeted(&targeting(&["t.c"]), all, &deps);
        let kept: Vec<&str> = kept.iter().map(String::as_str).collect();
        assert_eq!(kept, ["module.m.t.x", "t.b[0]", "t.c"]);
        let module = targeted(&targeting(&["module.m"]), all, &deps);
        assert_eq!(module.into_iter().collect::<Vec<_>>(), ["module.m.t.x"]);
    }
}
