//! Where root variable values come from: `TF_VAR_*` (as the caller gives them), then
//! `terraform.tfvars`, `*.auto.tfvars` (lexical order), `env/{workspace}.tfvars`, then
//! `--var`/`--var-file` in command-line order. All constant: references and function calls are
//! refused.

use std::collections::BTreeMap;
use std::path::Path;

use hcl_edit::Span as _;
use hcl_edit::expr::Expression;

use super::{CliVar, Raw};
use crate::config::Module;
use crate::diag::{Diagnostic, Span};
use crate::eval::{Ctx, Scope};
use crate::value::Value;

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
    for c in cli {
        if let CliVar::Env { name, value } = c {
            // Terraform ignores environment values for undeclared names (they are often set
            // for many configurations at once).
            if let Some(decl) = m.variables.get(name.as_str())
                && let Some(raw) = text_value(ctx, decl, name, value, diags)
            {
                out.insert(name.clone(), raw);
            }
        }
    }
    let mut auto: Vec<String> = std::fs::read_dir(root_dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.ends_with(".auto.tfvars") || n.ends_with(".auto.tfvars.json"))
                .collect()
        })
        .unwrap_or_default();
    auto.sort();
    let mut files = vec![
        "terraform.tfvars".to_owned(),
        "terraform.tfvars.json".to_owned(),
    ];
    files.extend(auto);
    if valid_workspace(workspace) {
        files.push(format!("env/{workspace}.tfvars"));
    } else {
        diags.push(Diagnostic::error(
            "Invalid workspace name",
            format!("The workspace name {workspace:?} may contain only letters, digits, \"-\", \"_\" and \".\"."),
            None,
        ));
    }
    for name in files {
        let path = root_dir.join(&name);
        // Present at all (a link is not followed here): the reader says why it is refused.
        if std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        let text = ctx
            .sandbox
            .reader()
            .read_text(&path)
            .map_err(|e| e.to_string());
        match text {
            Ok(text) if name.ends_with(".json") => {
                read_json_tfvars(ctx, m, &name, &text, &mut out, diags);
            }
            Ok(text) => read_tfvars(ctx, m, &name, text, false, &mut out, diags),
            Err(why) => diags.push(Diagnostic::error(
                "Failed to read variables file",
                format!("Given variables file {name} could not be read: {why}."),
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
            CliVar::Env { .. } => {}
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
    if let Err(deep) = crate::nesting::check(ctx.sources.borrow().text(file)) {
        diags.push(crate::nesting::diagnostic("Invalid HCL syntax", file, deep));
        return;
    }
    let parsed = {
        let sources = ctx.sources.borrow();
        let text = sources.text(file);
        hcl_edit::parser::parse_body(text).map(|mut b| {
            crate::heredoc::flush_body(&mut b, text);
            b
        })
    };
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
    if let Some(raw) = text_value(ctx, decl, name, raw, diags) {
        out.insert(name.to_owned(), raw);
    }
}

/// A value given as text (`--var`, `TF_VAR_*`), parsed as Terraform parses one (its
/// `VariableParsingMode`): literally for a variable not typed at all or of a primitive type
/// (`string`, `number`, `bool`: `--var v=123` on an untyped one is the string "123", and
/// `2+3` is no number), as an expression for every other type. `None` after reporting an
/// error.
fn text_value(
    ctx: &Ctx,
    decl: &crate::config::Variable,
    name: &str,
    raw: &str,
    diags: &mut Vec<Diagnostic>,
) -> Option<Raw> {
    let literal = decl
        .type_expr
        .as_ref()
        .is_none_or(|t| matches!(&t.expr, Expression::Variable(v) if matches!(v.as_str(), "string" | "number" | "bool")));
    if literal {
        return Some(Raw {
            value: Value::string(raw),
            span: None,
        });
    }
    let file = ctx
        .sources
        .borrow_mut()
        .add(format!("<value for var.{name}>"), raw.to_owned());
    if let Err(deep) = crate::nesting::check(raw) {
        diags.push(crate::nesting::diagnostic(
            "Invalid expression for --var",
            file,
            deep,
        ));
        return None;
    }
    let parsed = hcl_edit::parser::parse_expr(raw).map(|mut e| {
        crate::heredoc::flush_expr(&mut e, raw);
        e
    });
    match parsed {
        Ok(e) => match Scope::constant(ctx, file).eval(&e) {
            Ok(v) => Some(Raw {
                value: v,
                span: None,
            }),
            Err(d) => {
                diags.push(d);
                None
            }
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
            None
        }
    }
}

/// Workspace names that are safe in a path (`env/{workspace}.tfvars`).
fn valid_workspace(w: &str) -> bool {
    !w.is_empty()
        && w != "."
        && w != ".."
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// `terraform.tfvars.json` / `*.auto.tfvars.json`: a JSON object of variable values.
fn read_json_tfvars(
    ctx: &Ctx,
    m: &Module,
    name: &str,
    text: &str,
    out: &mut BTreeMap<String, Raw>,
    diags: &mut Vec<Diagnostic>,
) {
    let parsed: Result<serde_json::Map<String, serde_json::Value>, _> = serde_json::from_str(text);
    let file = ctx
        .sources
        .borrow_mut()
        .add(name.to_owned(), text.to_owned());
    let Ok(obj) = parsed else {
        diags.push(Diagnostic::error(
            "Invalid JSON variables file",
            format!("The variables file {name} must contain a JSON object of variable values."),
            Some(Span { file, range: 0..1 }),
        ));
        return;
    };
    for (key, v) in obj {
        if !m.variables.contains_key(&key) {
            diags.push(Diagnostic::warning(
                "Value for undeclared variable",
                format!("The root module does not declare a variable named \"{key}\" but a value was found in file \"{name}\". If you meant to use this value, add a \"variable\" block to the configuration."),
                None,
            ));
            continue;
        }
        let value = crate::funcs::json_value(&v);
        out.insert(key, Raw { value, span: None });
    }
}
