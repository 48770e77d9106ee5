//! Where root variable values come from: `terraform.tfvars`, `*.auto.tfvars` (lexical order),
//! `env/{workspace}.tfvars`, then `--var`/`--var-file` in command-line order. All constant:
//! references and function calls are refused.

use std::collections::BTreeMap;
use std::path::Path;

use hcl_edit::Span as _;
use hcl_edit::expr::Expression;

use super::{CliVar, Raw};
use crate::tfconfig::config::Module;
use crate::tfconfig::diag::{Diagnostic, Span};
use crate::tfconfig::eval::{Ctx, Scope};
use crate::tfconfig::value::Value;

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
                read_tfvars(ctx, m, name, text.clone(), true, &mut out, diags);
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
