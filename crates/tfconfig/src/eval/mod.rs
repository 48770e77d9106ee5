//! The expression evaluator over the `hcl-edit` AST: scopes, references, operators, `for`,
//! splats, templates and function calls, with unknown and sensitive propagation.
//!
//! It owns no configuration knowledge: root names (`var`, `local`, resources, ...) are resolved
//! by a [`Names`] implementation supplied by the caller. Work and memory are bounded by the
//! [`Budget`] in [`Ctx`]: value nodes and bytes, spent as values are made.

mod budget;
mod expr;
mod ops;
mod template;
mod traverse;

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::ops::Range;

use hcl_edit::expr::{Expression, TraversalOperator};
use hcl_edit::{Decorated, Ident};

use super::diag::{Diagnostic, SourceMap, Span};
use super::funcs::Sandbox;
use super::value::Value;
pub use budget::{Budget, ENTRY_BYTES, NODE_BYTES, Spent};

/// Deepest expression nesting the evaluator follows (function and template recursion included).
const MAX_DEPTH: usize = 200;

/// State shared by every evaluation of one load.
#[derive(Debug)]
pub struct Ctx {
    pub sources: RefCell<SourceMap>,
    pub sandbox: Sandbox,
    budget: Budget,
    depth: Cell<usize>,
}

impl Ctx {
    pub fn new(sources: SourceMap, sandbox: Sandbox, budget: Budget) -> Self {
        Ctx {
            sources: RefCell::new(sources),
            sandbox,
            budget,
            depth: Cell::new(0),
        }
    }

    /// Value nodes left in the budget.
    pub fn remaining(&self) -> u64 {
        self.budget.values_left()
    }

    /// Bytes left in the budget: the most one function call or template may build.
    pub fn room(&self) -> u64 {
        self.budget.room()
    }

    /// Spends `n` value nodes (each [`NODE_BYTES`] bytes) of the budget.
    pub fn charge(&self, n: u64) -> Result<(), String> {
        self.charge_parts(n, n.saturating_mul(NODE_BYTES))
    }

    /// Spends `values` nodes and `bytes` bytes of the budget.
    pub fn charge_parts(&self, values: u64, bytes: u64) -> Result<(), String> {
        self.budget
            .charge(values, bytes)
            .map_err(|spent| self.budget.explain(spent))
    }

    /// The detail of the diagnostic for `spent`.
    pub fn explain(&self, spent: Spent) -> String {
        self.budget.explain(spent)
    }

    /// True once the budget is spent: every later evaluation would fail the same way, so
    /// walkers stop instead of collecting one diagnostic per remaining expression.
    pub fn exhausted(&self) -> bool {
        self.budget.values_left() == 0 || self.budget.room() == 0
    }
}

/// Resolves the root of a reference (`var.x`, `local.y`, `aws_x.y`, `each.key`, ...).
pub trait Names {
    /// Resolves `root` plus as many leading operators as the name needs (for example `var.x`
    /// consumes one `GetAttr`). Returns the value and the number of operators consumed.
    fn resolve<'s>(
        &'s self,
        root: &Decorated<Ident>,
        ops: &[Decorated<TraversalOperator>],
        scope: &Scope<'_>,
    ) -> Result<(Cow<'s, Value>, usize), Diagnostic>;
}

/// Names for constant contexts (tfvars, `--var`, defaults): every reference is refused.
#[derive(Debug)]
pub struct NoNames;

impl Names for NoNames {
    fn resolve<'s>(
        &'s self,
        root: &Decorated<Ident>,
        _ops: &[Decorated<TraversalOperator>],
        scope: &Scope<'_>,
    ) -> Result<(Cow<'s, Value>, usize), Diagnostic> {
        Err(scope.error(
            "Variables not allowed",
            "Variables may not be used here.",
            hcl_edit::Span::span(root),
        ))
    }
}

/// One evaluation scope: the names resolver, the file (for diagnostics), and local bindings
/// from `for` expressions, `dynamic` iterators and `templatefile` variables.
pub struct Scope<'a> {
    pub ctx: &'a Ctx,
    pub names: &'a dyn Names,
    pub file: usize,
    pub functions_allowed: bool,
    parent: Option<&'a Scope<'a>>,
    bindings: Vec<(String, Cow<'a, Value>)>,
}

impl std::fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

impl<'a> Scope<'a> {
    pub fn new(ctx: &'a Ctx, names: &'a dyn Names, file: usize) -> Self {
        Scope {
            ctx,
            names,
            file,
            functions_allowed: true,
            parent: None,
            bindings: Vec::new(),
        }
    }

    /// A constant scope: no references and no function calls (tfvars, `--var`).
    pub fn constant(ctx: &'a Ctx, file: usize) -> Self {
        Scope {
            ctx,
            names: &NoNames,
            file,
            functions_allowed: false,
            parent: None,
            bindings: Vec::new(),
        }
    }

    /// A child scope with extra bindings.
    pub fn child(&'a self, bindings: Vec<(String, Value)>) -> Scope<'a> {
        let bindings = bindings
            .into_iter()
            .map(|(n, v)| (n, Cow::Owned(v)))
            .collect();
        self.child_cow(bindings)
    }

    /// A child scope whose bindings may borrow values that outlive it (no copies).
    pub(crate) fn child_cow(&'a self, bindings: Vec<(String, Cow<'a, Value>)>) -> Scope<'a> {
        Scope {
            ctx: self.ctx,
            names: self.names,
            file: self.file,
            functions_allowed: self.functions_allowed,
            parent: Some(self),
            bindings,
        }
    }

    fn binding(&self, name: &str) -> Option<&Value> {
        self.bindings
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_ref())
            .or_else(|| self.parent.and_then(|p| p.binding(name)))
    }

    /// A diagnostic about a range in this scope's file.
    pub fn error(
        &self,
        summary: &str,
        detail: impl Into<String>,
        range: Option<Range<usize>>,
    ) -> Diagnostic {
        Diagnostic::error(
            summary,
            detail,
            range.map(|range| Span {
                file: self.file,
                range,
            }),
        )
    }

    /// Evaluates an expression.
    pub fn eval(&self, e: &Expression) -> Result<Value, Diagnostic> {
        let depth = self.ctx.depth.get();
        if depth >= MAX_DEPTH {
            return Err(self.error(
                "Expression too deeply nested",
                format!("atoll evaluates expressions nested at most {MAX_DEPTH} levels deep (including function and template calls)."),
                hcl_edit::Span::span(e),
            ));
        }
        self.ctx.depth.set(depth + 1);
        let out = expr::eval(self, e);
        self.ctx.depth.set(depth);
        out
    }

    /// Charges the budget for copying `v`, refusing values nested too deeply.
    pub(crate) fn charge_value(
        &self,
        v: &Value,
        range: Option<Range<usize>>,
    ) -> Result<(), Diagnostic> {
        let m = measure(v, self.ctx.remaining(), self.ctx.room());
        if m.deep {
            return Err(self.error(
                "Value nested too deeply",
                format!("This value is nested more than {MAX_VALUE_DEPTH} levels deep, which atoll does not evaluate."),
                range,
            ));
        }
        self.charge_parts(m.values, m.bytes, range)
    }

    /// Spends `n` value nodes.
    pub(crate) fn charge(&self, n: u64, range: Option<Range<usize>>) -> Result<(), Diagnostic> {
        self.charge_parts(n, n.saturating_mul(NODE_BYTES), range)
    }

    /// Spends `bytes` bytes (text being built).
    pub(crate) fn charge_bytes(
        &self,
        bytes: u64,
        range: Option<Range<usize>>,
    ) -> Result<(), Diagnostic> {
        self.charge_parts(0, bytes, range)
    }

    fn charge_parts(
        &self,
        values: u64,
        bytes: u64,
        range: Option<Range<usize>>,
    ) -> Result<(), Diagnostic> {
        self.ctx
            .charge_parts(values, bytes)
            .map_err(|d| self.error(LIMIT_REACHED, d, range))
    }

    /// The "Evaluation limit reached" diagnostic for a spent budget.
    pub(crate) fn spent(&self, spent: Spent, range: Option<Range<usize>>) -> Diagnostic {
        self.error(LIMIT_REACHED, self.ctx.explain(spent), range)
    }
}

/// The summary of every diagnostic about a spent budget (reported once per load).
pub const LIMIT_REACHED: &str = "Evaluation limit reached";

/// Deepest value nesting allowed (values only grow deeper through references, where this is
/// checked), so recursive clone, drop and rendering stay well inside any thread's stack.
pub const MAX_VALUE_DEPTH: usize = 256;

/// What a value costs: its nodes, its estimated bytes, and whether it is nested too deeply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Measure {
    pub values: u64,
    pub bytes: u64,
    pub deep: bool,
}

/// Measures a value, stopping early once `max_values` or `max_bytes` is passed or the nesting
/// passes [`MAX_VALUE_DEPTH`].
pub fn measure(v: &Value, max_values: u64, max_bytes: u64) -> Measure {
    fn go(v: &Value, m: &mut Measure, caps: (u64, u64), depth: usize) {
        m.values += 1;
        m.bytes += NODE_BYTES;
        if let Value::String(s) = v {
            m.bytes += s.len() as u64;
        }
        if depth > MAX_VALUE_DEPTH {
            m.deep = true;
        }
        let over = |m: &Measure| m.values > caps.0 || m.bytes > caps.1 || m.deep;
        if over(m) {
            return;
        }
        match v {
            Value::Sensitive(inner) => go(inner, m, caps, depth),
            Value::List(_, items) | Value::Set(_, items) | Value::Tuple(items) => {
                for i in items {
                    go(i, m, caps, depth + 1);
                    if over(m) {
                        return;
                    }
                }
            }
            Value::Map(_, entries) | Value::Object(entries) => {
                for (k, i) in entries {
                    m.bytes += k.len() as u64 + ENTRY_BYTES;
                    go(i, m, caps, depth + 1);
                    if over(m) {
                        return;
                    }
                }
            }
            _ => {}
        }
    }
    let mut m = Measure::default();
    go(v, &mut m, (max_values, max_bytes), 0);
    m
}

/// Collects the root references (`var.x`, `local.y`, `type.name`, `module.m`, `data.t.n`) an
/// expression makes, as (root, first attribute, second attribute) names.
pub fn references(e: &Expression, out: &mut Vec<(String, Option<String>, Option<String>)>) {
    expr::references(e, out);
}

pub(crate) use expr::iteration_pairs;
pub use ops::equals as ops_equals;
pub(crate) use traverse::borrow_reference;

/// Evaluates a parsed template (for `templatefile`).
pub fn eval_template(
    scope: &Scope<'_>,
    t: &hcl_edit::template::Template,
) -> Result<Value, Diagnostic> {
    template::eval_template(scope, t, None, true)
}
