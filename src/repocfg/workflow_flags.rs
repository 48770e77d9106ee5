//! The `extra_args` of a workflow's `init` and `apply` steps, and the names its `env` steps
//! set, as atoll reads them. atoll runs no `terraform init` (it installs modules itself and its
//! providers are built in), keeps state in its own store rather than a backend, and applies a
//! saved plan as it was made: a flag that only tunes those is harmless and accepted with a
//! warning saying why it has no effect; a flag that would change what is planned or applied is
//! refused by name, with the flags accepted.

use model::VarArg;

use super::repo::Warning;
use super::workflow::Step;
use crate::commands::shown_value;

/// A refusal: the path refused and the sentence.
type Refused = (String, String);

const NO_INIT: &str = "atoll runs no `terraform init`: it installs the modules a project calls \
                       itself, pinned per commit, and its providers are built in";
const NO_BACKEND: &str = "atoll keeps state in its own store, not in a Terraform backend";
const OWN_OUTPUT: &str = "atoll never prompts and writes its own output";
const OWN_LOCKS: &str = "atoll locks each project itself, for the whole pull request, and \
                         never waits for a lock";

/// `init` flags that have no effect on atoll, and why.
const INIT_HARMLESS: &[(&str, &str)] = &[
    ("upgrade", NO_INIT),
    ("get", NO_INIT),
    ("plugin-dir", NO_INIT),
    ("verify-plugins", NO_INIT),
    ("lockfile", NO_INIT),
    ("backend", NO_BACKEND),
    ("backend-config", NO_BACKEND),
    ("reconfigure", NO_BACKEND),
    ("migrate-state", NO_BACKEND),
    ("force-copy", NO_BACKEND),
    ("input", OWN_OUTPUT),
    ("no-color", OWN_OUTPUT),
    ("json", OWN_OUTPUT),
    ("lock", OWN_LOCKS),
    ("lock-timeout", OWN_LOCKS),
];

const SAVED_PLAN: &str = "atoll applies the saved plan exactly as it was made and reviewed";

/// `apply` flags that have no effect on atoll, and why.
const APPLY_HARMLESS: &[(&str, &str)] = &[
    (
        "auto-approve",
        "atoll applies only on `atlantis apply`, which is the approval",
    ),
    ("input", OWN_OUTPUT),
    ("no-color", OWN_OUTPUT),
    ("json", OWN_OUTPUT),
    ("compact-warnings", OWN_OUTPUT),
    ("lock", OWN_LOCKS),
    ("lock-timeout", OWN_LOCKS),
    (
        "parallelism",
        "atoll orders and runs each guest's changes itself",
    ),
    (
        "backup",
        "atoll keeps state in its own store and journals every change",
    ),
];

/// `apply` flags that would change what is applied: they belong on the plan step.
const APPLY_PLAN_FLAGS: &[&str] = &[
    "target",
    "replace",
    "destroy",
    "var",
    "var-file",
    "refresh",
    "refresh-only",
];

/// Flags (of either step) that take a value, which may be the next word.
const TAKES_VALUE: &[&str] = &[
    "plugin-dir",
    "backend-config",
    "lock-timeout",
    "lockfile",
    "parallelism",
    "backup",
    "target",
    "replace",
    "var",
    "var-file",
    "state",
    "state-out",
];

/// One flag as written: its name and the index of its first word.
struct Flag<'a> {
    index: usize,
    name: &'a str,
}

/// The flags of `words`; a word that is not a flag is the value of the flag before it when
/// that one takes a value, else refused.
fn flags<'a>(step: &Step, words: &'a [String]) -> Result<Vec<Flag<'a>>, Refused> {
    let mut out: Vec<Flag<'a>> = Vec::new();
    let mut wants_value = false;
    for (index, word) in words.iter().enumerate() {
        let at = format!("{}.extra_args[{index}]", step.path);
        match word.strip_prefix("--").or_else(|| word.strip_prefix('-')) {
            Some(flag) if !flag.is_empty() => {
                let (name, inline) = match flag.split_once('=') {
                    Some((name, _)) => (name, true),
                    None => (flag, false),
                };
                wants_value = !inline && TAKES_VALUE.contains(&name);
                out.push(Flag { index, name });
            }
            _ if wants_value => wants_value = false,
            _ => {
                return Err((at, format!("`{}` is not a flag", shown_value(word))));
            }
        }
    }
    Ok(out)
}

fn accepted(list: &[(&str, &str)]) -> String {
    list.iter()
        .map(|(name, _)| format!("-{name}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `init`'s `extra_args`: each harmless flag warned about, any other refused.
pub(super) fn init_flags(
    step: &Step,
    words: &[String],
    warnings: &mut Vec<Warning>,
) -> Result<(), Refused> {
    for flag in flags(step, words)? {
        let at = format!("{}.extra_args[{}]", step.path, flag.index);
        match INIT_HARMLESS.iter().find(|(name, _)| *name == flag.name) {
            Some((name, why)) => warnings.push(no_effect(at, name, why)),
            None => {
                return Err((
                    at,
                    format!(
                        "`-{}` is not supported on `init`: {NO_INIT}; atoll accepts only {} there (with no effect)",
                        shown_value(flag.name),
                        accepted(INIT_HARMLESS)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// `apply`'s `extra_args`: each harmless flag warned about, any other refused.
pub(super) fn apply_flags(
    step: &Step,
    words: &[String],
    warnings: &mut Vec<Warning>,
) -> Result<(), Refused> {
    for flag in flags(step, words)? {
        let at = format!("{}.extra_args[{}]", step.path, flag.index);
        if let Some((name, why)) = APPLY_HARMLESS.iter().find(|(name, _)| *name == flag.name) {
            warnings.push(no_effect(at, name, why));
            continue;
        }
        let shown = shown_value(flag.name);
        let problem = if APPLY_PLAN_FLAGS.contains(&flag.name) {
            format!(
                "`-{shown}` cannot be used on `apply`: {SAVED_PLAN} (Terraform refuses it with a saved plan too); put it in the plan step's `extra_args`"
            )
        } else {
            format!(
                "`-{shown}` is not supported on `apply`: {SAVED_PLAN}; atoll accepts only {} there (with no effect)",
                accepted(APPLY_HARMLESS)
            )
        };
        return Err((at, problem));
    }
    Ok(())
}

fn no_effect(path: String, flag: &str, why: &str) -> Warning {
    Warning {
        path,
        message: format!("`-{flag}` has no effect: {why}"),
    }
}

/// An `env` step before the plan: the variable it sets (`TF_VAR_NAME`), nothing with a
/// warning (a name atoll has no use for), or a refusal (a name that would change what
/// Terraform plans, which atoll would otherwise silently ignore).
pub(super) fn env(
    step: &Step,
    name: &str,
    value: &str,
    warnings: &mut Vec<Warning>,
) -> Result<Option<VarArg>, Refused> {
    let at = step.path.clone();
    if let Some(var) = name.strip_prefix("TF_VAR_") {
        return VarArg::env(var, value).map(Some).map_err(|_| {
            (
                at,
                format!("sets `{name}`, and `{var}` is not a variable name"),
            )
        });
    }
    let refused = |why: &str| Err((at.clone(), format!("sets `{name}`: {why}")));
    if name == "TF_CLI_ARGS" || name.starts_with("TF_CLI_ARGS_") {
        return refused(
            "Terraform adds these flags to its command line, and atoll reads flags only from \
             `extra_args`; write them in the plan step's `extra_args`",
        );
    }
    if name == "TF_WORKSPACE" {
        return refused("atoll plans the project's `workspace`; set `workspace:` on the project");
    }
    if name.starts_with("PROXMOX_VE_") || name.starts_with("PM_") {
        return refused(
            "atoll connects only to the Proxmox VE endpoint, with the credentials, the server is \
             configured with; a pull request cannot choose them. Remove it",
        );
    }
    let why = if name.starts_with("TF_LOG") {
        "atoll runs no terraform process to log from; the job's log on the dashboard shows each step"
    } else if name == "TF_INPUT" || name == "TF_IN_AUTOMATION" {
        OWN_OUTPUT
    } else if name.starts_with("TF_") {
        "atoll evaluates the configuration itself and installs modules with the server's own \
         settings and credentials"
    } else {
        "atoll runs no process that reads the environment"
    };
    warnings.push(Warning {
        path: at,
        message: format!("sets `{name}`, which has no effect: {why}"),
    });
    Ok(None)
}
