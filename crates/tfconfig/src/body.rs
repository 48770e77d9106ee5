//! Evaluates a resource body against its embedded schema: arguments converted to their types,
//! nested and `dynamic` blocks expanded, defaults and `(known after apply)` filled in, sensitive
//! attributes marked, and Terraform's diagnostics for unknown, missing, read-only and mistyped
//! arguments.

use std::collections::BTreeMap;
use std::ops::Range;

use hcl_edit::Span as _;
use hcl_edit::structure::{Block, Body};

use super::diag::{Diagnostic, did_you_mean};
use super::eval::{ENTRY_BYTES, Scope, iteration_pairs};
use super::schema::{BlockSchema, BodySchema};
use super::types::convert;
use super::value::{Type, Value};

/// Meta-arguments handled elsewhere (only at the top level of a resource).
const META_ATTRS: &[&str] = &["count", "for_each", "depends_on", "provider"];
const META_BLOCKS: &[&str] = &["lifecycle"];

/// The warning for a `provisioner` or `connection` block: atoll applies through the Proxmox VE
/// API and never runs provisioners, so the block is said to be left out, never dropped
/// silently.
fn never_runs(s: &Scope<'_>, block: &hcl_edit::structure::Block) -> Diagnostic {
    let kind = block.labels.first().map(|l| l.as_str().to_owned());
    let (summary, detail) = match (block.ident.as_str(), kind.as_deref()) {
        ("connection", _) => (
            "Connection block is not used",
            "atoll runs no provisioners, so this connection is never opened. Remove it, or keep \
             it for a Terraform run outside atoll."
                .to_owned(),
        ),
        (_, Some("local-exec")) => (
            "Provisioner does not run",
            "A local-exec provisioner is a shell command on the machine running Terraform: \
             atoll never runs a pull request's commands on its server, so this one is left out \
             of the plan and the apply. Do the work in the guest instead (a cloud-init snippet \
             or a hook script), or run it outside atoll."
                .to_owned(),
        ),
        (_, kind) => (
            "Provisioner does not run",
            format!(
                "atoll applies through the Proxmox VE API and runs no provisioners, so this {} \
                 provisioner is left out of the plan and the apply. Do the work in the guest \
                 instead (a cloud-init snippet or a hook script), or run it outside atoll.",
                kind.unwrap_or("unnamed")
            ),
        ),
    };
    let mut d = s.error(summary, detail, block.ident.span());
    d.severity = crate::diag::Severity::Warning;
    d
}

/// Evaluates `body` (whose opening brace is at `open`) against `schema`.
pub(crate) fn eval_body(
    s: &Scope<'_>,
    body: &Body,
    schema: &BodySchema,
    top: bool,
    open: Range<usize>,
    diags: &mut Vec<Diagnostic>,
) -> Value {
    let mut out = BTreeMap::new();
    eval_attrs(s, body, schema, top, &open, diags, &mut out);
    for bs in &schema.blocks {
        out.insert(bs.name.to_owned(), eval_blocks(s, body, bs, diags));
    }
    for block in body.blocks() {
        let name = block.ident.as_str();
        if top && matches!(name, "provisioner" | "connection") {
            diags.push(never_runs(s, block));
            continue;
        }
        if (top && META_BLOCKS.contains(&name)) || name == "dynamic" || schema.block(name).is_some()
        {
            continue;
        }
        let detail = if schema.attr(name).is_some() {
            format!(
                "Blocks of type \"{name}\" are not expected here. Did you mean to define argument \"{name}\"? If so, use the equals sign to assign it a value."
            )
        } else {
            format!(
                "Blocks of type \"{name}\" are not expected here.{}",
                did_you_mean(name, schema.blocks.iter().map(|b| b.name))
            )
        };
        diags.push(s.error("Unsupported block type", detail, block.ident.span()));
    }
    // The attributes were charged as they were evaluated; the body adds its entries (defaults
    // and unknowns included), so many instances or `dynamic` blocks are bounded too.
    let keys: u64 = out.keys().map(|k| k.len() as u64 + ENTRY_BYTES).sum();
    let charged = s
        .charge(out.len() as u64 + 1, Some(open.clone()))
        .and_then(|()| s.charge_bytes(keys, Some(open)));
    if let Err(d) = charged {
        diags.push(d);
        return Value::Unknown(Type::Dynamic);
    }
    Value::Object(out)
}

fn eval_attrs(
    s: &Scope<'_>,
    body: &Body,
    schema: &BodySchema,
    top: bool,
    open: &Range<usize>,
    diags: &mut Vec<Diagnostic>,
    out: &mut BTreeMap<String, Value>,
) {
    for attr in body.attributes() {
        let name = attr.key.as_str();
        if top && META_ATTRS.contains(&name) {
            continue;
        }
        let Some(a) = schema.attr(name) else {
            diags.push(unsupported_argument(s, schema, attr));
            continue;
        };
        if a.read_only {
            diags.push(s.error(
                "Invalid Configuration for Read-Only Attribute",
                format!("Cannot set value for this attribute as the provider has marked it as read-only. Remove the configuration line setting the value.\n\nRefer to the provider documentation or contact the provider developers for additional information about configurable and read-only attributes that are supported. (attribute \"{name}\")"),
                attr.key.span(),
            ));
            continue;
        }
        out.insert(name.to_owned(), eval_argument(s, attr, a, diags));
    }
    for a in &schema.attrs {
        if out.contains_key(a.name) {
            continue;
        }
        if a.required {
            diags.push(s.error(
                "Missing required argument",
                format!(
                    "The argument \"{}\" is required, but no definition was found.",
                    a.name
                ),
                Some(open.clone()),
            ));
            out.insert(a.name.to_owned(), Value::Unknown(a.ty.to_type()));
            continue;
        }
        out.insert(a.name.to_owned(), fill(a).mark(a.sensitive));
    }
}

/// `Unsupported argument`, suggesting a block of that name or a close argument name.
fn unsupported_argument(
    s: &Scope<'_>,
    schema: &BodySchema,
    attr: &hcl_edit::structure::Attribute,
) -> Diagnostic {
    let name = attr.key.as_str();
    let detail = if schema.block(name).is_some() {
        format!(
            "An argument named \"{name}\" is not expected here. Did you mean to define a block of type \"{name}\"?"
        )
    } else {
        let names = schema.attrs.iter().filter(|a| !a.read_only).map(|a| a.name);
        format!(
            "An argument named \"{name}\" is not expected here.{}",
            did_you_mean(name, names)
        )
    };
    s.error("Unsupported argument", detail, attr.key.span())
}

/// One configured argument: evaluated, converted to its schema type (null means unset), and
/// marked when the schema says sensitive. Errors leave an unknown of the right type.
fn eval_argument(
    s: &Scope<'_>,
    attr: &hcl_edit::structure::Attribute,
    a: &super::schema::AttrSchema,
    diags: &mut Vec<Diagnostic>,
) -> Value {
    // An argument of any type keeps the value as written, a typed null or unknown included
    // (cty's conversion to `DynamicPseudoType` is the identity).
    let typed = |v: Value| match a.ty {
        crate::types::Constraint::Any => Ok(v),
        _ => convert(v, &a.ty),
    };
    let v = match s.eval(&attr.value).map(typed) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            diags.push(s.error(
                "Incorrect attribute value type",
                format!(
                    "Inappropriate value for attribute \"{}\": {}.",
                    a.name,
                    e.message()
                ),
                attr.value.span(),
            ));
            return Value::Unknown(a.ty.to_type());
        }
        Err(d) => {
            diags.push(d);
            return Value::Unknown(a.ty.to_type());
        }
    };
    if let Some(check) = &a.check
        && let Err(detail) = check.check(a.name, &v)
    {
        diags.push(s.error(check.summary(), detail, attr.value.span()));
        return Value::Unknown(a.ty.to_type());
    }
    if let Some(dep) = a.deprecated
        && dep.applies_to(&v)
    {
        let mut d = s.error(dep.summary(), dep.message, attr.value.span());
        d.severity = crate::diag::Severity::Warning;
        // Once per argument, however many instances or `dynamic` blocks evaluate it.
        if !diags.contains(&d) {
            diags.push(d);
        }
    }
    let v = if v.is_null() { fill(a) } else { v };
    v.mark(a.sensitive)
}

/// The planned value of an unset attribute: its default, `(known after apply)` when computed,
/// otherwise null.
fn fill(a: &super::schema::AttrSchema) -> Value {
    match (&a.default, a.computed) {
        (Some(d), _) => d.clone(),
        (None, true) => Value::Unknown(a.ty.to_type()),
        (None, false) => Value::Null(a.ty.to_type()),
    }
}

/// The object type of one block, for typed unknowns and empty lists.
pub(crate) fn block_type(bs: &BlockSchema) -> Type {
    let mut m: BTreeMap<String, Type> = bs
        .body
        .attrs
        .iter()
        .map(|a| (a.name.to_owned(), a.ty.to_type()))
        .collect();
    for b in &bs.body.blocks {
        m.insert(b.name.to_owned(), Type::List(Box::new(block_type(b))));
    }
    Type::Object(Box::new(m))
}

/// Evaluates the blocks of one type into a list of objects. The list's element type is left
/// dynamic (the schema has the block type): carrying the object type in every instance would
/// cost more memory than the values themselves.
fn eval_blocks(s: &Scope<'_>, body: &Body, bs: &BlockSchema, diags: &mut Vec<Diagnostic>) -> Value {
    let mut items = Vec::new();
    let mut first_extra: Option<Range<usize>> = None;
    for block in body.blocks() {
        if block.ident.as_str() == bs.name {
            if items.len() == bs.max_items.unwrap_or(usize::MAX) && first_extra.is_none() {
                first_extra = block.ident.span();
            }
            let open = open_brace(s, block);
            items.push(eval_body(s, &block.body, &bs.body, false, open, diags));
        } else if block.ident.as_str() == "dynamic"
            && block.labels.first().is_some_and(|l| l.as_str() == bs.name)
        {
            match eval_dynamic(s, block, bs, diags) {
                Some(more) => items.extend(more),
                None => return Value::Unknown(Type::List(Box::new(block_type(bs)))),
            }
        }
    }
    if let Some(max) = bs.max_items
        && items.len() > max
    {
        diags.push(s.error(
            &format!("Too many {} blocks", bs.name),
            format!("No more than {max} \"{}\" blocks are allowed", bs.name),
            first_extra.or_else(|| body.span()),
        ));
    }
    if items.is_empty() && bs.default_when_absent {
        let mut ignore = Vec::new();
        items.push(eval_body(
            s,
            &Body::new(),
            &bs.body,
            false,
            0..0,
            &mut ignore,
        ));
    }
    Value::List(Type::Dynamic, items)
}

/// Expands `dynamic "name" { for_each = ...; iterator = it; content { ... } }`. `None` when the
/// collection is unknown.
fn eval_dynamic(
    s: &Scope<'_>,
    block: &Block,
    bs: &BlockSchema,
    diags: &mut Vec<Diagnostic>,
) -> Option<Vec<Value>> {
    let Some(fe) = block.body.get_attribute("for_each") else {
        diags.push(s.error(
            "Missing required argument",
            "The argument \"for_each\" is required, but no definition was found.",
            Some(open_brace(s, block)),
        ));
        return Some(Vec::new());
    };
    let iter_name = match block.body.get_attribute("iterator") {
        Some(it) => match &it.value {
            hcl_edit::expr::Expression::Variable(v) => v.as_str().to_owned(),
            other => {
                diags.push(s.error(
                    "Invalid dynamic iterator name",
                    "Dynamic iterator must be a single variable name.",
                    other.span(),
                ));
                return Some(Vec::new());
            }
        },
        None => bs.name.to_owned(),
    };
    let Some(content) = block.body.blocks().find(|b| b.ident.as_str() == "content") else {
        diags.push(s.error(
            "Missing required block",
            "A dynamic block requires a nested \"content\" block.",
            Some(open_brace(s, block)),
        ));
        return Some(Vec::new());
    };
    let coll = match s.eval(&fe.value) {
        Ok(v) => v,
        Err(d) => {
            diags.push(d);
            return Some(Vec::new());
        }
    };
    let (coll, marked) = coll.into_unmarked();
    let pairs = match iteration_pairs(s, coll, "a dynamic block's for_each", fe.value.span()) {
        Ok(Some(p)) => p,
        Ok(None) => return None,
        Err(d) => {
            diags.push(d);
            return Some(Vec::new());
        }
    };
    let open = open_brace(s, content);
    let mut out = Vec::with_capacity(pairs.len());
    for (k, v) in pairs {
        if s.ctx.exhausted() {
            break;
        }
        let it = Value::Object(BTreeMap::from([
            ("key".to_owned(), k.mark(marked)),
            ("value".to_owned(), v.mark(marked)),
        ]));
        let child = s.child(vec![(iter_name.clone(), it)]);
        out.push(eval_body(
            &child,
            &content.body,
            &bs.body,
            false,
            open.clone(),
            diags,
        ));
    }
    Some(out)
}

/// The range of a block's opening `{` (the subject of "Missing required argument").
pub(crate) fn open_brace(s: &Scope<'_>, block: &Block) -> Range<usize> {
    let after = block
        .labels
        .last()
        .and_then(|l| l.span())
        .or_else(|| block.ident.span())
        .map_or(0, |r| r.end);
    let sources = s.ctx.sources.borrow();
    let text = sources.text(s.file);
    let pos = text
        .get(after..)
        .and_then(|t| t.find('{'))
        .map_or(after, |p| after + p);
    pos..pos + 1
}
