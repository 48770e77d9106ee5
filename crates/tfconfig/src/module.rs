//! Evaluation of one module instance: the dependency order of its locals, resources, module
//! calls and outputs (cycles reported), the names they see (`var`, `local`, `module`, resources,
//! `each`, `count`, `path`, `terraform`), and dependency edges between resource instances.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use hcl_edit::expr::TraversalOperator;
use hcl_edit::structure::Body;
use hcl_edit::{Decorated, Ident, Span as _};

use super::config::{Expr, Module};
use super::diag::{Diagnostic, did_you_mean};
use super::eval::{Names, Scope, references};
use super::expand::InstanceKey;
use super::graph::{Node, order};
use super::load::ModuleTree;
use super::value::{Type, Value};

/// One module instance being evaluated.
#[derive(Debug)]
pub(crate) struct Env<'t> {
    pub(crate) tree: &'t ModuleTree,
    /// Address prefix of this instance: `""` or `module.x["k"].`.
    pub(crate) prefix: String,
    pub(crate) workspace: String,
    pub(crate) vars: BTreeMap<String, Value>,
    pub(crate) var_deps: BTreeMap<String, BTreeSet<String>>,
    pub(crate) locals: BTreeMap<String, Value>,
    pub(crate) local_deps: BTreeMap<String, BTreeSet<String>>,
    /// `type.name` or `data.type.name` to the reference value.
    pub(crate) resources: BTreeMap<String, Value>,
    pub(crate) modules: BTreeMap<String, Value>,
    pub(crate) module_deps: BTreeMap<String, BTreeSet<String>>,
    pub(crate) recorded: RefCell<BTreeSet<String>>,
}

impl<'t> Env<'t> {
    pub(crate) fn new(tree: &'t ModuleTree, prefix: String, workspace: String) -> Self {
        Env {
            tree,
            prefix,
            workspace,
            vars: BTreeMap::new(),
            var_deps: BTreeMap::new(),
            locals: BTreeMap::new(),
            local_deps: BTreeMap::new(),
            resources: BTreeMap::new(),
            modules: BTreeMap::new(),
            module_deps: BTreeMap::new(),
            recorded: RefCell::new(BTreeSet::new()),
        }
    }

    pub(crate) fn config(&self) -> &Module {
        &self.tree.config
    }

    /// Clears and returns the dependencies recorded since the last call.
    pub(crate) fn take_recorded(&self) -> BTreeSet<String> {
        std::mem::take(&mut *self.recorded.borrow_mut())
    }

    fn module_label(&self) -> String {
        if self.prefix.is_empty() {
            "the root module".to_owned()
        } else {
            self.prefix.trim_end_matches('.').to_owned()
        }
    }
}

/// Names seen by one instance: the module's, plus `each`/`count` when repeated.
#[derive(Debug)]
pub(crate) struct InstanceNames<'e, 't> {
    pub(crate) env: &'e Env<'t>,
    pub(crate) each: Option<(Value, Value)>,
    pub(crate) count: Option<usize>,
}

fn attr_at(ops: &[Decorated<TraversalOperator>], i: usize) -> Option<&str> {
    match ops.get(i).map(|o| o.value()) {
        Some(TraversalOperator::GetAttr(a)) => Some(a.as_str()),
        _ => None,
    }
}

impl Names for InstanceNames<'_, '_> {
    fn resolve<'s>(
        &'s self,
        root: &Decorated<Ident>,
        ops: &[Decorated<TraversalOperator>],
        s: &Scope<'_>,
    ) -> Result<(Cow<'s, Value>, usize), Diagnostic> {
        let env = self.env;
        let name = root.as_str();
        let first = attr_at(ops, 0);
        let whole = || {
            s.error("Invalid reference", format!("The \"{name}\" object cannot be accessed directly. Instead, access one of its attributes."), root.span())
        };
        match name {
            "var" => {
                let a = first.ok_or_else(whole)?;
                let v = env.vars.get(a).ok_or_else(|| {
                    s.error("Reference to undeclared input variable", format!("An input variable with the name \"{a}\" has not been declared. This variable can be declared with a variable \"{a}\" {{}} block."), ops[0].span().map(|r| root.span().map_or(r.clone(), |rr| rr.start..r.end)))
                })?;
                if let Some(d) = env.var_deps.get(a) {
                    env.recorded.borrow_mut().extend(d.iter().cloned());
                }
                Ok((Cow::Borrowed(v), 1))
            }
            "local" => {
                let a = first.ok_or_else(whole)?;
                if let Some(d) = env.local_deps.get(a) {
                    env.recorded.borrow_mut().extend(d.iter().cloned());
                }
                match env.locals.get(a) {
                    Some(v) => Ok((Cow::Borrowed(v), 1)),
                    None if env.config().locals.contains_key(a) => Ok((Cow::Owned(Value::unknown()), ops.len())),
                    None => Err(s.error("Reference to undeclared local value", format!("A local value with the name \"{a}\" has not been declared.{}", did_you_mean(a, env.config().locals.keys().map(String::as_str))), ref_range(root, ops, 1))),
                }
            }
            "module" => {
                let a = first.ok_or_else(whole)?;
                if let Some(d) = env.module_deps.get(a) {
                    env.recorded.borrow_mut().extend(d.iter().cloned());
                }
                match env.modules.get(a) {
                    Some(v) => Ok((Cow::Borrowed(v), 1)),
                    // A call whose source was refused has its own error; its outputs are unknown.
                    None if env.config().calls.contains_key(a) || env.config().refused_calls.contains(a) => Ok((Cow::Owned(Value::unknown()), ops.len())),
                    None => Err(s.error("Reference to undeclared module", format!("No module call named \"{a}\" is declared in {}.{}", env.module_label(), did_you_mean(a, env.config().calls.keys().map(String::as_str))), ref_range(root, ops, 1))),
                }
            }
            "each" => {
                let Some((k, v)) = &self.each else {
                    return Err(s.error("Reference to \"each\" in context without for_each", "The \"each\" object can be used only in \"module\" or \"resource\" blocks, and only if the \"for_each\" argument is set.", root.span()));
                };
                match first {
                    Some("key") => Ok((Cow::Borrowed(k), 1)),
                    Some("value") => Ok((Cow::Borrowed(v), 1)),
                    _ => Err(s.error("Invalid \"each\" attribute", "The \"each\" object has only the attributes \"key\" and \"value\".", ref_range(root, ops, 1))),
                }
            }
            "count" => match (self.count, first) {
                (Some(i), Some("index")) => Ok((Cow::Owned(Value::Number(i as f64)), 1)),
                (Some(_), _) => Err(s.error("Invalid \"count\" attribute", "The \"count\" object has only the attribute \"index\".", ref_range(root, ops, 1))),
                (None, _) => Err(s.error("Reference to \"count\" in non-counted context", "The \"count\" object can only be used in \"module\", \"resource\", and \"data\" blocks, and only when the \"count\" argument is set.", root.span())),
            },
            "path" => match first {
                Some("module") => Ok((Cow::Owned(Value::string(env.tree.rel.clone())), 1)),
                Some("root") | Some("cwd") => Ok((Cow::Owned(Value::string(".")), 1)),
                _ => Err(s.error("Invalid \"path\" attribute", "The \"path\" object has only the attributes \"module\", \"root\" and \"cwd\".", ref_range(root, ops, 1))),
            },
            "terraform" => match first {
                Some("workspace") => Ok((Cow::Owned(Value::string(env.workspace.clone())), 1)),
                _ => Err(s.error("Invalid \"terraform\" attribute", "The \"terraform\" object has only the attribute \"workspace\".", ref_range(root, ops, 1))),
            },
            "self" => Err(s.error("Invalid \"self\" reference", "The \"self\" object is not available in this context. This object can be used only in resource provisioner and connection blocks.", root.span())),
            "data" => {
                let (Some(t), Some(n)) = (first, attr_at(ops, 1)) else {
                    return Err(s.error("Invalid data resource reference", "A data resource reference must give a data source type and a name, like data.type.name.", root.span()));
                };
                self.resource(s, &format!("data.{t}"), n, ops, 2, root)
            }
            _ => {
                let Some(n) = first else {
                    return Err(s.error("Invalid reference", "A reference to a resource type must be followed by at least one attribute access, specifying the resource name.", root.span()));
                };
                self.resource(s, name, n, ops, 1, root)
            }
        }
    }
}

fn ref_range(
    root: &Decorated<Ident>,
    ops: &[Decorated<TraversalOperator>],
    n: usize,
) -> Option<std::ops::Range<usize>> {
    let start = root.span()?.start;
    let end = ops
        .get(n.saturating_sub(1))
        .and_then(|o| o.span())
        .map_or(root.span()?.end, |r| r.end);
    Some(start..end)
}

impl InstanceNames<'_, '_> {
    fn resource<'s>(
        &'s self,
        s: &Scope<'_>,
        rtype: &str,
        name: &str,
        ops: &[Decorated<TraversalOperator>],
        used: usize,
        root: &Decorated<Ident>,
    ) -> Result<(Cow<'s, Value>, usize), Diagnostic> {
        let env = self.env;
        let key = format!("{rtype}.{name}");
        let declared = env.config().resources.iter().any(|r| {
            let t = if r.data {
                format!("data.{}", r.rtype)
            } else {
                r.rtype.clone()
            };
            t == rtype && r.name == name
        });
        if !declared {
            let (kind, t) = match rtype.strip_prefix("data.") {
                Some(t) => ("data", t),
                None => ("managed", rtype),
            };
            return Err(s.error(
                "Reference to undeclared resource",
                format!(
                    "A {kind} resource \"{t}\" \"{name}\" has not been declared in {}.",
                    env.module_label()
                ),
                ref_range(root, ops, used),
            ));
        }
        let addr = format!("{}{key}", env.prefix);
        let instance = match ops.get(used).map(|o| o.value()) {
            Some(TraversalOperator::Index(ie)) => match s.eval(ie).map(|v| v.into_unmarked().0) {
                Ok(Value::String(k)) => Some(format!("{addr}{}", InstanceKey::Str(k))),
                Ok(Value::Number(n)) if n >= 0.0 && n.fract() == 0.0 => {
                    Some(format!("{addr}{}", InstanceKey::Int(n as usize)))
                }
                _ => None,
            },
            _ => None,
        };
        env.recorded.borrow_mut().insert(instance.unwrap_or(addr));
        match env.resources.get(&key) {
            Some(v) => Ok((Cow::Borrowed(v), used)),
            None => Ok((Cow::Owned(Value::Unknown(Type::Dynamic)), ops.len())),
        }
    }
}

/// Collects the node references of a resource or module body (lifecycle excluded).
pub(crate) fn body_refs(body: &Body, out: &mut Vec<(String, Option<String>, Option<String>)>) {
    for a in body.attributes() {
        references(&a.value, out);
    }
    for b in body.blocks() {
        if b.ident.as_str() != "lifecycle" {
            body_refs(&b.body, out);
        }
    }
}

/// The evaluation order of a module's nodes, or a cycle diagnostic.
pub(crate) fn node_order(m: &Module) -> Result<Vec<Node>, Diagnostic> {
    order(m)
}

/// Evaluates one expression with the module's names and records its dependencies.
pub(crate) fn eval_recorded(
    env: &Env<'_>,
    ctx: &super::eval::Ctx,
    e: &Expr,
    each: Option<(Value, Value)>,
    count: Option<usize>,
) -> (Result<Value, Diagnostic>, BTreeSet<String>) {
    env.take_recorded();
    let names = InstanceNames { env, each, count };
    let scope = Scope::new(ctx, &names, e.file);
    let out = scope.eval(&e.expr);
    (out, env.take_recorded())
}
