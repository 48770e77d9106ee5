//! Terraform configuration (bpg/proxmox) to desired resources, with Terraform's diagnostics.
//!
//! Owns: reading the `*.tf` files of a project directory and the modules it calls (local ones,
//! and remote ones its caller installed inside the checkout: [`remote`]),
//! variables (tfvars precedence, `--var`/`--var-file`, type constraints with `optional()`),
//! expression evaluation with unknown and sensitive values, Terraform's functions,
//! `count`/`for_each`/`dynamic` expansion, the embedded resource schemas, and diagnostics.
//!
//! Must not: read anything outside the checkout (the file functions are sandboxed, module
//! sources are confined), read `TF_VAR_*` or any other environment, run `terraform`, contact
//! the network, or print sensitive values. Input is (checkout, project dir, workspace, CLI
//! variables, [`Limits`]); output is [`Loaded`]. Everything is bounded, so no input panics,
//! hangs or exhausts memory: every file is read through one [`checkout::CheckoutReader`] (no
//! link out of the checkout, regular files only, bytes and files capped per file and per load),
//! each module directory is loaded once, module and resource instances are capped across the
//! whole project, and evaluation spends a budget of value nodes and bytes.
//!
//! Known limits: numbers are `f64` (exact integers up to 2^53, not arbitrary precision; the
//! oracle's `divergences.txt` lists where that shows); override files, provider-defined
//! functions, `moved`/`import`/`removed`/`check` blocks and `dynamic` blocks in `.tf.json`
//! are reported as unsupported; data sources and resource types other than the schemas in
//! [`schema`] are diagnostics, not evaluated. Data sources are read by the caller ([`data`]).

pub mod backend;
mod body;
pub mod checkout;
pub mod cli;
mod config;
pub mod data;
pub mod diag;
pub mod eval;
pub mod expand;
pub mod funcs;
mod graph;
mod heredoc;
pub mod limits;
mod load;
mod module;
mod nesting;
pub mod remote;
pub mod schema;
pub mod types;
pub mod value;
mod vars;
mod walk;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use config::Lifecycle;
pub use diag::{Diagnostic, Severity, SourceMap, Span};
pub use expand::InstanceKey;
pub use limits::Limits;
pub use remote::{Installed, ModuleRequest, RemoteModules};
pub use value::{Type, Value};
pub use vars::CliVar;

/// What to load.
#[derive(Clone, Debug)]
pub struct Input {
    /// The repository checkout; nothing outside it is read.
    pub checkout: PathBuf,
    /// The project directory, relative to the checkout (`environments/dev`).
    pub project_dir: PathBuf,
    /// The workspace (`terraform.workspace`, `env/{workspace}.tfvars`).
    pub workspace: String,
    /// `--var` and `--var-file` values in command-line order.
    pub vars: Vec<CliVar>,
    /// What the load may read, expand and allocate.
    pub limits: Limits,
    /// Remote module calls, installed inside the checkout beforehand (see [`module_requests`]).
    pub modules: RemoteModules,
}

/// One resource instance of the desired state.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceInstance {
    /// Full address: `module.dev_lxcs.proxmox_virtual_environment_container.lxc["dev-nextcloud"]`.
    pub address: String,
    /// Module instance path (`module.dev_lxcs`), empty for the root module.
    pub module: String,
    pub resource_type: String,
    pub name: String,
    pub key: InstanceKey,
    /// The planned attributes as an object: configured values converted to the schema's types,
    /// unset arguments at their provider default, computed ones unknown, sensitive ones marked.
    /// Nested blocks are lists of objects (element type left dynamic: see [`schema::resource`]
    /// for block types, defaults and which arguments force replacement); a block type whose
    /// `dynamic` collection is unknown is an unknown list.
    pub attributes: Value,
    pub lifecycle: Lifecycle,
    /// What this instance depends on (references and `depends_on`): instance addresses, or a
    /// resource or module address standing for all of its instances (see [`dependency_covers`]).
    pub depends_on: Vec<String>,
    /// `file:line` of the resource block, relative to the project directory.
    pub declared_at: String,
    /// The bytes a file resource uploads (`source_file`), read from the checkout through the
    /// same sandbox as `file()`; `None` for every other resource, or while the path is unknown.
    pub source: Option<SourceBytes>,
}

/// An `import` block's target, evaluated: the configured instance it brings under management
/// and bpg's import id of the existing object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportTarget {
    /// The instance address (`module.lxc["web"].proxmox_virtual_environment_container.ct`).
    pub address: String,
    /// The id as the block evaluates it (`pve/100`, `cluster/lan`).
    pub id: String,
    /// `file:line` of the block, relative to the project directory.
    pub declared_at: String,
    /// The block's `to`, the subject of a diagnostic about it.
    pub subject: Span,
}

/// A `moved` block, its addresses absolute (a child module's carry its instance's prefix).
/// `module`: both name modules (every object under `from` moves); `keyed`: either side names
/// one instance (`x[0]`, `module.m["a"]`), so an unkeyed side means the instance without a
/// key, as Terraform reads them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveStatement {
    pub from: String,
    pub to: String,
    pub module: bool,
    pub keyed: bool,
    /// `file:line` of the block, relative to the project directory.
    pub declared_at: String,
}

/// A `removed` block: a resource or module no longer in the configuration, absolute, and
/// whether its objects are destroyed (`true`) or only forgotten.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Removal {
    pub from: String,
    pub module: bool,
    pub destroy: bool,
    pub declared_at: String,
}

/// A file's bytes read from the checkout for a resource to upload. `Debug` shows the size and
/// the SHA-256, never the content.
#[derive(Clone, PartialEq, Eq)]
pub struct SourceBytes(pub std::sync::Arc<Vec<u8>>);

impl SourceBytes {
    /// The SHA-256 of the bytes, lowercase hex.
    pub fn sha256(&self) -> String {
        funcs::encoding::digest("filesha256", &self.0)
    }
}

impl std::fmt::Debug for SourceBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SourceBytes({} bytes, sha256 {})",
            self.0.len(),
            self.sha256()
        )
    }
}

/// A root module output.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputValue {
    pub value: Value,
    pub sensitive: bool,
}

/// The result of a load: the desired state and every diagnostic found.
#[derive(Debug)]
pub struct Loaded {
    pub resources: Vec<ResourceInstance>,
    pub outputs: BTreeMap<String, OutputValue>,
    /// The data source instances to read before the configuration can be planned: known
    /// arguments, no answer in [`Known`] yet (see [`data`]).
    pub data_reads: Vec<data::DataRead>,
    /// The root module's `import` blocks, evaluated, each naming a configured instance.
    pub imports: Vec<ImportTarget>,
    pub diagnostics: Vec<Diagnostic>,
    /// `moved` blocks of every module instance, checked against the configuration.
    pub moves: Vec<MoveStatement>,
    /// `removed` blocks of every module instance.
    pub removals: Vec<Removal>,
    /// The files read, for rendering diagnostics.
    pub sources: SourceMap,
}

impl Loaded {
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }

    /// The warnings alone, each rendered as Terraform prints it.
    pub fn render_warnings(&self) -> Vec<String> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .map(|d| self.sources.render(d))
            .collect()
    }

    /// All diagnostics rendered as Terraform prints them, separated by blank lines.
    pub fn render_diagnostics(&self) -> String {
        self.diagnostics
            .iter()
            .map(|d| self.sources.render(d))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Values of computed attributes known before evaluation, by instance address and attribute
/// name (`random_password.db` -> `result`); they replace the attribute's unknown value. A data
/// source instance's answer ([`data::answer`]) goes under its address
/// (`data.proxmox_virtual_environment_vms.templates` -> `vms`).
pub type Known = BTreeMap<String, BTreeMap<String, Value>>;

/// Loads and evaluates a project. Never panics on bad input; problems become diagnostics.
pub fn load(input: &Input) -> Loaded {
    load_with_known(input, &Known::new())
}

/// [`load`], with the computed values atoll already knows (from its state, or derived from
/// other resources' arguments) filled in, so references to them evaluate to known values.
pub fn load_with_known(input: &Input, known: &Known) -> Loaded {
    let mut diags = Vec::new();
    let mut sources = SourceMap::default();
    let Some((checkout, root)) = locate(input, &mut diags) else {
        return Loaded {
            resources: Vec::new(),
            outputs: BTreeMap::new(),
            data_reads: Vec::new(),
            imports: Vec::new(),
            diagnostics: diags,
            moves: Vec::new(),
            removals: Vec::new(),
            sources,
        };
    };
    let limits = &input.limits;
    let reader = checkout::CheckoutReader::new(checkout, limits);
    let (tree, _) = load::load_tree(&reader, &root, &input.modules, &mut sources, &mut diags);
    let ctx = eval::Ctx::new(
        sources,
        funcs::Sandbox::new(reader, root.clone()),
        eval::Budget::new(limits.eval_values, limits.eval_memory_bytes),
    );
    let mut env = root_env(&ctx, &tree, &root, input, &mut diags);
    diags.extend(walk::unsupported_types(&tree, &ctx.sources.borrow()));
    let mut walker = walk::Walker {
        ctx: &ctx,
        known,
        workspace: input.workspace.clone(),
        resources: Vec::new(),
        diags,
        pending: Vec::new(),
        tally: expand::Tally::new(limits.module_instances, limits.resource_instances),
        omitted: 0,
        data_reads: Vec::new(),
        unanswered: Default::default(),
        imports: Vec::new(),
        moves: Vec::new(),
        removals: Vec::new(),
    };
    let walked = walker.module(&mut env, &Default::default());
    let mut resources = walker.resources;
    let mut diagnostics = once_per_load(walker.diags);
    if walker.omitted > 0 {
        diagnostics.push(Diagnostic::warning(
            "Too many diagnostics",
            format!(
                "{} more diagnostics were found but are not shown: atoll reports at most {} per load. Fix the ones above and plan again.",
                walker.omitted,
                walk::MAX_DIAGNOSTICS
            ),
            None,
        ));
    }
    resolve_edges(&mut resources);
    resources.sort_by(|a, b| a.address.cmp(&b.address));
    drop(env);
    Loaded {
        resources,
        outputs: walked.outputs,
        data_reads: walker.data_reads,
        imports: walker.imports,
        diagnostics,
        moves: walker.moves,
        removals: walker.removals,
        sources: ctx.sources.into_inner(),
    }
}

/// The root module instance with its variables set from tfvars files and the command line.
fn root_env<'t>(
    ctx: &eval::Ctx,
    tree: &'t load::ModuleTree,
    root: &Path,
    input: &Input,
    diags: &mut Vec<Diagnostic>,
) -> module::Env<'t> {
    let mut raw = vars::collect_root(
        ctx,
        &tree.config,
        root,
        &input.workspace,
        &input.vars,
        diags,
    );
    let mut env = module::Env::new(tree, String::new(), input.workspace.clone());
    for (name, decl) in &tree.config.variables {
        let v = vars::finalize(
            ctx,
            decl,
            raw.remove(name),
            &format!("var.{name}"),
            true,
            diags,
        );
        env.vars.insert(name.clone(), v);
    }
    env
}

/// Diagnostics about a spent limit, once each: once a limit is reached every later evaluation
/// fails the same way.
fn once_per_load(mut diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let once = [
        eval::LIMIT_REACHED,
        expand::TOO_MANY_MODULES,
        expand::TOO_MANY_RESOURCES,
    ];
    let mut seen = [false; 3];
    diagnostics.retain(|d| match once.iter().position(|s| *s == d.summary) {
        Some(i) => !std::mem::replace(&mut seen[i], true),
        None => true,
    });
    diagnostics
}

/// The remote module calls of a project that `input.modules` does not answer yet, once each.
/// An installer answers them and asks again until none is left: an installed module may make
/// remote calls of its own.
pub fn module_requests(input: &Input) -> Vec<ModuleRequest> {
    let mut diags = Vec::new();
    let Some((checkout, root)) = locate(input, &mut diags) else {
        return Vec::new();
    };
    let reader = checkout::CheckoutReader::new(checkout, &input.limits);
    let mut sources = SourceMap::default();
    load::load_tree(&reader, &root, &input.modules, &mut sources, &mut diags).1
}

/// The workspace a Terraform Cloud `cloud` block of the project names
/// (`terraform { cloud { workspaces { name = "prod" } } }`, a literal string), as Atlantis reads
/// it for the projects it discovers. `None` without one, or when the directory cannot be read
/// (the plan will say why).
pub fn cloud_workspace(input: &Input) -> Option<String> {
    let mut diags = Vec::new();
    let (checkout, root) = locate(input, &mut diags)?;
    let reader = checkout::CheckoutReader::new(checkout, &input.limits);
    let mut sources = SourceMap::default();
    let (tree, _) = load::load_tree(&reader, &root, &input.modules, &mut sources, &mut diags);
    tree.config.cloud_workspace
}

/// The root module's `backend` (or `cloud`) block, when it has one: where Terraform keeps the
/// project's state. An error (rendered) when the configuration cannot be read.
pub fn backend(input: &Input) -> Result<Option<backend::Backend>, String> {
    let mut diags = Vec::new();
    let mut sources = SourceMap::default();
    let loaded = locate(input, &mut diags).map(|(checkout, root)| {
        let reader = checkout::CheckoutReader::new(checkout, &input.limits);
        load::load_tree(&reader, &root, &input.modules, &mut sources, &mut diags).0
    });
    let errors: Vec<String> = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| sources.render(d))
        .collect();
    match loaded {
        Some(tree) if errors.is_empty() => Ok(tree.config.backend),
        _ => Err(errors.join("\n")),
    }
}

/// Canonical checkout and root module directory, the latter confined to the former.
fn locate(input: &Input, diags: &mut Vec<Diagnostic>) -> Option<(PathBuf, PathBuf)> {
    let Ok(checkout) = input.checkout.canonicalize() else {
        diags.push(Diagnostic::error(
            "Checkout not found",
            format!(
                "The checkout directory {:?} does not exist or cannot be read.",
                input.checkout
            ),
            None,
        ));
        return None;
    };
    let rel = &input.project_dir;
    if rel.is_absolute()
        || rel
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        diags.push(Diagnostic::error("Invalid project directory", format!("The project directory {rel:?} must be a relative path inside the repository, without \"..\"."), None));
        return None;
    }
    let root = match checkout.join(rel).canonicalize() {
        Ok(r) if r.starts_with(&checkout) && r.is_dir() => r,
        Ok(_) => {
            diags.push(Diagnostic::error("Invalid project directory", format!("The project directory {rel:?} is not a directory inside the repository checkout."), None));
            return None;
        }
        Err(_) => {
            diags.push(Diagnostic::error(
                "Project directory not found",
                format!("The project directory {rel:?} does not exist in the checkout."),
                None,
            ));
            return None;
        }
    };
    Some((checkout, root))
}

/// True when dependency entry `dep` (an instance address, or a resource or module address that
/// stands for all of its instances) covers the instance at `address`.
pub fn dependency_covers(dep: &str, address: &str) -> bool {
    address == dep
        || address
            .strip_prefix(dep)
            .is_some_and(|rest| rest.starts_with('[') || rest.starts_with('.'))
}

/// Keeps the recorded dependencies (`type.name`, `type.name["k"]`, `module.x`) that cover at
/// least one other existing instance. Whole-resource entries stay whole (they are not expanded
/// to every instance: that would be quadratic in size).
fn resolve_edges(resources: &mut [ResourceInstance]) {
    let all: std::collections::BTreeSet<String> =
        resources.iter().map(|r| r.address.clone()).collect();
    for r in resources.iter_mut() {
        let deps = std::mem::take(&mut r.depends_on);
        r.depends_on = deps
            .into_iter()
            .filter(|dep| {
                all.range(dep.clone()..)
                    .take_while(|a| a.starts_with(dep.as_str()))
                    .any(|a| *a != r.address && dependency_covers(dep, a))
            })
            .collect();
        r.depends_on.sort();
        r.depends_on.dedup();
    }
}

/// The checkout containing `dir`: the nearest ancestor with a `.git` entry, else `dir` itself.
pub fn find_checkout(dir: &Path) -> PathBuf {
    let start = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    start
        .ancestors()
        .find(|a| a.join(".git").exists())
        .map_or(start.clone(), Path::to_path_buf)
}

/// Evaluates one standalone expression: no references, all functions, and file functions that
/// see an empty checkout. For tests, fuzzing and tooling; errors come back rendered. The value
/// is checked as Terraform checks an output's: one holding an infinity (or NaN) is refused.
pub fn evaluate_expression(src: &str) -> Result<Value, String> {
    let mut sources = SourceMap::default();
    let file = sources.add("<expression>".to_owned(), src.to_owned());
    nesting::check(src).map_err(|deep| deep.detail())?;
    let mut expr = hcl_edit::parser::parse_expr(src).map_err(|e| e.message().to_owned())?;
    heredoc::flush_expr(&mut expr, src);
    let nowhere = PathBuf::from("/nonexistent/atoll-empty-checkout");
    let limits = Limits::default();
    let ctx = eval::Ctx::new(
        sources,
        funcs::Sandbox::new(
            checkout::CheckoutReader::new(nowhere.clone(), &limits),
            nowhere,
        ),
        eval::Budget::new(limits.eval_values, limits.eval_memory_bytes),
    );
    let scope = eval::Scope::new(&ctx, &eval::NoNames, file);
    let value = scope
        .eval(&expr)
        .map_err(|d| ctx.sources.borrow().render(&d))?;
    // As an output, the value must be storable: Terraform fails to serialise an infinity.
    if value.contains_non_finite() {
        return Err(
            "Error: Invalid value\n\nThe value holds an infinite number (or no \
                    number at all), which Terraform cannot store in state or show as an output."
                .to_owned(),
        );
    }
    Ok(value)
}

#[cfg(test)]
mod cloud_tests {
    /// `cloud_workspace` of a project made of `files`.
    fn cloud(files: &[(&str, &str)]) -> Option<String> {
        let dir = tempfile::tempdir().expect("temp dir");
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).expect("write");
        }
        crate::cloud_workspace(&crate::Input {
            checkout: dir.path().to_path_buf(),
            project_dir: ".".into(),
            workspace: "default".to_owned(),
            vars: Vec::new(),
            limits: crate::Limits::default(),
            modules: Default::default(),
        })
    }

    #[test]
    fn a_cloud_blocks_literal_workspace_name_is_read_in_either_syntax() {
        let native = "terraform {\n  cloud {\n    organization = \"acme\"\n    workspaces {\n      name = \"prod\"\n    }\n  }\n}\n";
        assert_eq!(cloud(&[("main.tf", native)]).as_deref(), Some("prod"));
        let json = r#"{"terraform": {"cloud": {"workspaces": {"name": "stage"}}}}"#;
        assert_eq!(cloud(&[("main.tf.json", json)]).as_deref(), Some("stage"));
    }

    #[test]
    fn no_cloud_block_tags_or_a_computed_name_name_no_workspace() {
        assert_eq!(cloud(&[("main.tf", "terraform {}\n")]), None);
        let tags =
            "terraform {\n  cloud {\n    workspaces {\n      tags = [\"app\"]\n    }\n  }\n}\n";
        assert_eq!(cloud(&[("main.tf", tags)]), None);
        let computed = "locals {\n  w = \"x\"\n}\nterraform {\n  cloud {\n    workspaces {\n      name = \"${local.w}\"\n    }\n  }\n}\n";
        assert_eq!(cloud(&[("main.tf", computed)]), None);
        let backend = "terraform {\n  backend \"s3\" {\n    bucket = \"b\"\n  }\n}\n";
        assert_eq!(cloud(&[("main.tf", backend)]), None);
    }
}
