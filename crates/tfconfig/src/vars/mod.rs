//! Input variables: root values from `terraform.tfvars`, `*.auto.tfvars` (lexical order),
//! Atlantis's `env/{workspace}.tfvars`, then `--var`/`--var-file` in command-line order (later
//! wins); and finalisation of any module's variable: type constraint with `optional()`
//! defaults, `nullable`, `validation`, `sensitive`. The process environment is never read:
//! `TF_VAR_*` values come only as [`CliVar::Env`], given by the caller.

mod sources;

use std::borrow::Cow;

pub(crate) use sources::collect_root;

use hcl_edit::expr::{Expression, TraversalOperator};
use hcl_edit::{Decorated, Ident, Span as _};

use super::config::Variable;
use super::diag::{Diagnostic, Span};
use super::eval::{Ctx, Names, Scope};
use super::types::{Constraint, TypeExprError, apply_defaults, convert, parse_type};
use super::value::Value;

/// A variable source outside the configuration's own files: the command line, in the order
/// given, and the environment.
#[derive(Clone, Debug)]
pub enum CliVar {
    /// `--var NAME=VALUE`.
    Var(String),
    /// `--var-file`: its display name and contents (the caller reads the file).
    File { name: String, text: String },
    /// `TF_VAR_NAME=VALUE` (`name` without the prefix), read as Terraform reads the
    /// environment: before every file and command-line value, so any of them wins over it,
    /// wherever it stands in the list; a name the root module does not declare is ignored.
    Env { name: String, value: String },
}

/// A raw value with where it was set.
#[derive(Clone, Debug)]
pub(crate) struct Raw {
    pub(crate) value: Value,
    pub(crate) span: Option<Span>,
}

/// Parses a variable's type constraint (`any` when absent); `None` after reporting an error.
fn constraint(ctx: &Ctx, v: &Variable, diags: &mut Vec<Diagnostic>) -> Option<Constraint> {
    let Some(te) = &v.type_expr else {
        return Some(Constraint::Any);
    };
    let scope = Scope::constant(ctx, te.file);
    let eval = |e: &Expression| {
        scope.eval(e).map_err(|d| TypeExprError {
            detail: d.detail,
            range: e.span(),
        })
    };
    match parse_type(&te.expr, &eval) {
        Ok(c) => Some(c),
        Err(e) => {
            diags.push(Diagnostic::error(
                "Invalid type specification",
                e.detail,
                e.range.map(|range| Span {
                    file: te.file,
                    range,
                }),
            ));
            None
        }
    }
}

/// Finalises one variable (Terraform's `PrepareFinalInputVariableValue`). `addr` is `var.x` or
/// `module.m.var.x`. Returns an unknown value after reporting an error.
pub(crate) fn finalize(
    ctx: &Ctx,
    v: &Variable,
    raw: Option<Raw>,
    addr: &str,
    root: bool,
    diags: &mut Vec<Diagnostic>,
) -> Value {
    // Terraform refuses the configuration at its type: nothing is checked against it.
    let Some(c) = constraint(ctx, v, diags) else {
        return Value::unknown();
    };
    let declared_at = ctx.sources.borrow().fmt_range(&v.span);
    let default = default_value(ctx, v, &c, addr, diags);
    let Some(given) = raw else {
        return match (&v.default, default) {
            (Some(_), Some(d)) => {
                // Terraform checks a default against the validation rules too.
                validate(ctx, v, &d, Some(v.span.clone()), diags);
                d.mark(v.sensitive)
            }
            (Some(_), None) => Value::unknown(),
            (None, _) => {
                if root {
                    diags.push(Diagnostic::error("No value for required variable", format!("The root module input variable \"{}\" is not set, and has no default value. Use a --var or --var-file command line argument to provide a value for this variable.", v.name), Some(v.span.clone())));
                }
                Value::unknown()
            }
        };
    };
    warn_undeclared(&given, &c, addr, diags);
    let value = if given.value.is_null() {
        given.value
    } else {
        apply_defaults(given.value, &c)
    };
    let value = match convert(value, &c) {
        Ok(x) => x,
        Err(e) => {
            let detail = if v.sensitive {
                format!(
                    "The given value is not suitable for {addr}, which is sensitive: {}. Invalid value defined at {declared_at}.",
                    e.message()
                )
            } else {
                format!(
                    "The given value is not suitable for {addr} declared at {declared_at}: {}.",
                    e.message()
                )
            };
            let subject = if v.sensitive {
                Some(v.span.clone())
            } else {
                given.span.or(Some(v.span.clone()))
            };
            diags.push(Diagnostic::error(
                "Invalid value for input variable",
                detail,
                subject,
            ));
            return Value::unknown();
        }
    };
    let value = if value.is_null() && !v.nullable {
        match &v.default {
            Some(_) => convert(Value::null(), &c).unwrap_or(Value::unknown()),
            None => {
                diags.push(Diagnostic::error("Required variable not set", format!("Unsuitable value for {addr} set from outside of the configuration: required variable may not be set to null."), given.span.or(Some(v.span.clone()))));
                return Value::unknown();
            }
        }
    } else {
        value
    };
    validate(ctx, v, &value, given.span.or(Some(v.span.clone())), diags);
    value.mark(v.sensitive)
}

/// The declared default, with `optional()` defaults applied and converted to the type.
fn default_value(
    ctx: &Ctx,
    v: &Variable,
    c: &Constraint,
    addr: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<Value> {
    let d = v.default.as_ref()?;
    let raw = match Scope::constant(ctx, d.file).eval(&d.expr) {
        Ok(value) => Raw {
            value,
            span: d.span(),
        },
        Err(diag) => {
            diags.push(diag);
            return None;
        }
    };
    warn_undeclared(&raw, c, addr, diags);
    if raw.value.is_null() && !v.nullable {
        diags.push(Diagnostic::error(
            "Invalid default value for variable",
            "A null default value is not valid when nullable=false.",
            d.span(),
        ));
        return None;
    }
    match convert(apply_defaults(raw.value, c), c) {
        Ok(x) => Some(x),
        Err(e) => {
            diags.push(Diagnostic::error(
                "Invalid default value for variable",
                format!(
                    "This default value is not compatible with the variable's type constraint: {}.",
                    e.message()
                ),
                d.span(),
            ));
            None
        }
    }
}

/// Names inside a validation condition: only `var.<name>`.
struct OnlyVar<'a> {
    name: &'a str,
    value: &'a Value,
}

impl Names for OnlyVar<'_> {
    fn resolve<'s>(
        &'s self,
        root: &Decorated<Ident>,
        ops: &[Decorated<TraversalOperator>],
        s: &Scope<'_>,
    ) -> Result<(Cow<'s, Value>, usize), Diagnostic> {
        match (root.as_str(), ops.first().map(|o| o.value())) {
            ("var", Some(TraversalOperator::GetAttr(a))) if a.as_str() == self.name => Ok((Cow::Borrowed(self.value), 1)),
            _ => Err(s.error("Invalid reference in variable validation", format!("The condition for variable \"{}\" can only refer to the variable itself, using var.{}.", self.name, self.name), root.span())),
        }
    }
}

/// Checks `value` against the variable's validation rules. A failure is reported, as Terraform
/// reports it, where the value came from (`from`: the tfvars line, the module argument, or the
/// declaration for a default), the rule's location in the detail.
fn validate(
    ctx: &Ctx,
    v: &Variable,
    value: &Value,
    from: Option<Span>,
    diags: &mut Vec<Diagnostic>,
) {
    if value.contains_unknown() {
        return;
    }
    for rule in &v.validations {
        let names = OnlyVar {
            name: &v.name,
            value,
        };
        let scope = Scope::new(ctx, &names, rule.condition.file);
        let ok = match scope.eval(&rule.condition.expr) {
            Ok(r) => match r.unmark().0 {
                Value::Bool(b) => *b,
                Value::Unknown(_) => true,
                _ => {
                    diags.push(Diagnostic::error(
                        "Invalid variable validation result",
                        "Validation condition expression must return either true or false.",
                        rule.condition.span(),
                    ));
                    continue;
                }
            },
            Err(d) => {
                diags.push(d);
                continue;
            }
        };
        if ok {
            continue;
        }
        let msg = Scope::new(ctx, &names, rule.error_message.file)
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
        let at = ctx.sources.borrow().fmt_range(&rule.span);
        diags.push(Diagnostic::error(
            "Invalid value for variable",
            format!("{msg}\n\nThis was checked by the validation rule at {at}."),
            from.clone(),
        ));
    }
}

/// Our own warning (Terraform is silent): object attributes the type does not declare are
/// dropped by conversion, which hides typos such as `memroy = 4096`.
fn warn_undeclared(given: &Raw, c: &Constraint, addr: &str, diags: &mut Vec<Diagnostic>) {
    for (path, name, hint) in super::types::undeclared_attributes(&given.value, c) {
        let hint = hint
            .map(|h| format!(" Did you mean \"{h}\"?"))
            .unwrap_or_default();
        diags.push(Diagnostic::warning(
            "Attribute not declared in the variable's type",
            format!("The value for {addr}{path} has an attribute \"{name}\" that its type does not declare, so it is ignored.{hint}"),
            given.span.clone(),
        ));
    }
}
