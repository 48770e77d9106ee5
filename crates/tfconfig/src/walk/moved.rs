//! `moved` and `removed` blocks: their static addresses, made absolute with the module
//! instance's prefix, and Terraform's checks against the configuration (a moved or removed
//! object still declared, mixed kinds, instance keys where none are allowed, a move onto
//! itself, two moves of one object). Which state objects they touch is the caller's to find.
//! Every message was checked against Terraform 1.15 (`tests/oracle/moved.txt`).

use std::collections::BTreeMap;

use hcl_edit::expr::{Expression, TraversalOperator};

use super::super::config::Expr;
use super::super::diag::{Diagnostic, Span};
use super::super::eval::Ctx;
use super::super::load::ModuleTree;
use super::super::module::Env;
use super::super::{MoveStatement, Removal, ResourceInstance};
use crate::value::quote;

/// A static address: module steps, then an optional resource, each with an optional key.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Endpoint {
    modules: Vec<(String, Option<String>)>,
    resource: Option<(String, String, Option<String>)>,
}

impl Endpoint {
    fn is_module(&self) -> bool {
        self.resource.is_none()
    }

    /// Whether the last step carries an instance key.
    fn keyed(&self) -> bool {
        match &self.resource {
            Some((_, _, key)) => key.is_some(),
            None => self.modules.last().is_some_and(|(_, key)| key.is_some()),
        }
    }

    fn render(&self) -> String {
        let mut parts: Vec<String> = self
            .modules
            .iter()
            .map(|(name, key)| format!("module.{name}{}", key.as_deref().unwrap_or("")))
            .collect();
        if let Some((ty, name, key)) = &self.resource {
            parts.push(format!("{ty}.{name}{}", key.as_deref().unwrap_or("")));
        }
        parts.join(".")
    }
}

/// The `moved` and `removed` blocks of one module instance, checked.
pub(crate) fn statements(
    ctx: &Ctx,
    env: &Env<'_>,
    resources: &[ResourceInstance],
    diags: &mut Vec<Diagnostic>,
) -> (Vec<MoveStatement>, Vec<Removal>) {
    let tree = env.tree;
    let mut moves = Vec::new();
    let mut first_from: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut first_to: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut any_refused = false;
    for block in &tree.config.moves {
        let (Some(from), Some(to)) = (endpoint(&block.from, diags), endpoint(&block.to, diags))
        else {
            continue;
        };
        let declared_at = at(ctx, &block.span, true);
        if from.is_module() != to.is_module() {
            diags.push(Diagnostic::error(
                "Invalid \"moved\" addresses",
                "The \"from\" and \"to\" addresses must either both refer to resources or both \
                 refer to modules.",
                Some(block.span.clone()),
            ));
            continue;
        }
        let (from_text, to_text) = (
            format!("{}{}", env.prefix, from.render()),
            format!("{}{}", env.prefix, to.render()),
        );
        if from == to {
            diags.push(Diagnostic::error(
                "Redundant move statement",
                format!(
                    "This statement declares a move from {from_text} to the same address, which \
                     is the same as not declaring this move at all."
                ),
                Some(block.span.clone()),
            ));
            continue;
        }
        // Terraform's nouns for what moves (internal/refactoring/move_validate.go)
        let keyed = from.keyed() || to.keyed();
        let (noun, short) = match (from.is_module(), keyed) {
            (true, true) => ("module instance", "instance"),
            (true, false) => ("module call", "call"),
            (false, true) => ("resource instance", "instance"),
            (false, false) => ("resource", "resource"),
        };
        let mut refused = false;
        if let Some(declared) = still_declared(ctx, env, &from, resources) {
            diags.push(Diagnostic::error(
                "Moved object still exists",
                format!(
                    "This statement declares a move from {from_text}, but that {noun} is still \
                     declared at {declared}.\n\nChange your configuration so that this {short} \
                     will be declared as {to_text} instead."
                ),
                Some(block.span.clone()),
            ));
            refused = true;
        }
        match first_from.get(&from_text) {
            Some((other_at, other_to)) if *other_to != to_text => {
                diags.push(Diagnostic::error(
                    "Ambiguous move statements",
                    format!(
                        "A statement at {other_at} declared that {from_text} moved to \
                         {other_to}, but this statement instead declares that it moved to \
                         {to_text}.\n\nEach {noun} can move to only one destination {short}."
                    ),
                    Some(block.span.clone()),
                ));
                refused = true;
            }
            Some(_) => {}
            None => {
                first_from.insert(from_text.clone(), (declared_at.clone(), to_text.clone()));
            }
        }
        match first_to.get(&to_text) {
            Some((other_at, other_from)) if *other_from != from_text => {
                diags.push(Diagnostic::error(
                    "Ambiguous move statements",
                    format!(
                        "A statement at {other_at} declared that {other_from} moved to \
                         {to_text}, but this statement instead declares that {from_text} moved \
                         there.\n\nEach {noun} can have moved from only one source {short}."
                    ),
                    Some(block.span.clone()),
                ));
                refused = true;
            }
            Some(_) => {}
            None => {
                first_to.insert(to_text.clone(), (declared_at.clone(), from_text.clone()));
            }
        }
        if let (Some((t1, _, _)), Some((t2, _, _))) = (&from.resource, &to.resource)
            && t1 != t2
        {
            diags.push(Diagnostic::error(
                "Resource type mismatch",
                format!(
                    "This statement declares a move from {from_text} to {to_text}, which is a \
                     {noun} of a different type."
                ),
                None,
            ));
            refused = true;
        }
        if refused {
            any_refused = true;
            continue;
        }
        moves.push(MoveStatement {
            from: from_text,
            to: to_text,
            module: from.is_module(),
            keyed,
            declared_at,
        });
    }
    // Terraform reports a cycle only when nothing else was wrong
    if any_refused {
        moves.clear();
    }
    if let Some(d) = cycle(&moves) {
        diags.push(d);
        moves.clear();
    }
    let removals = tree
        .config
        .removed
        .iter()
        .filter_map(|block| {
            let from = endpoint(&block.from, diags)?;
            let subject = block.from.span().unwrap_or_else(|| block.span.clone());
            if from.keyed() {
                let detail = if from.is_module() {
                    "Module address must be a module (e.g. \"module.foo\"), not a module instance \
                     (e.g. \"module.foo[1]\")."
                } else {
                    "Resource address must be a resource (e.g. \"test_instance.foo\"), not a \
                     resource instance (e.g. \"test_instance.foo[1]\")."
                };
                let summary = if from.is_module() {
                    "Module instance keys not allowed"
                } else {
                    "Resource instance keys not allowed"
                };
                diags.push(Diagnostic::error(summary, detail, Some(subject)));
                return None;
            }
            if let Some(span) = declaration(tree, &from) {
                let summary = if from.is_module() {
                    "Removed module still exists"
                } else {
                    "Removed resource still exists"
                };
                diags.push(Diagnostic::error(
                    summary,
                    format!(
                        "This statement declares that {} was removed, but it is still declared \
                         in configuration.",
                        from.render()
                    ),
                    Some(span),
                ));
                return None;
            }
            Some(Removal {
                from: format!("{}{}", env.prefix, from.render()),
                module: from.is_module(),
                destroy: block.destroy,
                declared_at: at(ctx, &block.span, false),
            })
        })
        .collect();
    (moves, removals)
}

/// Statements that chain back to where they started, as Terraform lists them.
fn cycle(moves: &[MoveStatement]) -> Option<Diagnostic> {
    for start in 0..moves.len() {
        let mut path = vec![start];
        let mut current = start;
        while let Some(next) = moves.iter().position(|m| m.from == moves[current].to) {
            if next == start {
                let star = |m: &MoveStatement, a: &str| {
                    if m.module || m.keyed {
                        a.to_owned()
                    } else {
                        format!("{a}[*]")
                    }
                };
                let lines: Vec<String> = path
                    .iter()
                    .map(|&i| {
                        let m = &moves[i];
                        format!(
                            "  - {}: {} → {}",
                            m.declared_at,
                            star(m, &m.from),
                            star(m, &m.to)
                        )
                    })
                    .collect();
                return Some(Diagnostic::error(
                    "Cyclic dependency in move statements",
                    format!(
                        "The following chained move statements form a cycle, and so there is no \
                         final location to move objects to:\n{}\n\nA chain of move statements \
                         must end with an address that doesn't appear in any other statements, \
                         and which typically also refers to an object still declared in the \
                         configuration.",
                        lines.join("\n")
                    ),
                    None,
                ));
            }
            if path.contains(&next) || path.len() > moves.len() {
                break;
            }
            path.push(next);
            current = next;
        }
    }
    None
}

/// `main.tf:3` or, with `column`, `main.tf:3,1` (how Terraform names a declaration).
fn at(ctx: &Ctx, span: &Span, column: bool) -> String {
    ctx.sources
        .borrow()
        .locate(span)
        .map(|(f, l, c)| {
            if column {
                format!("{f}:{l},{c}")
            } else {
                format!("{f}:{l}")
            }
        })
        .unwrap_or_default()
}

/// Where `from` is still declared in this module instance, if it is.
fn still_declared(
    ctx: &Ctx,
    env: &Env<'_>,
    from: &Endpoint,
    resources: &[ResourceInstance],
) -> Option<String> {
    let span = declaration(env.tree, from)?;
    if from.keyed() {
        // an instance: still declared only if that very instance is configured
        let address = format!("{}{}", env.prefix, from.render());
        let configured = if from.is_module() {
            let prefix = format!("{address}.");
            resources.iter().any(|r| r.address.starts_with(&prefix))
        } else {
            resources.iter().any(|r| r.address == address)
        };
        if !configured {
            return None;
        }
    }
    Some(at(ctx, &span, true))
}

/// The block that declares `from`'s resource or module call in this module's tree.
fn declaration(tree: &ModuleTree, from: &Endpoint) -> Option<Span> {
    let mut tree = tree;
    let (last_module, walk) = match from.resource {
        Some(_) => (None, &from.modules[..]),
        None => {
            let (last, rest) = from.modules.split_last()?;
            (Some(last), rest)
        }
    };
    for (name, _) in walk {
        tree = tree.children.get(name)?;
    }
    if let Some((name, _)) = last_module {
        return tree.config.calls.get(name).map(|c| c.span.clone());
    }
    let (ty, name, _) = from.resource.as_ref()?;
    tree.config
        .resources
        .iter()
        .find(|r| !r.data && &r.rtype == ty && &r.name == name)
        .map(|r| r.span.clone())
}

fn invalid_expression(expr: &Expr) -> Diagnostic {
    Diagnostic::error(
        "Invalid expression",
        "A single static variable reference is required: only attribute access and indexing \
         with constant keys. No calculations, function calls, template expressions, etc are \
         allowed here.",
        expr.span(),
    )
}

/// A static reference to a module, module instance, resource or resource instance.
fn endpoint(expr: &Expr, diags: &mut Vec<Diagnostic>) -> Option<Endpoint> {
    let parsed = parse(&expr.expr);
    match parsed {
        Ok(Some(endpoint)) => Some(endpoint),
        Ok(None) => {
            diags.push(Diagnostic::error(
                "Invalid address",
                "A moved or removed block can refer only to a managed resource (e.g. \
                 \"proxmox_virtual_environment_container.ct\") or a module (e.g. \"module.lxc\").",
                expr.span(),
            ));
            None
        }
        Err(()) => {
            diags.push(invalid_expression(expr));
            None
        }
    }
}

/// `Ok(None)`: static but not an address this block takes; `Err`: not static.
fn parse(expr: &Expression) -> Result<Option<Endpoint>, ()> {
    enum Part {
        Name(String),
        Key(String),
    }
    let (root, operators) = match expr {
        Expression::Variable(v) => (v.as_str(), &[][..]),
        Expression::Traversal(t) => match &t.expr {
            Expression::Variable(v) => (v.as_str(), t.operators.as_slice()),
            _ => return Err(()),
        },
        _ => return Err(()),
    };
    let mut parts = vec![Part::Name(root.to_owned())];
    for op in operators {
        match op.value() {
            TraversalOperator::GetAttr(a) => parts.push(Part::Name(a.as_str().to_owned())),
            TraversalOperator::LegacyIndex(n) => parts.push(Part::Key(format!("[{}]", n.value()))),
            TraversalOperator::Index(Expression::String(s)) => {
                parts.push(Part::Key(format!("[{}]", quote(s.value()))));
            }
            TraversalOperator::Index(Expression::Number(n)) => match n.value().as_u64() {
                Some(n) => parts.push(Part::Key(format!("[{n}]"))),
                None => return Ok(None),
            },
            _ => return Err(()),
        }
    }
    let mut endpoint = Endpoint {
        modules: Vec::new(),
        resource: None,
    };
    let mut i = usize::from(matches!(parts.first(), Some(Part::Name(n)) if n == "resource"));
    let key_at = |i: usize| match parts.get(i) {
        Some(Part::Key(k)) => Some(k.clone()),
        _ => None,
    };
    loop {
        match (parts.get(i), parts.get(i + 1)) {
            (Some(Part::Name(m)), Some(Part::Name(name))) if m == "module" => {
                let key = key_at(i + 2);
                i += 2 + usize::from(key.is_some());
                endpoint.modules.push((name.clone(), key));
                if i == parts.len() {
                    return Ok(Some(endpoint));
                }
            }
            (Some(Part::Name(d)), _) if d == "data" => return Ok(None),
            (Some(Part::Name(ty)), Some(Part::Name(name))) => {
                let key = key_at(i + 2);
                i += 2 + usize::from(key.is_some());
                endpoint.resource = Some((ty.clone(), name.clone(), key));
                return Ok((i == parts.len()).then_some(endpoint));
            }
            _ => return Ok(None),
        }
    }
}

#[cfg(test)]
#[path = "moved_tests.rs"]
mod tests;
