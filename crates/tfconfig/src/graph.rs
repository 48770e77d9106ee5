//! The dependency graph of one module's locals, resources, module calls and outputs, taken from
//! the references in their expressions and `depends_on`; sorted topologically, cycles reported
//! as Terraform does (`Cycle: local.a, local.b`).

use std::collections::{BTreeMap, BTreeSet};

use super::config::Module;
use super::diag::Diagnostic;
use super::eval::references;
use super::module::body_refs;

/// One node of a module's graph.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Node {
    Local(String),
    /// Index into `Module::resources`.
    Resource(usize),
    Call(String),
    Output(String),
}

type Ref = (String, Option<String>, Option<String>);

fn label(m: &Module, n: &Node) -> String {
    match n {
        Node::Local(l) => format!("local.{l}"),
        Node::Resource(i) => {
            let r = &m.resources[*i];
            if r.data {
                format!("data.{}.{}", r.rtype, r.name)
            } else {
                format!("{}.{}", r.rtype, r.name)
            }
        }
        Node::Call(c) => format!("module.{c}"),
        Node::Output(o) => format!("output.{o}"),
    }
}

fn target(m: &Module, by_addr: &BTreeMap<String, usize>, r: &Ref) -> Option<Node> {
    match (r.0.as_str(), &r.1, &r.2) {
        ("local", Some(a), _) if m.locals.contains_key(a) => Some(Node::Local(a.clone())),
        ("module", Some(a), _) if m.calls.contains_key(a) => Some(Node::Call(a.clone())),
        ("data", Some(t), Some(n)) => by_addr
            .get(&format!("data.{t}.{n}"))
            .map(|i| Node::Resource(*i)),
        ("var" | "each" | "count" | "path" | "terraform" | "self", _, _) => None,
        (root, Some(n), _) => by_addr
            .get(&format!("{root}.{n}"))
            .map(|i| Node::Resource(*i)),
        _ => None,
    }
}

fn text_ref(t: &str) -> Ref {
    let mut parts = t.split(['.', '[']);
    let a = parts.next().unwrap_or("").to_owned();
    let b = parts.next().map(str::to_owned);
    let c = parts.next().map(str::to_owned);
    (a, b, c)
}

/// Nodes in an order where every node comes after what it references.
pub(crate) fn order(m: &Module) -> Result<Vec<Node>, Diagnostic> {
    let by_addr: BTreeMap<String, usize> = m
        .resources
        .iter()
        .enumerate()
        .map(|(i, _)| (label(m, &Node::Resource(i)), i))
        .collect();
    let mut edges: BTreeMap<Node, BTreeSet<Node>> = BTreeMap::new();
    let mut spans = BTreeMap::new();
    let mut add = |n: Node, refs: Vec<Ref>, span: super::diag::Span| {
        let deps: BTreeSet<Node> = refs.iter().filter_map(|r| target(m, &by_addr, r)).collect();
        spans.insert(n.clone(), span);
        edges.insert(n, deps);
    };
    for (name, (e, span)) in &m.locals {
        let mut refs = Vec::new();
        references(&e.expr, &mut refs);
        add(Node::Local(name.clone()), refs, span.clone());
    }
    for (i, r) in m.resources.iter().enumerate() {
        let mut refs = Vec::new();
        body_refs(&r.body, &mut refs);
        refs.extend(r.depends_on.iter().map(|(t, _)| text_ref(t)));
        add(Node::Resource(i), refs, r.span.clone());
    }
    for (name, c) in &m.calls {
        let mut refs = Vec::new();
        for (_, _, e) in &c.args {
            references(&e.expr, &mut refs);
        }
        for e in c.count.iter().chain(&c.for_each) {
            references(&e.expr, &mut refs);
        }
        refs.extend(c.depends_on.iter().map(|(t, _)| text_ref(t)));
        add(Node::Call(name.clone()), refs, c.span.clone());
    }
    for (name, o) in &m.outputs {
        let mut refs = Vec::new();
        if let Some(v) = &o.value {
            references(&v.expr, &mut refs);
        }
        refs.extend(o.depends_on.iter().map(|(t, _)| text_ref(t)));
        add(Node::Output(name.clone()), refs, o.span.clone());
    }
    topo(m, &edges, &spans)
}

fn topo(
    m: &Module,
    edges: &BTreeMap<Node, BTreeSet<Node>>,
    spans: &BTreeMap<Node, super::diag::Span>,
) -> Result<Vec<Node>, Diagnostic> {
    // 0 = unvisited, 1 = on stack, 2 = done; iterative DFS to stay safe on deep chains.
    let mut state: BTreeMap<&Node, u8> = BTreeMap::new();
    let mut out = Vec::with_capacity(edges.len());
    for start in edges.keys() {
        if state.get(start).copied().unwrap_or(0) != 0 {
            continue;
        }
        let mut stack: Vec<(&Node, Vec<&Node>)> = vec![(start, edges[start].iter().collect())];
        state.insert(start, 1);
        while let Some((node, pending)) = stack.last_mut() {
            let node: &Node = node;
            match pending.pop() {
                Some(next) => match state.get(next).copied().unwrap_or(0) {
                    0 => {
                        state.insert(next, 1);
                        let succ = edges
                            .get(next)
                            .map(|s| s.iter().collect())
                            .unwrap_or_default();
                        stack.push((next, succ));
                    }
                    1 => {
                        let pos = stack.iter().position(|(n, _)| *n == next).unwrap_or(0);
                        let mut cycle: Vec<String> =
                            stack[pos..].iter().map(|(n, _)| label(m, n)).collect();
                        cycle.sort();
                        return Err(Diagnostic::error(
                            format!("Cycle: {}", cycle.join(", ")),
                            "These values refer to each other, so none of them can be evaluated first. Break the cycle by removing one of the references.",
                            spans.get(next).cloned(),
                        ));
                    }
                    _ => {}
                },
                None => {
                    state.insert(node, 2);
                    out.push(node.clone());
                    stack.pop();
                }
            }
        }
    }
    Ok(out)
}
