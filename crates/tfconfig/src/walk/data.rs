//! `data` blocks: each instance evaluated against its data source's schema. One the caller
//! answered (its address in [`crate::Known`]) takes the answer's attributes; one whose
//! arguments are known is listed as a [`DataRead`] for the caller to answer; one that waits on
//! another data source's answer stays unknown; any other unknown argument is an error, since
//! atoll reads data sources before it plans.

use std::collections::{BTreeMap, BTreeSet};

use hcl_edit::Span as _;

use super::Walker;
use super::values::collect;
use crate::config::Resource;
use crate::data::DataRead;
use crate::diag::{Diagnostic, Span};
use crate::eval::Scope;
use crate::expand::{Instance, InstanceKey, Repeated, instances};
use crate::module::{Env, InstanceNames};
use crate::schema::{self, DataSourceSchema};
use crate::value::{Type, Value};
use crate::{body, dependency_covers};

impl Walker<'_> {
    pub(super) fn data_source(&mut self, env: &mut Env<'_>, r: &Resource) {
        let key = format!("data.{}.{}", r.rtype, r.name);
        if let Some(schema) = schema::local_data_source(&r.rtype) {
            return self.local_data_source(env, r, &schema, key);
        }
        // An unsupported type was diagnosed once for the project (`unsupported_types`).
        let Some(schema) = schema::data_source(&r.rtype) else {
            env.resources.insert(key, Value::Unknown(Type::Dynamic));
            return;
        };
        if let Some(message) = schema.deprecated {
            let d = Diagnostic::warning("Deprecated Resource", message, Some(r.type_span.clone()));
            if !self.diags.contains(&d) {
                self.diags.push(d);
            }
        }
        let Some((insts, shared)) = self.expand(env, r) else {
            env.resources.insert(key, Value::Unknown(Type::Dynamic));
            return;
        };
        let mut values: Vec<(InstanceKey, Value)> = Vec::with_capacity(insts.len());
        for inst in insts {
            if self.ctx.exhausted() {
                break;
            }
            let names = InstanceNames {
                env,
                each: inst.each.clone(),
                count: inst.count,
            };
            let scope = Scope::new(self.ctx, &names, r.file);
            let open = r.open.range.clone();
            let attrs = body::eval_body(&scope, &r.body, &schema.body, true, open, &mut self.diags);
            self.bound_diagnostics();
            let mut deps = env.take_recorded();
            deps.extend(shared.iter().cloned());
            let address = format!("{}{key}{}", env.prefix, inst.key);
            let attrs = match self.known.get(&address) {
                Some(answer) => answered(attrs, answer),
                None => {
                    self.ask(r, &schema, &address, &attrs, &deps);
                    attrs
                }
            };
            values.push((inst.key, attrs));
        }
        let value = collect(r.for_each.is_some(), r.count.is_some(), values);
        env.resources.insert(key, value);
    }

    /// The instances of a `resource` or `data` block and what their `count` or `for_each`
    /// (and `depends_on`) depend on; `None` after a diagnostic.
    pub(super) fn expand(
        &mut self,
        env: &Env<'_>,
        r: &Resource,
    ) -> Option<(Vec<Instance>, BTreeSet<String>)> {
        env.take_recorded();
        let insts = {
            let names = InstanceNames {
                env,
                each: None,
                count: None,
            };
            let scope = Scope::new(self.ctx, &names, r.file);
            instances(
                &scope,
                r.count.as_ref(),
                r.for_each.as_ref(),
                Repeated::Resource,
            )
        };
        let insts = insts.and_then(|i| self.tally.resources(i.len(), &r.span).map(|()| i));
        let insts = match insts {
            Ok(i) => i,
            Err(d) => {
                self.diags.push(d);
                return None;
            }
        };
        let mut shared = env.take_recorded();
        shared.extend(
            r.depends_on
                .iter()
                .map(|(t, _)| format!("{}{t}", env.prefix)),
        );
        Some((insts, shared))
    }

    /// Lists the read of an unanswered instance, or says why it cannot be read at plan.
    fn ask(
        &mut self,
        r: &Resource,
        schema: &DataSourceSchema,
        address: &str,
        attrs: &Value,
        deps: &BTreeSet<String>,
    ) {
        let waiting = deps
            .iter()
            .any(|dep| self.unanswered.iter().any(|u| dependency_covers(dep, u)));
        self.unanswered.insert(address.to_owned());
        let unknown = unknown_argument(r, schema, attrs);
        match unknown {
            None => {
                let declared_at = self
                    .ctx
                    .sources
                    .borrow()
                    .locate(&r.span)
                    .map(|(f, l, _)| format!("{f}:{l}"))
                    .unwrap_or_default();
                self.data_reads.push(DataRead {
                    data_type: r.rtype.clone(),
                    address: address.to_owned(),
                    arguments: arguments(schema, attrs),
                    subject: r.type_span.clone(),
                    declared_at,
                });
            }
            Some(_) if waiting => {}
            Some((name, subject)) => self.diags.push(Diagnostic::error(
                "Data source argument known only after apply",
                format!(
                    "The \"{name}\" argument of {address} depends on a value known only after \
                     apply. atoll reads data sources from the cluster before it plans, so their \
                     arguments must be known then: use a literal, a variable or another data \
                     source's attribute instead of a resource's computed attribute."
                ),
                Some(subject),
            )),
        }
    }
}

/// The first argument written in the block whose value is not wholly known, with where it is
/// written.
fn unknown_argument(
    r: &Resource,
    schema: &DataSourceSchema,
    attrs: &Value,
) -> Option<(String, Span)> {
    let at = |range: Option<std::ops::Range<usize>>| Span {
        file: r.file,
        range: range.unwrap_or_else(|| r.type_span.range.clone()),
    };
    let unknown = |name: &str| attrs.get_attr(name).is_some_and(Value::contains_unknown);
    let written = r
        .body
        .attributes()
        .filter(|a| schema.body.attr(a.key.as_str()).is_some())
        .map(|a| (a.key.to_string(), at(a.value.span())));
    let blocks = r.body.blocks().filter_map(|b| {
        let name = match b.ident.as_str() {
            "dynamic" => b.labels.first()?.to_string(),
            name => name.to_owned(),
        };
        schema.body.block(&name)?;
        Some((name, at(b.ident.span())))
    });
    let found = written.chain(blocks).find(|(name, _)| unknown(name));
    found.or_else(|| {
        attrs
            .as_map()?
            .iter()
            .find(|(name, v)| {
                let argument = schema.body.attr(name).is_some_and(|a| !a.computed)
                    || schema.body.block(name).is_some();
                argument && v.contains_unknown()
            })
            .map(|(name, _)| (name.clone(), at(None)))
    })
}

/// The arguments of an instance: every attribute but those only the read sets.
fn arguments(schema: &DataSourceSchema, attrs: &Value) -> Value {
    let Some(fields) = attrs.as_map() else {
        return attrs.clone();
    };
    let kept = fields
        .iter()
        .filter(|(name, _)| schema.body.attr(name).is_none_or(|a| !a.read_only))
        .map(|(name, v)| (name.clone(), v.clone()));
    Value::Object(kept.collect())
}

/// The instance's attributes with what the read set.
fn answered(attrs: Value, answer: &BTreeMap<String, Value>) -> Value {
    let Value::Object(mut fields) = attrs else {
        return attrs;
    };
    fields.extend(answer.iter().map(|(k, v)| (k.clone(), v.clone())));
    Value::Object(fields)
}

#[cfg(test)]
#[path = "data_tests.rs"]
mod tests;
