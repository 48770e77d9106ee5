//! The configuration model of one module directory, decoded from parsed files: variables,
//! locals, resources, data sources, module calls, outputs, with duplicate and structure
//! diagnostics as Terraform reports them. Nothing is evaluated here except literal flags.

use std::collections::BTreeMap;
use std::ops::Range;

use hcl_edit::Span as _;
use hcl_edit::expr::{Expression, TraversalOperator};
use hcl_edit::structure::{Attribute, Block, Body};

use super::diag::{Diagnostic, SourceMap, Span, did_you_mean};

/// An expression with the file it came from.
#[derive(Debug, Clone)]
pub(crate) struct Expr {
    pub(crate) expr: Expression,
    pub(crate) file: usize,
}

impl Expr {
    pub(crate) fn span(&self) -> Option<Span> {
        self.expr.span().map(|range| Span {
            file: self.file,
            range,
        })
    }
}

#[derive(Debug)]
pub(crate) struct Validation {
    pub(crate) condition: Expr,
    pub(crate) error_message: Expr,
    pub(crate) span: Span,
}

#[derive(Debug)]
pub(crate) struct Variable {
    pub(crate) name: String,
    pub(crate) span: Span,
    pub(crate) type_expr: Option<Expr>,
    pub(crate) default: Option<Expr>,
    pub(crate) sensitive: bool,
    pub(crate) nullable: bool,
    pub(crate) validations: Vec<Validation>,
}

/// `lifecycle {}` as the planner needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Lifecycle {
    pub prevent_destroy: bool,
    pub create_before_destroy: bool,
    /// Attribute paths (`"cpu[0].units"` style, as written) or `["all"]`.
    pub ignore_changes: Vec<String>,
    pub replace_triggered_by: Vec<String>,
}

#[derive(Debug)]
pub(crate) struct Resource {
    pub(crate) data: bool,
    pub(crate) rtype: String,
    pub(crate) name: String,
    pub(crate) span: Span,
    pub(crate) type_span: Span,
    /// The block's opening brace (subject of "Missing required argument").
    pub(crate) open: Span,
    pub(crate) body: Body,
    pub(crate) file: usize,
    pub(crate) count: Option<Expr>,
    pub(crate) for_each: Option<Expr>,
    /// Traversals in `depends_on`, as text (`random_password.root`).
    pub(crate) depends_on: Vec<(String, Span)>,
    pub(crate) lifecycle: Lifecycle,
}

#[derive(Debug)]
pub(crate) struct ModuleCall {
    pub(crate) name: String,
    pub(crate) span: Span,
    /// Span of the block body's opening brace (subject of "Missing required argument").
    pub(crate) open_span: Span,
    pub(crate) source: String,
    pub(crate) source_span: Span,
    pub(crate) count: Option<Expr>,
    pub(crate) for_each: Option<Expr>,
    pub(crate) depends_on: Vec<(String, Span)>,
    /// Arguments: name, name span, value.
    pub(crate) args: Vec<(String, Span, Expr)>,
}

#[derive(Debug)]
pub(crate) struct Output {
    pub(crate) span: Span,
    pub(crate) value: Option<Expr>,
    pub(crate) sensitive: bool,
    pub(crate) depends_on: Vec<(String, Span)>,
}

/// One module directory, decoded.
#[derive(Debug, Default)]
pub(crate) struct Module {
    pub(crate) variables: BTreeMap<String, Variable>,
    pub(crate) locals: BTreeMap<String, (Expr, Span)>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) calls: BTreeMap<String, ModuleCall>,
    pub(crate) outputs: BTreeMap<String, Output>,
    pub(crate) backend_seen: bool,
}

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
            "variable" if need(1, "name", diags) => decode_variable(m, file, block, labels[0], diags, sources),
            "locals" => decode_locals(m, file, block, diags, sources),
            "output" if need(1, "name", diags) => decode_output(m, file, block, labels[0], diags, sources),
            "module" if need(1, "name", diags) => decode_module(m, file, block, labels[0], diags, sources),
            "resource" if need(2, "type, name", diags) => decode_resource(m, file, block, false, diags, sources),
            "data" if need(2, "type, name", diags) => decode_resource(m, file, block, true, diags, sources),
            "moved" | "import" | "removed" | "check" => diags.push(Diagnostic::error(
                format!("Unsupported block type \"{kind}\""),
                format!("atoll does not support \"{kind}\" blocks yet; remove it or apply this change with Terraform."),
                Some(bspan),
            )),
            "variable" | "output" | "module" | "resource" | "data" => {}
            other => diags.push(Diagnostic::error(
                "Unsupported block type",
                format!("Blocks of type \"{other}\" are not expected here.{}", did_you_mean(other, TOP_BLOCKS.iter().copied())),
                Some(bspan),
            )),
        }
    }
}

pub(crate) fn span(file: usize, r: Option<Range<usize>>) -> Option<Span> {
    r.map(|range| Span { file, range })
}

fn block_span(file: usize, b: &Block) -> Span {
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
            }
            m.backend_seen = true;
        }
    }
}

fn literal_bool(file: usize, a: &Attribute, diags: &mut Vec<Diagnostic>) -> bool {
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

fn unexpected_attr(file: usize, a: &Attribute, allowed: &[&str], diags: &mut Vec<Diagnostic>) {
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

fn unexpected_block(file: usize, b: &Block, diags: &mut Vec<Diagnostic>) {
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
fn dup(
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
                })
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

/// Renders a traversal (`a.b["k"]`) as text, for `depends_on` and `ignore_changes`.
pub(crate) fn traversal_text(e: &Expression) -> Option<String> {
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
                        out.push_str(&format!("[{}]", n.value()))
                    }
                    TraversalOperator::Index(Expression::String(s)) => {
                        out.push_str(&format!("[{:?}]", s.value()))
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

pub(crate) fn traversal_list(
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

fn decode_module(
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
            "version" | "providers" => {}
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

fn decode_resource(
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
                    .collect()
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
