//! What a workflow means for the projects that use it. atoll evaluates Terraform itself and
//! keeps state in its own store, so a step is not a command to run: each is read for what it
//! asks of the plan and the apply.
//!
//! - The plan stage's `plan` step: its `extra_args` are read exactly as a comment's words after
//!   `--` (`-var-file`, `-var`, `-target`, ...), into the project's plan options.
//! - `env` steps before it with a static value: `TF_VAR_NAME` sets a root variable at
//!   Terraform's environment precedence; a name that would change what Terraform does is
//!   refused, one atoll has no use for is warned about.
//! - `init`, `show` and `apply` flags that do not matter to atoll are accepted with a warning
//!   saying why; any other flag refuses the project by name.
//! - `run`, `multienv` and `env` with `command` would run a shell: the project is refused.

use model::PlanOptions;

use super::repo::Warning;
use super::workflow::{Builtin, ShellStep, Stage, StageKind, Step, StepKind, Workflow};

/// The warning for a `policy_check` step or stage, until this server evaluates policies.
pub const POLICY_CHECK_WARNING: &str = "policy_check: atoll checks the server's policy sets \
     (`policies:` in its configuration) after every plan, as Atlantis does; a workflow's \
     policy_check step or stage changes nothing";

/// A workflow as one project runs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectWorkflow {
    /// The workflow's name (`default` when neither the project nor a rule names one).
    pub name: String,
    /// What the plan step asks for, `TF_VAR_*` values included; a comment's words after `--`
    /// come after these.
    pub options: PlanOptions,
    /// Steps and flags accepted with no effect, each saying why.
    pub warnings: Vec<Warning>,
}

impl ProjectWorkflow {
    /// The default workflow: an ordinary plan, nothing to warn about.
    pub fn default_workflow() -> Self {
        Self {
            name: super::workflow::DEFAULT_WORKFLOW.to_owned(),
            options: PlanOptions::default(),
            warnings: Vec::new(),
        }
    }
}

/// Why a project cannot run with its workflow. Only the projects using the workflow are
/// refused; the message names the step and says what to write instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("workflow `{workflow}`: `{path}` {problem}")]
pub struct WorkflowRefusal {
    pub workflow: String,
    /// The step (or its argument) refused, e.g. `workflows.prod.plan.steps[0]`.
    pub path: String,
    pub problem: String,
}

impl Workflow {
    /// This workflow for one project: its plan options and warnings, or why it is refused.
    pub fn for_project(&self) -> Result<ProjectWorkflow, WorkflowRefusal> {
        let refuse = |path: &str, problem: String| WorkflowRefusal {
            workflow: self.name.clone(),
            path: path.to_owned(),
            problem,
        };
        for kind in StageKind::ALL {
            for step in self.stage(kind).map_or(&[][..], |s| s.steps.as_slice()) {
                if let StepKind::Shell(shell) = &step.kind {
                    return Err(refuse(&step.path, shell_refusal(shell)));
                }
            }
        }
        let mut out = ProjectWorkflow {
            name: self.name.clone(),
            options: PlanOptions::default(),
            warnings: Vec::new(),
        };
        if let Some(stage) = self.stage(StageKind::Plan) {
            plan_stage(stage, &mut out).map_err(|(path, problem)| refuse(&path, problem))?;
        }
        if let Some(stage) = self.stage(StageKind::Apply) {
            apply_stage(stage, &mut out).map_err(|(path, problem)| refuse(&path, problem))?;
        }
        if let Some(stage) = self.stage(StageKind::PolicyCheck) {
            out.warnings.push(Warning {
                path: stage.path.clone(),
                message: POLICY_CHECK_WARNING.to_owned(),
            });
        }
        Ok(out)
    }
}

/// A refusal: the path refused and the sentence.
type Refused = (String, String);

fn shell_refusal(shell: &ShellStep) -> String {
    let what = match shell {
        ShellStep::Run => "is a `run` step".to_owned(),
        ShellStep::MultiEnv => "is a `multienv` step".to_owned(),
        ShellStep::EnvCommand { name } => {
            format!("sets `{name}` from a `command`")
        }
    };
    format!(
        "{what}, which would run a shell command: atoll never runs a shell (a pull request \
         could run anything on the server). Write the same with built-in steps: \
         `-var-file=FILE` or `-var NAME=VALUE` in the plan step's `extra_args`, or an `env` \
         step with a static `value` (`TF_VAR_NAME` sets a variable). A stack that needs its \
         own commands belongs with the Terraform engine (issue 21), which this server does not \
         have yet"
    )
}

fn plan_stage(stage: &Stage, out: &mut ProjectWorkflow) -> Result<(), Refused> {
    let mut planned = false;
    for step in &stage.steps {
        match &step.kind {
            StepKind::Builtin {
                step: Builtin::Plan,
                extra_args,
            } => {
                if planned {
                    return Err((
                        step.path.clone(),
                        "is a second `plan` step; atoll makes one plan per project: keep one `plan` step".to_owned(),
                    ));
                }
                planned = true;
                let place = format!("in `{}.extra_args`", step.path);
                let options = crate::commands::parse_extra_args(extra_args, &place)
                    .map_err(|e| (step.path.clone(), format!("cannot be used: {e}")))?;
                out.options = out.options.followed_by(&options);
            }
            StepKind::Builtin {
                step: Builtin::Init,
                extra_args,
            } => {
                super::workflow_flags::init_flags(step, extra_args, &mut out.warnings)?;
            }
            StepKind::Builtin {
                step: Builtin::Show,
                extra_args,
            } => show(step, extra_args, &mut out.warnings),
            StepKind::Builtin {
                step: Builtin::PolicyCheck,
                ..
            } => out.warnings.push(policy_warning(step)),
            StepKind::Builtin { step: other, .. } => {
                return Err((
                    step.path.clone(),
                    format!(
                        "is an `{}` step in the plan stage; atoll runs `{}` only as its own command: remove it",
                        other.key(),
                        other.key()
                    ),
                ));
            }
            StepKind::Env { name, value } => {
                if planned {
                    out.warnings.push(Warning {
                        path: step.path.clone(),
                        message: format!(
                            "sets `{name}` after the `plan` step, so it has no effect on the plan; move it before `plan`"
                        ),
                    });
                } else if let Some(var) =
                    super::workflow_flags::env(step, name, value, &mut out.warnings)?
                {
                    out.options.vars.push(var);
                }
            }
            StepKind::Shell(_) => {}
        }
    }
    if !planned {
        return Err((
            stage.path.clone(),
            "has no `plan` step, so it would make no plan; add `- plan` (with its `extra_args`)"
                .to_owned(),
        ));
    }
    Ok(())
}

fn apply_stage(stage: &Stage, out: &mut ProjectWorkflow) -> Result<(), Refused> {
    let mut applied = false;
    for step in &stage.steps {
        match &step.kind {
            StepKind::Builtin {
                step: Builtin::Apply,
                extra_args,
            } => {
                if applied {
                    return Err((
                        step.path.clone(),
                        "is a second `apply` step; atoll applies the saved plan once: keep one `apply` step".to_owned(),
                    ));
                }
                applied = true;
                super::workflow_flags::apply_flags(step, extra_args, &mut out.warnings)?;
            }
            StepKind::Builtin {
                step: Builtin::Init,
                extra_args,
            } => super::workflow_flags::init_flags(step, extra_args, &mut out.warnings)?,
            StepKind::Builtin {
                step: Builtin::Show,
                extra_args,
            } => show(step, extra_args, &mut out.warnings),
            StepKind::Builtin {
                step: Builtin::PolicyCheck,
                ..
            } => out.warnings.push(policy_warning(step)),
            StepKind::Builtin { step: other, .. } => {
                return Err((
                    step.path.clone(),
                    format!(
                        "is a `{}` step in the apply stage; atoll applies the plan the plan stage saved, as it was reviewed: remove it",
                        other.key()
                    ),
                ));
            }
            StepKind::Env { name, .. } => out.warnings.push(Warning {
                path: step.path.clone(),
                message: format!(
                    "sets `{name}` in the apply stage, which has no effect: atoll applies the saved plan with the values it was made with; set it in the plan stage"
                ),
            }),
            StepKind::Shell(_) => {}
        }
    }
    if !applied {
        return Err((
            stage.path.clone(),
            "has no `apply` step, so it would never apply; add `- apply`".to_owned(),
        ));
    }
    Ok(())
}

fn show(step: &Step, extra_args: &[String], warnings: &mut Vec<Warning>) {
    if !extra_args.is_empty() {
        warnings.push(Warning {
            path: format!("{}.extra_args", step.path),
            message: "has no effect: atoll always shows its own plan (and keeps it as JSON)"
                .to_owned(),
        });
    }
}

fn policy_warning(step: &Step) -> Warning {
    Warning {
        path: step.path.clone(),
        message: POLICY_CHECK_WARNING.to_owned(),
    }
}

#[cfg(test)]
#[path = "workflow_steps_tests.rs"]
mod tests;
