//! `count` and `for_each` expansion into instance keys, with Terraform's errors, bounded per
//! block and, through [`Tally`], across the whole project: nested module `for_each` multiplies,
//! so the instances of every block at every depth are counted against one limit.

use std::fmt;

use super::config::Expr;
use super::diag::{Diagnostic, Span};
use super::eval::Scope;
use super::value::{Type, Value, quote};

/// Most instances one `count`/`for_each` may produce.
pub const MAX_INSTANCES: usize = 10_000;

/// The module and resource instances expanded so far in one load, against its limits.
#[derive(Debug)]
pub(crate) struct Tally {
    modules: usize,
    resources: usize,
    max_modules: usize,
    max_resources: usize,
}

/// The summary of the diagnostic for too many module instances (reported once per load).
pub const TOO_MANY_MODULES: &str = "Too many module calls";
/// The summary of the diagnostic for too many resource instances (reported once per load).
pub const TOO_MANY_RESOURCES: &str = "Too many resource instances";

impl Tally {
    pub(crate) fn new(max_modules: usize, max_resources: usize) -> Self {
        Tally {
            modules: 0,
            resources: 0,
            max_modules,
            max_resources,
        }
    }

    /// Counts `n` more instances of the module call at `span`, refusing to pass the limit.
    pub(crate) fn modules(&mut self, n: usize, span: &Span) -> Result<(), Diagnostic> {
        self.modules = self.modules.saturating_add(n);
        if self.modules <= self.max_modules {
            return Ok(());
        }
        Err(Diagnostic::error(
            TOO_MANY_MODULES,
            format!(
                "This module call brings the configuration to more than {} module instances, the most atoll evaluates in one project (server setting limits.module_instances). Every instance of every module call counts, at every depth: a module called three times that calls another module three times makes twelve. Reduce the nesting, count or for_each of the module calls.",
                self.max_modules
            ),
            Some(span.clone()),
        ))
    }

    /// Counts `n` more instances of the resource at `span`, refusing to pass the limit.
    pub(crate) fn resources(&mut self, n: usize, span: &Span) -> Result<(), Diagnostic> {
        self.resources = self.resources.saturating_add(n);
        if self.resources <= self.max_resources {
            return Ok(());
        }
        Err(Diagnostic::error(
            TOO_MANY_RESOURCES,
            format!(
                "This resource brings the configuration to more than {} resource instances, the most atoll evaluates in one project (server setting limits.resource_instances). Instances in module instances count too. Reduce the count or for_each of the resources or of the modules that contain them.",
                self.max_resources
            ),
            Some(span.clone()),
        ))
    }
}

/// An instance key: none (no repetition), a `count` index or a `for_each` key.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(untagged)]
pub enum InstanceKey {
    None,
    Int(usize),
    Str(String),
}

impl fmt::Display for InstanceKey {
    /// `""`, `[0]` or `["dev-nextcloud"]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstanceKey::None => Ok(()),
            InstanceKey::Int(i) => write!(f, "[{i}]"),
            InstanceKey::Str(s) => write!(f, "[{}]", quote(s)),
        }
    }
}

/// One instance to evaluate: its key and the `each`/`count` objects it sees.
#[derive(Clone, Debug)]
pub struct Instance {
    pub key: InstanceKey,
    pub each: Option<(Value, Value)>,
    pub count: Option<usize>,
}

/// Which kind of object is repeated (for messages).
#[derive(Clone, Copy, Debug)]
pub enum Repeated {
    Resource,
    Module,
}

/// Expands `count` or `for_each` (at most one is set; the decoder reports both).
pub(crate) fn instances(
    scope: &Scope<'_>,
    count: Option<&Expr>,
    for_each: Option<&Expr>,
    what: Repeated,
) -> Result<Vec<Instance>, Diagnostic> {
    if let Some(fe) = for_each {
        return expand_for_each(scope, fe, what);
    }
    if let Some(c) = count {
        return expand_count(scope, c);
    }
    Ok(vec![Instance {
        key: InstanceKey::None,
        each: None,
        count: None,
    }])
}

fn fe_err(scope: &Scope<'_>, e: &Expr, detail: impl Into<String>) -> Diagnostic {
    let detail = detail.into();
    let (summary, detail) = match detail.strip_prefix(SET_ELEMENTS) {
        Some(rest) => ("Invalid for_each set argument", rest.to_owned()),
        None => ("Invalid for_each argument", detail),
    };
    scope.error(summary, detail, hcl_edit::Span::span(&e.expr))
}

fn expand_for_each(
    scope: &Scope<'_>,
    e: &Expr,
    what: Repeated,
) -> Result<Vec<Instance>, Diagnostic> {
    let noun = match what {
        Repeated::Resource => "resource",
        Repeated::Module => "module",
    };
    // A plain reference (`var.lxc_configs`) is read in place: only each entry is copied.
    let out = match crate::eval::borrow_reference(scope, &e.expr)? {
        Some((v, false)) => for_each_instances(v, noun),
        _ => for_each_instances(&scope.eval(&e.expr)?, noun),
    }
    .map_err(|detail| fe_err(scope, e, detail))?;
    if out.len() > MAX_INSTANCES {
        return Err(fe_err(
            scope,
            e,
            format!(
                "The \"for_each\" value has {} elements; atoll expands at most {MAX_INSTANCES} instances per block.",
                out.len()
            ),
        ));
    }
    Ok(out)
}

const UNSUITABLE: &str = "The given \"for_each\" argument value is unsuitable:";
/// Marks a detail about the type of a set's elements, which Terraform reports under its own
/// summary ("Invalid for_each set argument").
const SET_ELEMENTS: &str = "\u{0}set:";

/// The instances of a `for_each` value, or the detail of Terraform's error.
fn for_each_instances(v: &Value, noun: &str) -> Result<Vec<Instance>, String> {
    let sensitive_keys = match v {
        Value::Sensitive(_) => true,
        Value::Set(_, items) => items.iter().any(Value::contains_sensitive),
        _ => false,
    };
    if sensitive_keys {
        return Err("Sensitive values, or values derived from sensitive values, cannot be used as for_each arguments. If used, the sensitive value could be exposed as a resource instance key.".into());
    }
    let unknown = || {
        format!(
            "The \"for_each\" map includes keys derived from resource attributes that cannot be determined until apply, and so atoll cannot determine the full set of keys that will identify the instances of this {noun}.\n\nWhen working with unknown values in for_each, it's better to define the map keys statically in your configuration and place apply-time results only in the map values."
        )
    };
    let instance = |k: String, each: (Value, Value)| Instance {
        key: InstanceKey::Str(k),
        each: Some(each),
        count: None,
    };
    match v {
        Value::Null(_) => Err(format!(
            "{UNSUITABLE} the given \"for_each\" argument value is null. A map, or set of strings is allowed."
        )),
        Value::Unknown(_) => Err(unknown()),
        Value::Map(_, m) | Value::Object(m) => Ok(m
            .iter()
            .map(|(k, val)| instance(k.clone(), (Value::String(k.clone()), val.clone())))
            .collect()),
        Value::Set(t, items) => {
            let strings = matches!(t, Type::String | Type::Dynamic)
                && items
                    .iter()
                    .all(|i| matches!(i, Value::String(_) | Value::Null(_) | Value::Unknown(_)));
            if !strings {
                return Err(format!(
                    "{SET_ELEMENTS}{UNSUITABLE} \"for_each\" supports maps and sets of strings, but you have provided a set containing type {}.",
                    t.friendly()
                ));
            }
            items
                .iter()
                .map(|item| match item {
                    Value::String(s) => Ok(instance(
                        s.clone(),
                        (Value::String(s.clone()), Value::String(s.clone())),
                    )),
                    Value::Unknown(_) => Err(unknown()),
                    _ => Err(format!(
                        "{UNSUITABLE} \"for_each\" sets must not contain null values."
                    )),
                })
                .collect()
        }
        other => Err(format!(
            "{UNSUITABLE} the \"for_each\" argument must be a map, or set of strings, and you have provided a value of type {}.",
            other.ty().friendly()
        )),
    }
}

fn expand_count(scope: &Scope<'_>, e: &Expr) -> Result<Vec<Instance>, Diagnostic> {
    let err = |d: &str| scope.error("Invalid count argument", d, hcl_edit::Span::span(&e.expr));
    let v = scope.eval(&e.expr)?;
    if v.contains_sensitive() {
        return Err(err(
            "Sensitive values, or values derived from sensitive values, cannot be used as count arguments. If used, the sensitive value could be exposed as a resource instance key.",
        ));
    }
    let n = match v {
        Value::Unknown(_) => {
            return Err(err(
                "The \"count\" value depends on resource attributes that cannot be determined until apply, so atoll cannot predict how many instances will be created.",
            ));
        }
        Value::Null(_) => {
            return Err(err(
                "The given \"count\" argument value is unsuitable: the given \"count\" argument value is null. An integer is required.",
            ));
        }
        Value::Number(n) => n,
        // Terraform converts the value to a number first, in HCL's words when it cannot.
        other => match crate::types::convert(other, &crate::types::Constraint::Number) {
            Ok(Value::Number(n)) => n,
            Ok(_) => {
                return Err(err(
                    "The given \"count\" argument value is unsuitable: number required.",
                ));
            }
            Err(why) => {
                return Err(scope.error(
                    "Incorrect value type",
                    format!("Invalid expression value: {}.", why.message()),
                    hcl_edit::Span::span(&e.expr),
                ));
            }
        },
    };
    if n.fract() != 0.0 {
        return Err(err(
            "The given \"count\" argument value is unsuitable: a whole number is required.",
        ));
    }
    if n < 0.0 {
        return Err(err(
            "The given \"count\" argument value is unsuitable: must be greater than or equal to zero.",
        ));
    }
    if n > MAX_INSTANCES as f64 {
        return Err(err(&format!(
            "The \"count\" value is {}; atoll expands at most {MAX_INSTANCES} instances per block.",
            super::value::format_number(n)
        )));
    }
    Ok((0..n as usize)
        .map(|i| Instance {
            key: InstanceKey::Int(i),
            each: None,
            count: Some(i),
        })
        .collect())
}
