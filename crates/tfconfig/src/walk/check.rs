//! `check` blocks: each `assert` evaluated once the module instance's resources are, warning
//! as Terraform 1.15 does (`tests/oracle/moved.txt`): a false condition is "Check block
//! assertion failed" with its error message, an unknown one is known after apply. A check
//! never stops a plan.

use super::super::config::Validation;
use super::super::diag::Diagnostic;
use super::super::eval::{Ctx, Scope};
use super::super::module::{Env, InstanceNames};
use crate::value::Value;

/// The warnings of one module instance's checks.
pub(crate) fn evaluate(ctx: &Ctx, env: &Env<'_>, diags: &mut Vec<Diagnostic>) {
    for check in &env.tree.config.checks {
        for rule in &check.asserts {
            if let Some(d) = assert(ctx, env, rule) {
                diags.push(d);
            }
        }
    }
}

fn assert(ctx: &Ctx, env: &Env<'_>, rule: &Validation) -> Option<Diagnostic> {
    let names = InstanceNames {
        env,
        each: None,
        count: None,
    };
    let scope = Scope::new(ctx, &names, rule.condition.file);
    let result = match scope.eval(&rule.condition.expr) {
        Ok(v) => v,
        // an error in a check is a warning too: a check never blocks
        Err(d) => return Some(Diagnostic::warning(d.summary, d.detail, d.subject)),
    };
    match result.unmark().0 {
        Value::Bool(true) => None,
        Value::Unknown(_) => Some(Diagnostic::warning(
            "Check block assertion known after apply",
            "The condition could not be evaluated at this time, a result will be known when \
             this plan is applied.",
            Some(rule.span.clone()),
        )),
        Value::Bool(false) => {
            let message = Scope::new(ctx, &names, rule.error_message.file)
                .eval(&rule.error_message.expr)
                .ok()
                .and_then(|m| {
                    if m.contains_sensitive() {
                        None
                    } else {
                        m.as_str().map(str::to_owned)
                    }
                })
                .unwrap_or_else(|| "(the error message could not be evaluated)".to_owned());
            Some(Diagnostic::warning(
                "Check block assertion failed",
                message,
                Some(rule.span.clone()),
            ))
        }
        _ => Some(Diagnostic::warning(
            "Invalid condition result",
            "Invalid condition result value: a bool is required.",
            Some(rule.span.clone()),
        )),
    }
}
