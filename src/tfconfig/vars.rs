//! Input variables: root values from `terraform.tfvars`, `*.auto.tfvars` (lexical order),
//! Atlantis's `env/{workspace}.tfvars`, then `--var`/`--var-file` in command-line order (later
//! wins); and finalisation of any module's variable: type constraint with `optional()`
//! defaults, `nullable`, `validation`, `sensitive`. `TF_VAR_*` is never read.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use hcl_edit::expr::{Expression, TraversalOperator};
use hcl_edit::{Decorated, Ident, Span as _};

use super::config::{Module, Variable};
use super::diag::{Diagnostic, Span};
use super::eval::{Ctx, Names, Scope};
use super::types::{Constraint, TypeExprError, apply_defaults, convert, parse_type};
use super::value::Value;

/// A command-line variable source, in the order given.
#[derive(Clone, Debug)]
pub enum CliVar {
    /// `--var NAME=VALUE`.
    Var(String),
    /// `--var-file`: its display name and contents (the caller reads the file).
    File { name: String, text: String },
}

/// A raw value with where it was set.
#[derive(Clone, Debug)]
pub(crate) struct Raw {
    pub(crate) value: Value,
    pub(crate) span: Option<Span>,
}

/// Parses a variable's type constraint (`any` when absent), reporting errors.
pub(crate) fn constraint(ctx: &Ctx, v: &Variable, diags: &mut Vec<Diagnostic>) -> Constraint {
    let Some(te) = &v.type_expr else {
        return Constraint::Any;
    };
    let scope = Scope::constant(ctx, te.file);
    let eval = |e: &Expression| {
        scope.eval(e).map_err(|d| TypeExprError {
            detail: d.detail,
            range: e.span(),
        })
    };
    match parse_type(&te.expr, &eval) {
        Ok(c) => c,
        Err(e) => {
            diags.push(Diagnostic::error(
                "Invalid type specification",
                e.detail,
                e.range.map(|range| Span {
                    file: te.file,
                    range,
                }),
            ));
            Constraint::Any
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
    let c = constraint(ctx, v, diags);
    let declared_at = ctx.sources.borrow().fmt_range(&v.span);
    let default = v.default.as_ref().and_then(|d| {
        let scope = Scope::constant(ctx, d.file);
        match scope.eval(&d.expr).map(|x| apply_defaults(x, &c)).map(|x| convert(x, &c)) {
            Ok(Ok(x)) => Some(x),
            Ok(Err(e)) => {
                diags.push(Diagnostic::error("Invalid default value for variable", format!("This default value is not compatible with the variable's type constraint: {}.", e.message()), d.span()));
                None
            }
            Err(diag) => {
                diags.push(diag);
                None
            }
        }
    });
    let Some(given) = raw else {
        return match (&v.default, default) {
            (Some(_), Some(d)) => d.mark(v.sensitive),
            (Some(_), None) => Value::unknown(),
            (None, _) => {
                if root {
                    diags.push(Diagnostic::error("No value for required variable", format!("The root module input variable \"{}\" is not set, and has no default value. Use a --var or --var-file command line argument to provide a value for this variable.", v.name), Some(v.span.clone())));
                }
                Value::unknown()
            }
        };
    };
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
    validate(ctx, v, &value, addr, diags);
    value.mark(v.sensitive)
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

fn validate(ctx: &Ctx, v: &Variable, value: &Value, addr: &str, diags: &mut Vec<Diagnostic>) {
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
            rule.condition.span().or(Some(v.span.clone())),
        ));
        let _ = addr;
    }
}

/// Collects root variable values from files in `root_dir` and the command line.
pub(crate) fn collect_root(
    ctx: &Ctx,
    m: &Module,
    root_dir: &Path,
    workspace: &str,
    cli: &[CliVar],
    diags: &mut Vec<Diagnostic>,
) -> BTreeMap<String, Raw> {
    let mut out = BTreeMap::new();
    let mut files: Vec<String> = vec!["terraform.tfvars".to_owned()];
    let mut auto: Vec<String> = std::fs::read_dir(root_dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.ends_with(".auto.tfvars"))
                .collect()
        })
        .unwrap_or_default();
    auto.sort();
    files.extend(auto);
    files.push(format!("env/{workspace}.tfvars"));
    for name in files {
        let path = root_dir.join(&name);
        if !path.is_file() {
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(text) => read_tfvars(ctx, m, &name, text, false, &mut out, diags),
            Err(e) => diags.push(Diagnostic::error(
                "Failed to read variables file",
                format!(
                    "Given variables file {name} could not be read: {}.",
                    e.kind()
                ),
                None,
            )),
        }
    }
    for c in cli {
        match c {
            CliVar::File { name, text } => {
                read_tfvars(ctx, m, name, text.clone(), true, &mut out, diags)
            }
            CliVar::Var(arg) => cli_var(ctx, m, arg, &mut out, diags),
        }
    }
    out
}

fn read_tfvars(
    ctx: &Ctx,
    m: &Module,
    name: &str,
    text: String,
    explicit: bool,
    out: &mut BTreeMap<String, Raw>,
    diags: &mut Vec<Diagnostic>,
) {
    let file = ctx.sources.borrow_mut().add(name.to_owned(), text);
    let parsed = hcl_edit::parser::parse_body(ctx.sources.borrow().text(file));
    let body = match parsed {
        Ok(b) => b,
        Err(e) => {
            let off = e.location().offset();
            diags.push(Diagnostic::error(
                "Invalid HCL syntax",
                format!("{}.", e.message()),
                Some(Span {
                    file,
                    range: off..off + 1,
                }),
            ));
            return;
        }
    };
    for b in body.blocks() {
        let (summary, detail) = if b.ident.as_str() == "variable" {
            ("Variable declaration in .tfvars file", "A .tfvars file is used to assign values to variables that have already been declared in .tf files, not to declare new variables. To declare variable \"x\", place this block in one of your .tf files, such as variables.tf.\n\nTo set a value for this variable in this file, write an attribute instead.".to_owned())
        } else {
            (
                "Unexpected block",
                format!(
                    "Blocks of type \"{}\" are not expected in a variables file; only attributes assigning variable values are allowed.",
                    b.ident.as_str()
                ),
            )
        };
        diags.push(Diagnostic::error(
            summary,
            detail,
            b.ident.span().map(|range| Span { file, range }),
        ));
    }
    let scope = Scope::constant(ctx, file);
    for a in body.attributes() {
        let key = a.key.as_str();
        let span = a.key.span().map(|range| Span { file, range });
        if !m.variables.contains_key(key) {
            let detail = format!(
                "The root module does not declare a variable named \"{key}\" but a value was found in file \"{name}\". If you meant to use this value, add a \"variable\" block to the configuration."
            );
            diags.push(if explicit {
                Diagnostic::error("Value for undeclared variable", detail, span)
            } else {
                Diagnostic::warning("Value for undeclared variable", detail, span)
            });
            continue;
        }
        match scope.eval(&a.value) {
            Ok(v) => {
                out.insert(
                    key.to_owned(),
                    Raw {
                        value: v,
                        span: a.value.span().map(|range| Span { file, range }),
                    },
                );
            }
            Err(d) => diags.push(d),
        }
    }
}

fn cli_var(
    ctx: &Ctx,
    m: &Module,
    arg: &str,
    out: &mut BTreeMap<String, Raw>,
    diags: &mut Vec<Diagnostic>,
) {
    let Some((name, raw)) = arg.split_once('=') else {
        diags.push(Diagnostic::error("Invalid --var option", format!("The given --var option {arg:?} is not correctly specified. Must be a variable name and value separated by an equals sign, like --var=\"key=value\"."), None));
        return;
    };
    let name = name.trim();
    let Some(decl) = m.variables.get(name) else {
        diags.push(Diagnostic::error("Value for undeclared variable", format!("A variable named \"{name}\" was assigned on the command line, but the root module does not declare a variable of that name. To use this value, add a \"variable\" block to the configuration."), None));
        return;
    };
    let string_typed = decl
        .type_expr
        .as_ref()
        .is_some_and(|t| matches!(&t.expr, Expression::Variable(v) if v.as_str() == "string"));
    if string_typed {
        out.insert(
            name.to_owned(),
            Raw {
                value: Value::string(raw),
                span: None,
            },
        );
        return;
    }
    let file = ctx
        .sources
        .borrow_mut()
        .add(format!("<value for var.{name}>"), raw.to_owned());
    let parsed = hcl_edit::parser::parse_expr(raw);
    match parsed {
        Ok(e) => match Scope::constant(ctx, file).eval(&e) {
            Ok(v) => {
                out.insert(
                    name.to_owned(),
                    Raw {
                        value: v,
                        span: None,
                    },
                );
            }
            Err(d) => diags.push(d),
        },
        Err(e) => {
            let off = e.location().offset();
            diags.push(Diagnostic::error(
                "Invalid expression for --var",
                format!(
                    "The value for var.{name} is not a valid expression: {}.",
                    e.message()
                ),
                Some(Span {
                    file,
                    range: off..off + 1,
                }),
            ));
        }
    }
}
