//! Decoding of `module`, `resource` and `data` blocks, their meta-arguments (`count`,
//! `for_each`, `depends_on`, `lifecycle`) and static traversal lists.

use std::ops::Range;

use hcl_edit::Span as _;
use hcl_edit::expr::{Expression, TraversalOperator};
use hcl_edit::structure::Block;

use super::decode::{block_span, dup, literal_bool, span, unexpected_attr, unexpected_block};
use super::{Expr, Lifecycle, Module, ModuleCall, Resource};
use crate::diag::{Diagnostic, SourceMap, Span};

/// Renders a traversal (`a.b["k"]`) as text, for `depends_on` and `ignore_changes`.
pub(super) fn traversal_text(e: &Expression) -> Option<String> {
    match e {
        Expression::Variable(v) => Some(v.as_str().to_owned()),
        Expression::Traversal(t) => {
            let mut out = traversal_text(&t.expr)?;
            for op in &t.operators {
                match op.value() {
                    TraversalOperator::GetAttr(a) => {
                        out.push('.');
                        out.push_str(a.as_str());
                    }
                    TraversalOperator::Index(Expression::Number(n)) => {
                        out.push_str(&format!("[{}]", n.value()));
                    }
                    TraversalOperator::Index(Expression::String(s)) => {
                        out.push_str(&format!("[{:?}]", s.value()));
                    }
                    TraversalOperator::LegacyIndex(n) => out.push_str(&format!("[{}]", n.value())),
                    _ => return None,
                }
            }
            Some(out)
        }
        _ => None,
    }
}

pub(super) fn traversal_list(
    file: usize,
    e: &Expression,
    diags: &mut Vec<Diagnostic>,
) -> Vec<(String, Span)> {
    let Expression::Array(items) = e else {
        diags.push(Diagnostic::error(
            "Invalid expression",
            "A static list expression is required.",
            span(file, e.span()),
        ));
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in items.iter() {
        match traversal_text(item) {
            Some(t) => out.push((t, span(file, item.span()).unwrap_or(Span { file, range: 0..0 }))),
            None => diags.push(Diagnostic::error("Invalid expression", "A single static variable reference is required: only attribute access and indexing with constant keys. No calculations, function calls, template expressions, etc are allowed here.", span(file, item.span()))),
        }
    }
    out
}

pub(super) fn decode_module(
    m: &mut Module,
    file: usize,
    block: &Block,
    name: &str,
    diags: &mut Vec<Diagnostic>,
    sources: &SourceMap,
) {
    let sp = block_span(file, block);
    if let Some(prev) = m.calls.get(name) {
        diags.push(dup(sources, "Duplicate module call", format!("A module call named \"{name}\" was already defined at {{}}. Module calls must have unique names within a module."), &prev.span, sp));
        return;
    }
    let open = Span {
        file,
        range: open_brace(sources.text(file), block),
    };
    let mut c = ModuleCall {
        name: name.to_owned(),
        span: sp.clone(),
        open_span: open,
        source: String::new(),
        source_span: sp.clone(),
        version: None,
        count: None,
        for_each: None,
        depends_on: Vec::new(),
        args: Vec::new(),
    };
    let mut has_source = false;
    for a in block.body.attributes() {
        let e = Expr {
            expr: a.value.clone(),
            file,
        };
        match a.key.as_str() {
            "source" => {
                has_source = true;
                c.source_span = e.span().unwrap_or_else(|| sp.clone());
                match a.value.as_str() {
                    Some(s) => c.source = s.to_owned(),
                    None => diags.push(Diagnostic::error(
                        "Invalid value for module source",
                        "The module source address must be a literal string.",
                        e.span(),
                    )),
                }
            }
            "count" => c.count = Some(e),
            "for_each" => c.for_each = Some(e),
            "depends_on" => c.depends_on = traversal_list(file, &a.value, diags),
            "version" => match a.value.as_str() {
                Some(v) => c.version = Some(v.to_owned()),
                None => diags.push(Diagnostic::error(
                    "Invalid version constraint",
                    "A version constraint must be a literal string, like \"~> 1.2\".",
                    e.span(),
                )),
            },
            "providers" => {}
            other => c.args.push((
                other.to_owned(),
                span(file, a.key.span()).unwrap_or_else(|| sp.clone()),
                e,
            )),
        }
    }
    for b in block.body.blocks() {
        if b.ident.as_str() != "lifecycle" {
            unexpected_block(file, b, diags);
        }
    }
    if c.count.is_some() && c.for_each.is_some() {
        diags.push(Diagnostic::error("Invalid combination of \"count\" and \"for_each\"", "The \"count\" and \"for_each\" meta-arguments are mutually-exclusive, only one should be used to be explicit about the number of module instances to be created.", c.for_each.as_ref().and_then(Expr::span)));
    }
    if !has_source {
        diags.push(Diagnostic::error(
            "Missing required argument",
            "The argument \"source\" is required, but no definition was found.",
            Some(c.open_span.clone()),
        ));
        return;
    }
    m.calls.insert(name.to_owned(), c);
}

/// The byte range of a block's `{` (searched for after its last label).
pub(crate) fn open_brace(text: &str, block: &Block) -> Range<usize> {
    let after = block
        .labels
        .last()
        .and_then(|l| l.span())
        .or_else(|| block.ident.span())
        .map_or(0, |r| r.end);
    let pos = text
        .get(after..)
        .and_then(|t| t.find('{'))
        .map_or(after, |p| after + p);
    pos..pos + 1
}

pub(super) fn decode_resource(
    m: &mut Module,
    file: usize,
    block: &Block,
    data: bool,
    diags: &mut Vec<Diagnostic>,
    sources: &SourceMap,
) {
    let rtype = block.labels[0].as_str().to_owned();
    let name = block.labels[1].as_str().to_owned();
    let sp = block_span(file, block);
    if let Some(prev) = m
        .resources
        .iter()
        .find(|r| r.data == data && r.rtype == rtype && r.name == name)
    {
        let what = if data { "data" } else { "resource" };
        diags.push(dup(sources, &format!("Duplicate {what} \"{rtype}\" configuration"), format!("A {rtype} {what} named \"{name}\" was already declared at {{}}. Resource names must be unique per type in each module."), &prev.span, sp));
        return;
    }
    let mut r = Resource {
        data,
        rtype,
        name,
        span: sp.clone(),
        type_span: span(file, block.labels[0].span()).unwrap_or_else(|| sp.clone()),
        open: Span {
            file,
            range: open_brace(sources.text(file), block),
        },
        body: block.body.clone(),
        file,
        count: None,
        for_each: None,
        depends_on: Vec::new(),
        lifecycle: Lifecycle::default(),
    };
    for a in block.body.attributes() {
        let e = Expr {
            expr: a.value.clone(),
            file,
        };
        match a.key.as_str() {
            "count" => r.count = Some(e),
            "for_each" => r.for_each = Some(e),
            "depends_on" => r.depends_on = traversal_list(file, &a.value, diags),
            _ => {}
        }
    }
    if r.count.is_some() && r.for_each.is_some() {
        diags.push(Diagnostic::error("Invalid combination of \"count\" and \"for_each\"", "The \"count\" and \"for_each\" meta-arguments are mutually-exclusive, only one should be used to be explicit about the number of resources to be created.", r.for_each.as_ref().and_then(Expr::span)));
    }
    for b in block
        .body
        .blocks()
        .filter(|b| b.ident.as_str() == "lifecycle")
    {
        r.lifecycle = decode_lifecycle(file, b, diags);
    }
    m.resources.push(r);
}

fn decode_lifecycle(file: usize, b: &Block, diags: &mut Vec<Diagnostic>) -> Lifecycle {
    let mut l = Lifecycle::default();
    const ALLOWED: &[&str] = &[
        "prevent_destroy",
        "create_before_destroy",
        "ignore_changes",
        "replace_triggered_by",
    ];
    for a in b.body.attributes() {
        match a.key.as_str() {
            "prevent_destroy" => l.prevent_destroy = literal_bool(file, a, diags),
            "create_before_destroy" => l.create_before_destroy = literal_bool(file, a, diags),
            "ignore_changes" => {
                l.ignore_changes = match &a.value {
                    Expression::Variable(v) if v.as_str() == "all" => vec!["all".to_owned()],
                    other => traversal_list(file, other, diags)
                        .into_iter()
                        .map(|(t, _)| t)
                        .collect(),
                }
            }
            "replace_triggered_by" => {
                l.replace_triggered_by = traversal_list(file, &a.value, diags)
                    .into_iter()
                    .map(|(t, _)| t)
                    .collect();
            }
            _ => unexpected_attr(file, a, ALLOWED, diags),
        }
    }
    for inner in b.body.blocks() {
        if !matches!(inner.ident.as_str(), "precondition" | "postcondition") {
            unexpected_block(file, inner, diags);
        }
    }
    l
}
