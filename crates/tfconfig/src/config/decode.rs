//! Decoding of top-level blocks: `terraform`, `variable`, `locals`, `output`, with duplicate
//! and structure diagnostics.

use std::ops::Range;

use hcl_edit::Span as _;
use hcl_edit::expr::Expression;
use hcl_edit::structure::{Attribute, Block, Body};

use super::blocks::{decode_module, decode_resource, traversal_list};
use super::statements::{decode_check, decode_moved, decode_removed};
use super::{Expr, Import, Module, Output, Validation, Variable};
use crate::diag::{Diagnostic, SourceMap, Span, did_you_mean};

const TOP_BLOCKS: &[&str] = &[
    "terraform",
    "provider",
    "variable",
    "locals",
    "output",
    "module",
    "resource",
    "data",
    "moved",
    "import",
    "removed",
    "check",
];

/// Decodes the files of one module into `m`, appending diagnostics.
pub(crate) fn decode_file(
    m: &mut Module,
    file: usize,
    body: &Body,
    sources: &mut SourceMap,
    diags: &mut Vec<Diagnostic>,
) {
    for attr in body.attributes() {
        diags.push(Diagnostic::error(
            "Unsupported argument",
            format!(
                "An argument named \"{}\" is not expected here.",
                attr.key.as_str()
            ),
            span(file, attr.key.span()),
        ));
    }
    for block in body.blocks() {
        let kind = block.ident.as_str();
        let labels: Vec<&str> = block.labels.iter().map(|l| l.as_str()).collect();
        if let Some(r) = block.span() {
            let header = std::iter::once(kind.to_owned())
                .chain(labels.iter().map(|l| format!("{l:?}")))
                .collect::<Vec<_>>()
                .join(" ");
            sources.add_context(file, r, header);
        }
        let bspan = span(file, block.ident.span()).unwrap_or(Span { file, range: 0..0 });
        let need = |n: usize, what: &str, diags: &mut Vec<Diagnostic>| -> bool {
            if labels.len() == n {
                return true;
            }
            let summary = if labels.len() < n {
                format!("Missing name for {kind}")
            } else {
                format!("Extraneous label for {kind}")
            };
            diags.push(Diagnostic::error(
                summary,
                format!("All {kind} blocks must have {n} label(s) ({what})."),
                Some(bspan.clone()),
            ));
            false
        };
        match kind {
            "terraform" => decode_terraform(m, file, block, diags),
            "provider" => {}
            "variable" if need(1, "name", diags) => {
                decode_variable(m, file, block, labels[0], diags, sources);
            }
            "locals" => decode_locals(m, file, block, diags, sources),
            "output" if need(1, "name", diags) => {
                decode_output(m, file, block, labels[0], diags, sources);
            }
            "module" if need(1, "name", diags) => {
                decode_module(m, file, block, labels[0], diags, sources);
            }
            "resource" if need(2, "type, name", diags) => {
                decode_resource(m, file, block, false, diags, sources);
            }
            "data" if need(2, "type, name", diags) => {
                decode_resource(m, file, block, true, diags, sources);
            }
            "import" if labels.is_empty() => decode_import(m, file, block, diags),
            "import" => diags.push(Diagnostic::error(
                "Extraneous label for import",
                "No labels are expected for import blocks.",
                Some(bspan),
            )),
            "moved" if labels.is_empty() => decode_moved(m, file, block, diags),
            "removed" if labels.is_empty() => decode_removed(m, file, block, diags),
            "moved" | "removed" => diags.push(Diagnostic::error(
                format!("Extraneous label for {kind}"),
                format!("No labels are expected for {kind} blocks."),
                Some(bspan),
            )),
            "check" if need(1, "name", diags) => decode_check(m, file, block, diags),
            "variable" | "output" | "module" | "resource" | "data" | "check" => {}
            other => diags.push(Diagnostic::error(
                "Unsupported block type",
                format!(
                    "Blocks of type \"{other}\" are not expected here.{}",
                    did_you_mean(other, TOP_BLOCKS.iter().copied())
                ),
                Some(bspan),
            )),
        }
    }
}

pub(super) fn span(file: usize, r: Option<Range<usize>>) -> Option<Span> {
    r.map(|range| Span { file, range })
}

pub(super) fn block_span(file: usize, b: &Block) -> Span {
    let start = b.ident.span().map_or(0, |r| r.start);
    let end = b
        .labels
        .last()
        .and_then(|l| l.span())
        .or(b.ident.span())
        .map_or(start, |r| r.end);
    Span {
        file,
        range: start..end,
    }
}

/// `import { to = ..., id = ... }`, with `for_each` (Terraform 1.7); `provider` is accepted
/// and has nothing to choose (atoll has one Proxmox VE connection).
fn decode_import(m: &mut Module, file: usize, block: &Block, diags: &mut Vec<Diagnostic>) {
    const ALLOWED: &[&str] = &["to", "id", "for_each", "provider", "identity"];
    let sp = block_span(file, block);
    let (mut to, mut id, mut for_each) = (None, None, None);
    for a in block.body.attributes() {
        let e = Expr {
            expr: a.value.clone(),
            file,
        };
        match a.key.as_str() {
            "to" => to = Some(e),
            "id" => id = Some(e),
            "for_each" => for_each = Some(e),
            "provider" => {}
            "identity" => diags.push(Diagnostic::error(
                "Unsupported argument",
                "atoll imports by \"id\" (bpg's import id, e.g. \"pve/100\"), not by \"identity\"; replace the identity with the id.",
                span(file, a.key.span()),
            )),
            _ => unexpected_attr(file, a, ALLOWED, diags),
        }
    }
    for b in block.body.blocks() {
        unexpected_block(file, b, diags);
    }
    let missing = |name: &str, diags: &mut Vec<Diagnostic>| {
        diags.push(Diagnostic::error(
            "Missing required argument",
            format!("The argument \"{name}\" is required, but no definition was found."),
            Some(sp.clone()),
        ));
    };
    match (to, id) {
        (Some(to), Some(id)) => m.imports.push(Import {
            to,
            id,
            for_each,
            span: sp,
        }),
        (None, _) => missing("to", diags),
        (_, None) => missing("id", diags),
    }
}

fn decode_terraform(m: &mut Module, file: usize, block: &Block, diags: &mut Vec<Diagnostic>) {
    for b in block.body.blocks() {
        if b.ident.as_str() == "backend" || b.ident.as_str() == "cloud" {
            if !m.backend_seen {
                let label = b
                    .labels
                    .first()
                    .map(|l| l.as_str().to_owned())
                    .unwrap_or_default();
                diags.push(Diagnostic::warning(
                    "Backend configuration not used",
                    format!("atoll keeps the state of what it manages itself, so the {} \"{label}\" block is accepted but not used.", b.ident.as_str()),
                    Some(block_span(file, b)),
                ));
                m.backend = Some(crate::backend::read(b));
            }
            m.backend_seen = true;
        }
        if b.ident.as_str() == "cloud" {
            let names = b
                .body
                .blocks()
                .filter(|w| w.ident.as_str() == "workspaces")
                .flat_map(|w| w.body.attributes())
                .filter(|a| a.key.as_str() == "name");
            for name in names {
                if let Expression::String(s) = &name.value {
                    m.cloud_workspace = Some(s.value().clone());
                }
            }
        }
    }
}

pub(super) fn literal_bool(file: usize, a: &Attribute, diags: &mut Vec<Diagnostic>) -> bool {
    match &a.value {
        Expression::Bool(b) => *b.value(),
        other => {
            diags.push(Diagnostic::error(
                "Invalid value",
                format!(
                    "The \"{}\" argument must be a literal true or false.",
                    a.key.as_str()
                ),
                span(file, other.span()),
            ));
            false
        }
    }
}

pub(super) fn unexpected_attr(
    file: usize,
    a: &Attribute,
    allowed: &[&str],
    diags: &mut Vec<Diagnostic>,
) {
    diags.push(Diagnostic::error(
        "Unsupported argument",
        format!(
            "An argument named \"{}\" is not expected here.{}",
            a.key.as_str(),
            did_you_mean(a.key.as_str(), allowed.iter().copied())
        ),
        span(file, a.key.span()),
    ));
}

pub(super) fn unexpected_block(file: usize, b: &Block, diags: &mut Vec<Diagnostic>) {
    diags.push(Diagnostic::error(
        "Unsupported block type",
        format!(
            "Blocks of type \"{}\" are not expected here.",
            b.ident.as_str()
        ),
        span(file, b.ident.span()),
    ));
}

fn decode_variable(
    m: &mut Module,
    file: usize,
    block: &Block,
    name: &str,
    diags: &mut Vec<Diagnostic>,
    sources: &SourceMap,
) {
    let sp = block_span(file, block);
    if let Some(prev) = m.variables.get(name) {
        diags.push(dup(sources, "Duplicate variable declaration", format!("A variable named \"{name}\" was already declared at {{}}. Variable names must be unique within a module."), &prev.span, sp));
        return;
    }
    let mut v = Variable {
        name: name.to_owned(),
        span: sp,
        type_expr: None,
        default: None,
        sensitive: false,
        nullable: true,
        validations: Vec::new(),
    };
    const ALLOWED: &[&str] = &[
        "type",
        "default",
        "description",
        "sensitive",
        "nullable",
        "ephemeral",
    ];
    for a in block.body.attributes() {
        let e = Expr {
            expr: a.value.clone(),
            file,
        };
        match a.key.as_str() {
            "type" => v.type_expr = Some(e),
            "default" => v.default = Some(e),
            "sensitive" => v.sensitive = literal_bool(file, a, diags),
            "nullable" => v.nullable = literal_bool(file, a, diags),
            "description" | "ephemeral" => {}
            _ => unexpected_attr(file, a, ALLOWED, diags),
        }
    }
    for b in block.body.blocks() {
        if b.ident.as_str() != "validation" {
            unexpected_block(file, b, diags);
            continue;
        }
        let cond = b.body.get_attribute("condition");
        let msg = b.body.get_attribute("error_message");
        match (cond, msg) {
            (Some(c), Some(e)) => v.validations.push(Validation {
                condition: Expr {
                    expr: c.value.clone(),
                    file,
                },
                error_message: Expr {
                    expr: e.value.clone(),
                    file,
                },
                span: span(file, c.value.span()).unwrap_or_else(|| block_span(file, b)),
            }),
            _ => diags.push(Diagnostic::error(
                "Missing required argument",
                "A validation block requires both \"condition\" and \"error_message\" arguments.",
                Some(block_span(file, b)),
            )),
        }
    }
    m.variables.insert(name.to_owned(), v);
}

/// A duplicate-declaration error; `{}` in `detail_fmt` becomes the first declaration's range.
pub(super) fn dup(
    sources: &SourceMap,
    summary: &str,
    detail_fmt: String,
    prev: &Span,
    at: Span,
) -> Diagnostic {
    Diagnostic::error(
        summary,
        detail_fmt.replace("{}", &sources.fmt_range(prev)),
        Some(at),
    )
}

fn decode_locals(
    m: &mut Module,
    file: usize,
    block: &Block,
    diags: &mut Vec<Diagnostic>,
    sources: &SourceMap,
) {
    for a in block.body.attributes() {
        let name = a.key.as_str();
        let sp = span(file, a.key.span()).unwrap_or(Span { file, range: 0..0 });
        if let Some((_, prev)) = m.locals.get(name) {
            diags.push(dup(sources, "Duplicate local value definition", format!("A local value named \"{name}\" was already defined at {{}}. Local value names must be unique within a module."), prev, sp));
            continue;
        }
        m.locals.insert(
            name.to_owned(),
            (
                Expr {
                    expr: a.value.clone(),
                    file,
                },
                sp,
            ),
        );
    }
    for b in block.body.blocks() {
        unexpected_block(file, b, diags);
    }
}

fn decode_output(
    m: &mut Module,
    file: usize,
    block: &Block,
    name: &str,
    diags: &mut Vec<Diagnostic>,
    sources: &SourceMap,
) {
    let sp = block_span(file, block);
    if let Some(prev) = m.outputs.get(name) {
        diags.push(dup(sources, "Duplicate output definition", format!("An output named \"{name}\" was already defined at {{}}. Output names must be unique within a module."), &prev.span, sp));
        return;
    }
    let mut o = Output {
        span: sp.clone(),
        value: None,
        sensitive: false,
        depends_on: Vec::new(),
    };
    const ALLOWED: &[&str] = &[
        "value",
        "description",
        "sensitive",
        "depends_on",
        "ephemeral",
    ];
    for a in block.body.attributes() {
        match a.key.as_str() {
            "value" => {
                o.value = Some(Expr {
                    expr: a.value.clone(),
                    file,
                });
            }
            "sensitive" => o.sensitive = literal_bool(file, a, diags),
            "depends_on" => o.depends_on = traversal_list(file, &a.value, diags),
            "description" | "ephemeral" => {}
            _ => unexpected_attr(file, a, ALLOWED, diags),
        }
    }
    for b in block.body.blocks() {
        if b.ident.as_str() != "precondition" {
            unexpected_block(file, b, diags);
        }
    }
    if o.value.is_none() {
        diags.push(Diagnostic::error(
            "Missing required argument",
            "The argument \"value\" is required, but no definition was found.",
            Some(sp),
        ));
    }
    m.outputs.insert(name.to_owned(), o);
}
