//! The body of one resource in the human plan: attributes grouped into blocks by their bpg
//! path (`cpu.units` -> `cpu { units }`), aligned, with Terraform's symbols.

use std::fmt::Write as _;

use serde_json::Value as Json;

use crate::proxmox::plan::{AttributeChange, Effect};

/// What a line or block shows happening.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Create,
    Update,
    Delete,
}

enum Node<'a> {
    Leaf(&'a str, &'a AttributeChange),
    Block(String, Vec<Node<'a>>),
}

/// Splits `network_interface[0].bridge` into `network_interface`, `bridge` (list indexes are
/// dropped, as Terraform shows list blocks one after another).
fn segments(path: &str) -> Vec<&str> {
    path.split('.')
        .map(|s| s.split('[').next().unwrap_or(s))
        .collect()
}

fn block_key(path: &str, depth: usize) -> String {
    // the block identity keeps its index, so network_interface[0] and [1] stay apart
    path.split('.')
        .take(depth + 1)
        .collect::<Vec<_>>()
        .join(".")
}

fn build<'a>(attributes: &[&'a AttributeChange], depth: usize) -> Vec<Node<'a>> {
    let mut nodes: Vec<Node<'a>> = Vec::new();
    let mut groups: Vec<(String, Vec<&'a AttributeChange>)> = Vec::new();
    for attribute in attributes {
        let parts = segments(&attribute.path);
        if parts.len() <= depth + 1 {
            let name = parts.get(depth).copied().unwrap_or(attribute.path.as_str());
            nodes.push(Node::Leaf(name, attribute));
            continue;
        }
        let key = block_key(&attribute.path, depth);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(attribute),
            None => groups.push((key, vec![attribute])),
        }
    }
    for (key, members) in groups {
        let name = segments(&key)
            .get(depth)
            .copied()
            .unwrap_or_default()
            .to_owned();
        nodes.push(Node::Block(name, build(&members, depth + 1)));
    }
    nodes
}

/// Renders a JSON attribute value the way Terraform prints HCL values.
pub(crate) fn value(json: &Json) -> String {
    match json {
        Json::Array(items) => {
            let items: Vec<String> = items.iter().map(value).collect();
            format!("[{}]", items.join(", "))
        }
        // A map (`keepers`, `triggers`) in HCL's form, its keys quoted as Terraform shows them.
        Json::Object(fields) if fields.is_empty() => "{}".to_owned(),
        Json::Object(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{} = {}", Json::from(k.as_str()), value(v)))
                .collect();
            format!("{{ {} }}", fields.join(", "))
        }
        other => other.to_string(),
    }
}

fn before_text(a: &AttributeChange) -> String {
    if a.before_sensitive {
        "(sensitive value)".to_owned()
    } else {
        value(&a.before)
    }
}

fn after_text(a: &AttributeChange) -> String {
    match (a.after_sensitive, a.after_unknown) {
        (true, _) => "(sensitive value)".to_owned(),
        (false, true) => "(known after apply)".to_owned(),
        (false, false) => value(&a.after),
    }
}

fn leaf(a: &AttributeChange, mode: Mode) -> (char, String) {
    let hidden_before = a.before_sensitive;
    let before_null = a.before.is_null() && !hidden_before;
    let after_null = a.after.is_null() && !a.after_sensitive && !a.after_unknown;
    let forces = if a.effect == Some(Effect::Replace) {
        " # forces replacement"
    } else {
        ""
    };
    match mode {
        Mode::Create => ('+', after_text(a)),
        Mode::Delete => ('-', format!("{} -> null", before_text(a))),
        Mode::Update if before_null => ('+', format!("{}{forces}", after_text(a))),
        Mode::Update if after_null => ('-', format!("{} -> null{forces}", before_text(a))),
        Mode::Update => (
            '~',
            format!("{} -> {}{forces}", before_text(a), after_text(a)),
        ),
    }
}

fn block_symbol(mode: Mode) -> char {
    match mode {
        Mode::Create => '+',
        Mode::Update => '~',
        Mode::Delete => '-',
    }
}

fn render_nodes(out: &mut String, nodes: &[Node<'_>], mode: Mode, indent: usize, id: Option<&str>) {
    let pad = " ".repeat(indent);
    let width = nodes
        .iter()
        .filter_map(|n| match n {
            Node::Leaf(name, _) => Some(name.len()),
            Node::Block(..) => None,
        })
        .chain(id.map(|_| "id".len()))
        .max()
        .unwrap_or(0);
    if let Some(id) = id {
        let _ = writeln!(out, "{pad}    {:<width$} = {}", "id", Json::from(id));
    }
    let mut first_block = true;
    for node in nodes {
        match node {
            Node::Leaf(name, attribute) => {
                let (symbol, text) = leaf(attribute, mode);
                let _ = writeln!(out, "{pad}  {symbol} {name:<width$} = {text}");
            }
            Node::Block(name, children) => {
                let had_leaves = width > 0;
                if !first_block || had_leaves {
                    out.push('\n');
                }
                first_block = false;
                let _ = writeln!(out, "{pad}  {} {name} {{", block_symbol(mode));
                render_nodes(out, children, mode, indent + 4, None);
                let _ = writeln!(out, "{pad}    }}");
            }
        }
    }
}

/// Appends the attributes of one resource; `id` is shown first, unchanged, when known.
pub(crate) fn render_body(
    out: &mut String,
    attributes: &[AttributeChange],
    mode: Mode,
    id: Option<&str>,
) {
    let refs: Vec<&AttributeChange> = attributes.iter().collect();
    let nodes = build(&refs, 0);
    render_nodes(out, &nodes, mode, 4, id);
}
