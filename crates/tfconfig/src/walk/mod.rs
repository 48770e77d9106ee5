//! Walks a module instance in dependency order: locals, resources (expanded and evaluated
//! against their schema), module calls (arguments checked against the child's variables, then
//! the child walked per instance) and outputs.

mod check;
mod data;
mod import;
mod local;
mod moved;
mod source;
mod unsupported;
mod values;

use std::collections::{BTreeMap, BTreeSet};

pub(crate) use unsupported::diagnose as unsupported_types;
use values::{collect, refused, take_instance, with_known};

use super::config::{ModuleCall, Output, Resource};
use super::diag::{Diagnostic, did_you_mean};
use super::eval::{Ctx, Scope};
use super::expand::{InstanceKey, Repeated, Tally, instances};
use super::graph::Node;
use super::load::ModuleTree;
use super::module::{Env, InstanceNames, eval_recorded, node_order};
use super::vars::{Raw, finalize};
use super::{OutputValue, ResourceInstance, body, schema};
use crate::value::{Type, Value};

/// Collects instances and diagnostics across the whole module tree.
#[derive(Debug)]
pub(crate) struct Walker<'c> {
    pub(crate) ctx: &'c Ctx,
    /// Values of computed attributes already known from atoll's state (generated values,
    /// download ids), by instance address.
    pub(crate) known: &'c super::Known,
    pub(crate) workspace: String,
    pub(crate) resources: Vec<ResourceInstance>,
    pub(crate) diags: Vec<Diagnostic>,
    /// Instances whose attributes still live in their module's `Env` (index into `resources`,
    /// resource key); moved out when the module walk ends, so values are stored once.
    pub(crate) pending: Vec<(usize, String)>,
    /// Module and resource instances expanded so far, against the project's limits.
    pub(crate) tally: Tally,
    /// Diagnostics dropped past [`MAX_DIAGNOSTICS`].
    pub(crate) omitted: usize,
    /// Data source instances with known arguments and no answer yet.
    pub(crate) data_reads: Vec<crate::data::DataRead>,
    /// Addresses of data source instances without an answer: what reads them waits.
    pub(crate) unanswered: BTreeSet<String>,
    /// The root module's import targets, evaluated once its resources are.
    pub(crate) imports: Vec<super::ImportTarget>,
    /// `moved` and `removed` blocks of every module instance walked.
    pub(crate) moves: Vec<super::MoveStatement>,
    pub(crate) removals: Vec<super::Removal>,
}

/// Most diagnostics one load keeps: an error repeated for every instance says no more after
/// the first few hundred, and each one costs memory.
pub(crate) const MAX_DIAGNOSTICS: usize = 500;

/// What a walked module instance exposes: its outputs and what they depend on.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    pub(crate) outputs: BTreeMap<String, OutputValue>,
    pub(crate) deps: BTreeSet<String>,
}

impl Walker<'_> {
    /// Walks one module instance whose variables are already set in `env`.
    pub(crate) fn module(&mut self, env: &mut Env<'_>, extra_deps: &BTreeSet<String>) -> Walked {
        let mut walked = Walked::default();
        let order = match node_order(env.config()) {
            Ok(o) => o,
            Err(d) => {
                self.diags.push(d);
                return walked;
            }
        };
        let tree = env.tree;
        let first_pending = self.pending.len();
        for node in order {
            if self.ctx.exhausted() {
                break;
            }
            match node {
                Node::Local(name) => {
                    let Some((e, _)) = tree.config.locals.get(&name) else {
                        continue;
                    };
                    let (v, deps) = eval_recorded(env, self.ctx, e, None, None);
                    let v = v.unwrap_or_else(|d| {
                        self.diags.push(d);
                        Value::unknown()
                    });
                    env.locals.insert(name.clone(), v);
                    env.local_deps.insert(name, deps);
                }
                Node::Resource(i) => self.resource(env, &tree.config.resources[i], extra_deps),
                Node::Call(name) => {
                    let (Some(call), Some(child)) =
                        (tree.config.calls.get(&name), tree.children.get(&name))
                    else {
                        continue;
                    };
                    self.call(env, call, child, extra_deps);
                }
                Node::Output(name) => {
                    if let Some(o) = tree.config.outputs.get(&name)
                        && let Some((value, deps)) = self.output(env, o)
                    {
                        walked.deps.extend(deps);
                        walked.outputs.insert(name, value);
                    }
                }
            }
        }
        let (moves, removals) = moved::statements(self.ctx, env, &self.resources, &mut self.diags);
        self.moves.extend(moves);
        self.removals.extend(removals);
        check::evaluate(self.ctx, env, &mut self.diags);
        if env.prefix.is_empty() {
            // while the root's resource values are still in `env`: an id may read them
            self.imports = import::imports(self.ctx, env, &self.resources, &mut self.diags);
            self.bound_diagnostics();
        }
        for (index, key) in self.pending.drain(first_pending..) {
            if let Some(r) = self.resources.get_mut(index) {
                r.attributes = take_instance(&mut env.resources, &key, &r.key);
            }
        }
        walked
    }

    /// Evaluates an output. A root output that fails has no value; a child's is unknown so
    /// its callers do not fail twice. Root outputs holding sensitive data must say so.
    fn output(&mut self, env: &Env<'_>, o: &Output) -> Option<(OutputValue, BTreeSet<String>)> {
        let e = o.value.as_ref()?;
        let root = env.prefix.is_empty();
        let (v, deps) = eval_recorded(env, self.ctx, e, None, None);
        let v = match v {
            Ok(v) => v,
            Err(d) => {
                self.diags.push(d);
                if root {
                    return None;
                }
                Value::unknown()
            }
        };
        if root && v.contains_sensitive() && !o.sensitive {
            self.diags.push(Diagnostic::error("Output refers to sensitive values", "To reduce the risk of accidentally exporting sensitive data that was intended to be only internal, atoll (like Terraform) requires that any root module output containing sensitive data be explicitly marked as sensitive, to confirm your intent.\n\nIf you do intend to export this data, annotate the output value as sensitive by adding the following argument:\n    sensitive = true", Some(o.span.clone())));
        }
        let value = OutputValue {
            value: v.mark(o.sensitive),
            sensitive: o.sensitive,
        };
        Some((value, deps))
    }

    fn resource(&mut self, env: &mut Env<'_>, r: &Resource, extra_deps: &BTreeSet<String>) {
        let key = if r.data {
            format!("data.{}.{}", r.rtype, r.name)
        } else {
            format!("{}.{}", r.rtype, r.name)
        };
        if r.data {
            self.data_source(env, r);
            return;
        }
        // An unsupported type was diagnosed once for the project ([`unsupported_types`]).
        let Some(schema) = schema::resource(&r.rtype) else {
            env.resources.insert(key, Value::Unknown(Type::Dynamic));
            return;
        };
        if let Some(message) = schema::resource_deprecation(&r.rtype) {
            let d = Diagnostic::warning("Deprecated Resource", message, Some(r.type_span.clone()));
            if !self.diags.contains(&d) {
                self.diags.push(d);
            }
        }
        let refused = refused(r);
        let stop = refused
            .iter()
            .any(|d| d.severity == crate::diag::Severity::Error);
        self.diags.extend(refused);
        if stop {
            env.resources.insert(key, Value::Unknown(Type::Dynamic));
            return;
        }
        let Some((insts, mut shared)) = self.expand(env, r) else {
            env.resources.insert(key, Value::Unknown(Type::Dynamic));
            return;
        };
        shared.extend(extra_deps.iter().cloned());
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
            let attrs = schema::planned(&r.rtype, attrs);
            let attrs = with_known(attrs, self.known.get(&address));
            self.push_instance(env, r, &key, &inst.key, deps);
            if schema::FILE_TYPES.contains(&r.rtype.as_str()) {
                let source = self.read_source_file(&scope, r, &attrs);
                if let Some(instance) = self.resources.last_mut() {
                    instance.source = source;
                }
            }
            values.push((inst.key, attrs));
        }
        let value = collect(r.for_each.is_some(), r.count.is_some(), values);
        env.resources.insert(key, value);
    }

    /// Drops diagnostics past [`MAX_DIAGNOSTICS`], counting them.
    fn bound_diagnostics(&mut self) {
        if self.diags.len() > MAX_DIAGNOSTICS {
            self.omitted += self.diags.len() - MAX_DIAGNOSTICS;
            self.diags.truncate(MAX_DIAGNOSTICS);
        }
    }

    /// Records an instance; its attributes are moved in when the module walk ends.
    fn push_instance(
        &mut self,
        env: &Env<'_>,
        r: &Resource,
        key: &str,
        ik: &InstanceKey,
        mut deps: BTreeSet<String>,
    ) {
        let address = format!("{}{key}{ik}", env.prefix);
        deps.remove(&address);
        let declared_at = self
            .ctx
            .sources
            .borrow()
            .locate(&r.span)
            .map(|(f, l, _)| format!("{f}:{l}"))
            .unwrap_or_default();
        self.resources.push(ResourceInstance {
            address,
            module: env.prefix.trim_end_matches('.').to_owned(),
            resource_type: r.rtype.clone(),
            name: r.name.clone(),
            key: ik.clone(),
            attributes: Value::null(),
            lifecycle: r.lifecycle.clone(),
            depends_on: deps.into_iter().collect(),
            declared_at,
            source: None,
        });
        self.pending
            .push((self.resources.len() - 1, key.to_owned()));
    }

    fn call(
        &mut self,
        env: &mut Env<'_>,
        call: &ModuleCall,
        child: &ModuleTree,
        extra_deps: &BTreeSet<String>,
    ) {
        self.check_args(call, child);
        env.take_recorded();
        let insts = {
            let names = InstanceNames {
                env,
                each: None,
                count: None,
            };
            let scope = Scope::new(self.ctx, &names, call.span.file);
            instances(
                &scope,
                call.count.as_ref(),
                call.for_each.as_ref(),
                Repeated::Module,
            )
        };
        let insts = match insts.and_then(|i| self.tally.modules(i.len(), &call.span).map(|()| i)) {
            Ok(i) => i,
            Err(d) => {
                self.diags.push(d);
                env.modules.insert(call.name.clone(), Value::unknown());
                return;
            }
        };
        let mut child_extra = extra_deps.clone();
        child_extra.extend(env.take_recorded());
        child_extra.extend(
            call.depends_on
                .iter()
                .map(|(t, _)| format!("{}{t}", env.prefix)),
        );
        let mut values = Vec::with_capacity(insts.len());
        let mut all_deps = BTreeSet::new();
        for inst in insts {
            if self.ctx.exhausted() {
                break;
            }
            let prefix = format!("{}module.{}{}.", env.prefix, call.name, inst.key);
            let mut cenv = Env::new(child, prefix, self.workspace.clone());
            self.set_child_vars(env, &mut cenv, call, child, &inst);
            let walked = self.module(&mut cenv, &child_extra);
            all_deps.extend(walked.deps);
            let outputs = walked.outputs.into_iter().map(|(k, o)| (k, o.value));
            values.push((inst.key, Value::Object(outputs.collect())));
        }
        env.module_deps.insert(call.name.clone(), all_deps);
        env.modules.insert(
            call.name.clone(),
            collect(call.for_each.is_some(), call.count.is_some(), values),
        );
    }

    /// Evaluates one module instance's arguments in the caller's scope and finalises the
    /// child's variables (type, defaults, validation) from them.
    fn set_child_vars(
        &mut self,
        env: &Env<'_>,
        cenv: &mut Env<'_>,
        call: &ModuleCall,
        child: &ModuleTree,
        inst: &super::expand::Instance,
    ) {
        for (name, decl) in &child.config.variables {
            let arg = call.args.iter().find(|(a, _, _)| a == name);
            let raw = arg.map(|(_, _, e)| {
                let (v, deps) = eval_recorded(env, self.ctx, e, inst.each.clone(), inst.count);
                cenv.var_deps.insert(name.clone(), deps);
                let value = v.unwrap_or_else(|d| {
                    self.diags.push(d);
                    Value::unknown()
                });
                Raw {
                    value,
                    span: e.span(),
                }
            });
            // An argument that failed to evaluate is unknown: no second error for it.
            let failed = raw.as_ref().is_some_and(|r| r.value == Value::unknown());
            let v = if failed {
                Value::unknown()
            } else {
                let addr = format!("{}var.{name}", cenv.prefix);
                finalize(self.ctx, decl, raw, &addr, false, &mut self.diags)
            };
            cenv.vars.insert(name.clone(), v);
        }
    }

    /// `Unsupported argument` (with did-you-mean) and `Missing required argument`, as
    /// Terraform reports them for a module call.
    fn check_args(&mut self, call: &ModuleCall, child: &ModuleTree) {
        let vars = &child.config.variables;
        let given: BTreeSet<&str> = call.args.iter().map(|(a, _, _)| a.as_str()).collect();
        for (name, span, _) in &call.args {
            if vars.contains_key(name) {
                continue;
            }
            let unset = vars
                .keys()
                .map(String::as_str)
                .filter(|v| !given.contains(v));
            self.diags.push(Diagnostic::error(
                "Unsupported argument",
                format!(
                    "An argument named \"{name}\" is not expected here.{}",
                    did_you_mean(name, unset)
                ),
                Some(span.clone()),
            ));
        }
        for (name, v) in vars {
            if v.default.is_none() && !given.contains(name.as_str()) {
                self.diags.push(Diagnostic::error(
                    "Missing required argument",
                    format!("The argument \"{name}\" is required, but no definition was found."),
                    Some(call.open_span.clone()),
                ));
            }
        }
    }
}
