//! The configuration model of one module directory, decoded from parsed files: variables,
//! locals, resources, data sources, module calls, outputs, with duplicate and structure
//! diagnostics as Terraform reports them. Nothing is evaluated here except literal flags.

mod blocks;
mod decode;
mod statements;

use std::collections::BTreeMap;

use hcl_edit::Span as _;
use hcl_edit::expr::Expression;
use hcl_edit::structure::Body;

pub(crate) use decode::decode_file;

use super::diag::Span;

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
    /// The `version` constraint, a literal string (registry sources only).
    pub(crate) version: Option<String>,
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

/// An `import` block: the resource instance `to` names and the id to read it by. Terraform
/// allows them in the root module alone; one in a child is reported when the tree is walked.
#[derive(Debug)]
pub(crate) struct Import {
    pub(crate) to: Expr,
    pub(crate) id: Expr,
    pub(crate) for_each: Option<Expr>,
    pub(crate) span: Span,
}

/// A `moved` block: `from` and `to` as written, static references checked when walked.
#[derive(Debug)]
pub(crate) struct Moved {
    pub(crate) from: Expr,
    pub(crate) to: Expr,
    pub(crate) span: Span,
}

/// A `removed` block: what it names and whether the object is destroyed
/// (`lifecycle { destroy }`; Terraform destroys unless told not to).
#[derive(Debug)]
pub(crate) struct Removed {
    pub(crate) from: Expr,
    pub(crate) destroy: bool,
    pub(crate) span: Span,
}

/// A `check` block: its name and its `assert` rules, evaluated after the module's resources.
#[derive(Debug)]
pub(crate) struct Check {
    pub(crate) asserts: Vec<Validation>,
}

/// One module directory, decoded.
#[derive(Debug, Default)]
pub(crate) struct Module {
    pub(crate) variables: BTreeMap<String, Variable>,
    pub(crate) locals: BTreeMap<String, (Expr, Span)>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) calls: BTreeMap<String, ModuleCall>,
    /// Calls whose source was refused (their diagnostic says why): references to them are
    /// unknown, not a second error about an undeclared module.
    pub(crate) refused_calls: std::collections::BTreeSet<String>,
    pub(crate) outputs: BTreeMap<String, Output>,
    pub(crate) imports: Vec<Import>,
    pub(crate) moves: Vec<Moved>,
    pub(crate) removed: Vec<Removed>,
    pub(crate) checks: Vec<Check>,
    pub(crate) backend_seen: bool,
    /// `terraform { cloud { workspaces { name = "..." } } }`, when the name is a literal string
    /// (Atlantis's `DetermineWorkspaceFromHCL`).
    pub(crate) cloud_workspace: Option<String>,
    /// The first `backend` or `cloud` block's literal settings.
    pub(crate) backend: Option<crate::backend::Backend>,
}
