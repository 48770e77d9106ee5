//! `import` blocks: each one's target instance address and id, evaluated in the root module
//! once its resources are walked (an id may read variables and locals; `for_each` repeats the
//! block). Whether the object exists is for the caller to find out on the cluster.

use std::collections::{BTreeMap, BTreeSet};

use hcl_edit::expr::{Expression, TraversalOperator};

use super::super::config::Import;
use super::super::diag::Diagnostic;
use super::super::eval::{Ctx, Scope};
use super::super::expand::{Repeated, instances};
use super::super::load::ModuleTree;
use super::super::module::{Env, InstanceNames};
use super::super::{ImportTarget, ResourceInstance, schema};
use super::MAX_DIAGNOSTICS;
use crate::value::{Value, format_number, quote};

/// The import targets of the root module; diagnostics for blocks that name nothing
/// configured, repeat a target, or sit in a child module. At most one target per configured
/// instance can be valid, so past that many and [`MAX_DIAGNOSTICS`] more, the rest of a
/// `for_each` a pull request wrote is not looked at.
pub(crate) fn imports(
    ctx: &Ctx,
    env: &Env<'_>,
    resources: &[ResourceInstance],
    diags: &mut Vec<Diagnostic>,
) -> Vec<ImportTarget> {
    in_children(env.tree, "", diags);
    let mut out: Vec<ImportTarget> = Vec::new();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let configured: BTreeSet<&str> = resources.iter().map(|r| r.address.as_str()).collect();
    let most = resources.len() + MAX_DIAGNOSTICS;
    let mut looked = 0usize;
    for block in &env.tree.config.imports {
        for target in evaluate(ctx, env, block, diags) {
            looked += 1;
            if looked > most {
                return out;
            }
            let (resource_type, _) = split(&target.address);
            if !schema::SUPPORTED.contains(&resource_type) {
                // the type itself was diagnosed once for the project
                continue;
            }
            if let Some(first) = seen.get(&target.address) {
                diags.push(Diagnostic::error(
                    format!("Duplicate import configuration for \"{}\"", target.address),
                    format!(
                        "An import block for the resource \"{}\" was already declared at {first}. \
                         A resource can have only one import block.",
                        target.address
                    ),
                    Some(target.subject.clone()),
                ));
                continue;
            }
            if !configured.contains(target.address.as_str()) {
                diags.push(Diagnostic::error(
                    "Configuration for import target does not exist",
                    format!(
                        "The configuration for the given import target {} does not exist. All \
                         target instances must have an associated configuration to be imported: \
                         add the resource block, or correct \"to\".",
                        target.address
                    ),
                    Some(target.subject.clone()),
                ));
                continue;
            }
            seen.insert(target.address.clone(), target.declared_at.clone());
            out.push(target);
        }
    }
    out
}

/// `module.a["k"].TYPE.NAME[0]` -> (`TYPE`, `NAME[0]`): the resource type of an address.
fn split(address: &str) -> (&str, &str) {
    let mut rest = address;
    while let Some(after) = rest.strip_prefix("module.") {
        // skip the module name and its key, if any
        let name_end = after.find(['.', '[']).unwrap_or(after.len());
        let mut tail = &after[name_end..];
        if tail.starts_with('[') {
            tail = tail.find("].").map_or("", |i| &tail[i + 1..]);
        }
        rest = tail.strip_prefix('.').unwrap_or(tail);
    }
    rest.split_once('.').unwrap_or((rest, ""))
}

/// Import blocks outside the root module are an error, as in Terraform.
fn in_children(tree: &ModuleTree, prefix: &str, diags: &mut Vec<Diagnostic>) {
    for (name, child) in &tree.children {
        let path = format!("{prefix}module.{name}");
        if let Some(block) = child.config.imports.first() {
            diags.push(Diagnostic::error(
                "Invalid import configuration",
                format!(
                    "An import block was detected in \"{path}\". Import blocks are only allowed \
                     in the root module."
                ),
                Some(block.span.clone()),
            ));
        }
        in_children(child, &format!("{path}."), diags);
    }
}

/// One block's targets: one, or one per `for_each` element.
fn evaluate(
    ctx: &Ctx,
    env: &Env<'_>,
    block: &Import,
    diags: &mut Vec<Diagnostic>,
) -> Vec<ImportTarget> {
    let names = InstanceNames {
        env,
        each: None,
        count: None,
    };
    let scope = Scope::new(ctx, &names, block.to.file);
    let repeated = match instances(&scope, None, block.for_each.as_ref(), Repeated::Resource) {
        Ok(list) => list,
        Err(d) => {
            diags.push(d);
            return Vec::new();
        }
    };
    let declared_at = ctx
        .sources
        .borrow()
        .locate(&block.span)
        .map(|(f, l, _)| format!("{f}:{l}"))
        .unwrap_or_default();
    let mut out = Vec::new();
    for instance in repeated {
        let names = InstanceNames {
            env,
            each: instance.each,
            count: None,
        };
        let scope = Scope::new(ctx, &names, block.to.file);
        let subject = block.to.span().unwrap_or_else(|| block.span.clone());
        let address = match address(&scope, &block.to.expr) {
            Ok(address) => address,
            Err(detail) => {
                diags.push(Diagnostic::error(
                    "Invalid import address",
                    detail,
                    Some(subject),
                ));
                continue;
            }
        };
        let id_subject = block.id.span().unwrap_or_else(|| block.span.clone());
        let id = match scope.eval(&block.id.expr) {
            Ok(value) => match import_id(&value) {
                Ok(id) => id,
                Err(detail) => {
                    diags.push(Diagnostic::error(
                        "Invalid import id argument",
                        detail,
                        Some(id_subject),
                    ));
                    continue;
                }
            },
            Err(d) => {
                diags.push(d);
                continue;
            }
        };
        out.push(ImportTarget {
            address,
            id,
            declared_at: declared_at.clone(),
            subject,
        });
    }
    out
}

/// The id as a known, non-empty string (a number is written as Terraform writes it).
fn import_id(value: &Value) -> Result<String, String> {
    let (value, _) = value.unmark();
    if value.contains_unknown() {
        return Err(
            "The import block \"id\" argument depends on values that cannot be \
                    determined until apply, so atoll cannot plan to import this resource."
                .to_owned(),
        );
    }
    let id = match value {
        Value::Null(_) => return Err("The import ID cannot be null.".to_owned()),
        Value::String(s) => s.clone(),
        Value::Number(n) => format_number(*n),
        other => {
            return Err(format!(
                "The import ID must be a string; this one is {}.",
                other.ty().friendly()
            ));
        }
    };
    if id.is_empty() {
        return Err(
            "The import ID value evaluates to an empty string, please provide a non-empty value."
                .to_owned(),
        );
    }
    Ok(id)
}

/// `to` as an instance address: a static reference to a managed resource, with instance keys
/// that may read `each`.
fn address(scope: &Scope<'_>, to: &Expression) -> Result<String, String> {
    let invalid = || {
        "The \"to\" argument must be a reference to a managed resource instance, e.g. \
         proxmox_virtual_environment_pool.ops or module.lxc[\"web\"].proxmox_virtual_environment_container.ct."
            .to_owned()
    };
    let (root, operators) = match to {
        Expression::Variable(v) => (v.as_str(), &[][..]),
        Expression::Traversal(t) => match &t.expr {
            Expression::Variable(v) => (v.as_str(), t.operators.as_slice()),
            _ => return Err(invalid()),
        },
        _ => return Err(invalid()),
    };
    // segments: names, and instance keys after them
    enum Part {
        Name(String),
        Key(String),
    }
    let mut parts = vec![Part::Name(root.to_owned())];
    for op in operators {
        match op.value() {
            TraversalOperator::GetAttr(a) => parts.push(Part::Name(a.as_str().to_owned())),
            TraversalOperator::LegacyIndex(n) => parts.push(Part::Key(format!("[{}]", n.value()))),
            TraversalOperator::Index(e) => {
                let key = scope
                    .eval(e)
                    .map_err(|d| format!("{}: {}", d.summary, d.detail))?;
                let key = match key.unmark().0 {
                    Value::String(s) => format!("[{}]", quote(s)),
                    Value::Number(n) if n.fract() == 0.0 && *n >= 0.0 => format!("[{n}]"),
                    _ => {
                        return Err(
                            "An instance key must be a known string or a whole number.".to_owned()
                        );
                    }
                };
                parts.push(Part::Key(key));
            }
            _ => return Err(invalid()),
        }
    }
    let mut out = String::new();
    let mut i = 0;
    if matches!(parts.first(), Some(Part::Name(n)) if n == "resource") {
        i = 1;
    }
    // module.NAME[KEY]. ... TYPE.NAME[KEY]
    loop {
        match (parts.get(i), parts.get(i + 1)) {
            (Some(Part::Name(m)), Some(Part::Name(name))) if m == "module" => {
                out.push_str("module.");
                out.push_str(name);
                i += 2;
                if let Some(Part::Key(k)) = parts.get(i) {
                    out.push_str(k);
                    i += 1;
                }
                out.push('.');
            }
            (Some(Part::Name(d)), Some(Part::Name(_))) if d == "data" => {
                return Err(
                    "Only managed resources can be imported; a data source is read, \
                            not imported."
                        .to_owned(),
                );
            }
            (Some(Part::Name(ty)), Some(Part::Name(name))) => {
                out.push_str(ty);
                out.push('.');
                out.push_str(name);
                i += 2;
                if let Some(Part::Key(k)) = parts.get(i) {
                    out.push_str(k);
                    i += 1;
                }
                return if i == parts.len() {
                    Ok(out)
                } else {
                    Err(invalid())
                };
            }
            _ => return Err(invalid()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn addresses_split_into_their_resource_type() {
        assert_eq!(
            split("proxmox_virtual_environment_pool.ops"),
            ("proxmox_virtual_environment_pool", "ops")
        );
        assert_eq!(
            split("module.a[\"x.y\"].module.b.proxmox_x.n[0]"),
            ("proxmox_x", "n[0]")
        );
    }
}

#[cfg(test)]
#[path = "import_tests.rs"]
mod load_tests;
