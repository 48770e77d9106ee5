//! `atoll plan`, `atoll apply` and `atoll state list|show`: the same engine and guard as the
//! server, run by hand (for bootstrapping, and for the stack that holds atoll itself). Exit
//! codes: 0 success, 1 error, 2 changes present with `--detailed-exitcode`. It must not print
//! a sensitive value.

mod args;
mod output;
mod remote;
mod remote_state;
mod settings;
mod state_edit;
mod state_source;
mod tfstate;

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, bail};

pub use args::{
    ApplyArgs, DoctorArgs, OutputArgs, PlanArgs, ProjectArgs, RemoteArgs, ScopeArgs, StateArgs,
    StateCommand, VarArgs,
};
pub use settings::{Settings, load as load_settings};
pub use tfstate::{ExportTerraformArgs, ImportTerraformArgs};

use crate::proxmox::apply::{ApplyEvent, ApplySettings, has_steps};
use crate::proxmox::client::ProxmoxClient;
use crate::proxmox::engine::{Engine, Prepared, record_adopted};
use crate::proxmox::plan::Plan;
use crate::proxmox::state::StateHandle;
use crate::render;
use crate::store::StateScope;
use state_source::{Lease, open_with, record_change, record_version, shown_version};
use tfconfig::{CliVar, Input};

/// Runs `atoll plan`.
pub async fn plan(args: PlanArgs) -> ExitCode {
    report(run_plan(args).await)
}

/// Runs `atoll apply`.
pub async fn apply(args: ApplyArgs) -> ExitCode {
    report(run_apply(args).await)
}

/// Runs `atoll validate`: installs the project's remote modules (as `atoll plan` does, with
/// the `modules:` settings of the environment), then loads and reports it.
pub async fn validate(args: tfconfig::cli::ValidateArgs, argv: Vec<String>) -> ExitCode {
    let mut input = match tfconfig::cli::input(&args, &argv) {
        Ok(input) => input,
        Err(code) => return code,
    };
    // validate needs only `limits:` and `modules:`; a problem elsewhere in the settings (a
    // Proxmox endpoint without credentials, say) must not stop it.
    match settings::load_with(None, false) {
        Ok(settings) => {
            input.limits = settings.limits.clone();
            if let Err(e) = install_modules(&settings, &mut input).await {
                return report(Err(e));
            }
        }
        Err(e) => eprintln!(
            "Warning: the settings could not be read, so remote modules are not installed\n\n{e}\n"
        ),
    }
    tokio::task::spawn_blocking(move || tfconfig::cli::report(&args, &input))
        .await
        .unwrap_or(ExitCode::FAILURE)
}

/// Installs the remote modules `input` calls (no forge credentials: the local commands reach
/// only the hosts and registries of `modules:`).
async fn install_modules(settings: &Settings, input: &mut Input) -> anyhow::Result<()> {
    let installer = crate::workdir::modules::Installer::new(settings.modules.clone())
        .map_err(anyhow::Error::msg)
        .context("building the module installer (modules:)")?;
    installer.install(input, None).await;
    Ok(())
}

/// Runs `atoll output [NAME]`.
pub async fn output(args: OutputArgs) -> ExitCode {
    report(run_output(args).await)
}

/// Runs `atoll doctor`: one line per check, the fix under each failure; exit 0 only when
/// everything holds.
pub async fn doctor(args: DoctorArgs) -> ExitCode {
    // the loader's warnings are about the server (forges, public URL): not this command's
    let settings = match settings::load_with(args.config.as_deref(), false) {
        Ok(settings) => settings,
        Err(e) => {
            print!(
                "{}",
                output::doctor_text(&crate::doctor::Report::from_config_error(e))
            );
            return ExitCode::FAILURE;
        }
    };
    let report = crate::doctor::run(settings.proxmox.as_ref(), &settings.protect).await;
    print!("{}", output::doctor_text(&report));
    if report.healthy() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Runs `atoll state ...`.
pub async fn state(args: StateArgs) -> ExitCode {
    report(run_state(args).await)
}

fn report(result: anyhow::Result<ExitCode>) -> ExitCode {
    result.unwrap_or_else(|e| {
        let text = format!("{e:#}");
        // Configuration diagnostics arrive rendered, each with its own "Error:" heading.
        if text.starts_with("Error: ") || text.starts_with("Warning: ") {
            eprintln!("{text}");
        } else {
            eprintln!("Error: {text}");
        }
        ExitCode::FAILURE
    })
}

struct Opened {
    settings: Settings,
    state: StateHandle,
    /// With `--remote`: the server, and the project lock this run holds there.
    remote: Option<Lease>,
}

fn scope(project: &ProjectArgs) -> StateScope {
    let input = input(&project.dir, &project.workspace, Vec::new());
    StateScope {
        repo: project.repo.clone(),
        project_dir: input.project_dir.display().to_string(),
        workspace: project.workspace.clone(),
    }
}

async fn open(project: &ProjectArgs) -> anyhow::Result<Opened> {
    open_with(project, &RemoteArgs::none(), false).await
}

fn engine(settings: &Settings) -> anyhow::Result<Engine> {
    let Some(proxmox) = &settings.proxmox else {
        bail!(
            "no Proxmox VE endpoint configured: set proxmox.endpoint in the config, or \
             PROXMOX_VE_ENDPOINT and PROXMOX_VE_API_TOKEN"
        );
    };
    let api = Arc::new(ProxmoxClient::new(proxmox)?);
    Ok(Engine::new(api, settings.protect.clone()).with_sftp(settings.sftp.clone()))
}

/// The input of a load of `dir` (relative to its checkout).
fn input(dir: &std::path::Path, workspace: &str, vars: Vec<tfconfig::CliVar>) -> Input {
    let checkout = tfconfig::find_checkout(dir);
    let absolute = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let project_dir = absolute
        .strip_prefix(&checkout)
        .map(PathBuf::from)
        .unwrap_or_default();
    Input {
        checkout,
        project_dir,
        workspace: workspace.to_owned(),
        vars,
        limits: tfconfig::Limits::default(),
        modules: Default::default(),
    }
}

fn cli_vars(vars: &VarArgs) -> anyhow::Result<Vec<CliVar>> {
    let mut out = Vec::new();
    for file in &vars.var_files {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("reading variables file {}", file.display()))?;
        out.push(CliVar::File {
            name: file.display().to_string(),
            text,
        });
    }
    out.extend(vars.vars.iter().cloned().map(CliVar::Var));
    Ok(out)
}

/// A project opened and planned: what `plan` prints and `apply` applies.
struct Planned {
    opened: Opened,
    engine: Engine,
    input: Input,
    prepared: Prepared,
}

/// Opens the store, builds the engine and plans the project.
async fn plan_project(
    opened: Opened,
    project: &ProjectArgs,
    vars: &VarArgs,
    options: &model::PlanOptions,
) -> anyhow::Result<Planned> {
    let engine = engine(&opened.settings)?;
    let mut input = input(&project.dir, &project.workspace, cli_vars(vars)?);
    input.limits = opened.settings.limits.clone();
    install_modules(&opened.settings, &mut input).await?;
    let prepared = engine.prepare_with(&opened.state, &input, options).await?;
    Ok(Planned {
        opened,
        engine,
        input,
        prepared,
    })
}

async fn run_plan(args: PlanArgs) -> anyhow::Result<ExitCode> {
    let options = plan_options(&args.scope)?;
    let opened = open_with(&args.project, &args.remote, true).await?;
    let lease = opened.remote.clone();
    let planned = plan_project(opened, &args.project, &args.vars, &options).await;
    if let Some(Lease {
        api,
        lock: Some(id),
    }) = lease
    {
        api.release_lock(id).await;
    }
    let Planned { prepared, .. } = planned?;
    let plan = &prepared.plan;
    if let Some(out) = &args.out {
        write_plan(out, plan)?;
    }
    if args.json {
        println!("{}", render::plan_json(plan));
        for warning in &prepared.desired.warnings {
            eprint!("{warning}");
        }
    } else {
        print!("{}", render::plan_output(plan, &prepared.desired.warnings));
        if let Some(out) = &args.out {
            println!(
                "\nSaved the plan to {}; apply it with: atoll apply --plan {}",
                out.display(),
                out.display()
            );
        }
    }
    Ok(if args.detailed_exitcode && !plan.is_empty() {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// `--target`, `--replace` and `--destroy` as the engine takes them (the variables are read
/// by [`cli_vars`]).
fn plan_options(scope: &ScopeArgs) -> anyhow::Result<model::PlanOptions> {
    let addresses = |raw: &[String]| -> anyhow::Result<Vec<model::ResourceAddress>> {
        raw.iter()
            .map(|a| model::ResourceAddress::parse(a).map_err(anyhow::Error::from))
            .collect()
    };
    Ok(model::PlanOptions {
        targets: addresses(&scope.targets)?,
        replace: addresses(&scope.replace)?,
        destroy: scope.destroy,
        vars: Vec::new(),
    })
}

fn write_plan(path: &Path, plan: &Plan) -> anyhow::Result<()> {
    std::fs::write(path, render::plan_json(plan))
        .with_context(|| format!("writing the plan to {}", path.display()))
}

fn read_plan(path: &Path) -> anyhow::Result<Plan> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the plan {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a plan saved by `atoll plan --out`",
            path.display()
        )
    })
}

fn approved() -> anyhow::Result<bool> {
    print!(
        "\nDo you want to perform these actions?\n  Only 'yes' will be accepted to approve.\n\n  Enter a value: "
    );
    std::io::stdout().flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(line.trim() == "yes")
}

async fn run_apply(args: ApplyArgs) -> anyhow::Result<ExitCode> {
    let opened = open_with(&args.project, &args.remote, true).await?;
    let lease = opened.remote.clone();
    let result = apply_planned(opened, &args).await;
    if let Some(Lease {
        api,
        lock: Some(id),
    }) = lease
    {
        api.release_lock(id).await;
    }
    result
}

async fn apply_planned(opened: Opened, args: &ApplyArgs) -> anyhow::Result<ExitCode> {
    let options = model::PlanOptions::default();
    let Planned {
        opened,
        engine,
        input,
        prepared,
    } = plan_project(opened, &args.project, &args.vars, &options).await?;
    let plan = match &args.plan {
        Some(path) => {
            let saved = read_plan(path)?;
            engine.check_saved(&saved, &prepared)?;
            saved
        }
        None => {
            print!(
                "{}",
                render::plan_output(&prepared.plan, &prepared.desired.warnings)
            );
            engine.recheck(&prepared.plan, &prepared)?;
            let steps = has_steps(&prepared.plan);
            if !steps && prepared.plan.summary.blocked == 0 {
                record_adopted(&opened.state, &prepared).await?;
                return Ok(ExitCode::SUCCESS);
            }
            if steps && !args.auto_approve && !approved()? {
                println!("\nApply cancelled.");
                return Ok(ExitCode::FAILURE);
            }
            prepared.plan.clone()
        }
    };
    let desired = engine.settle(&opened.state, &input, &prepared).await?;
    let events = |event: &ApplyEvent| output::progress(event);
    let settings = ApplySettings {
        restart: args.restart,
        per_node: args.parallelism.max(1),
        ..ApplySettings::default()
    };
    let executor = engine.executor(&opened.state, settings, &events);
    let report = executor.execute(&plan, &desired).await;
    print!("{}", output::apply_text(&report));
    record_version(&opened, &args.project.dir).await;
    if !report.failed() {
        let (outputs, warnings) = evaluate_after(&opened.state, &input, &prepared.data).await?;
        print!("{}", render::checks_after_apply(&warnings));
        if !outputs.is_empty() {
            print!("\nOutputs:\n\n{}", render::outputs_text(&outputs));
        }
    }
    Ok(if report.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The root outputs, evaluated with what atoll's state knows (no request to Proxmox).
async fn evaluate_outputs(
    state: &StateHandle,
    input: &Input,
    data: &tfconfig::Known,
) -> anyhow::Result<std::collections::BTreeMap<String, tfconfig::OutputValue>> {
    Ok(evaluate_after(state, input, data).await?.0)
}

/// The configuration evaluated with the state as it is now: its outputs, and its warnings
/// (`check` blocks evaluated again after an apply).
async fn evaluate_after(
    state: &StateHandle,
    input: &Input,
    data: &tfconfig::Known,
) -> anyhow::Result<(
    std::collections::BTreeMap<String, tfconfig::OutputValue>,
    Vec<String>,
)> {
    let now = state.load().await?;
    let (input, data) = (input.clone(), data.clone());
    let desired = tokio::task::spawn_blocking(move || {
        crate::proxmox::engine::load_desired_with(&input, &now, &data)
    })
    .await
    .context("evaluating the outputs")??;
    Ok((desired.outputs, desired.warnings))
}

async fn run_output(args: OutputArgs) -> anyhow::Result<ExitCode> {
    let opened = open(&args.project).await?;
    let mut input = input(
        &args.project.dir,
        &args.project.workspace,
        cli_vars(&args.vars)?,
    );
    input.limits = opened.settings.limits.clone();
    install_modules(&opened.settings, &mut input).await?;
    let outputs = evaluate_outputs(&opened.state, &input, &tfconfig::Known::new()).await?;
    match (&args.name, args.json) {
        (Some(name), json) => {
            let Some(one) = outputs.get(name) else {
                let known: Vec<&str> = outputs.keys().map(String::as_str).collect();
                bail!(
                    "Output {name:?} not found: the configuration declares no output of that name{}",
                    if known.is_empty() {
                        String::new()
                    } else {
                        format!(" (it declares {})", known.join(", "))
                    }
                );
            };
            if json {
                let all = render::outputs_json(&std::collections::BTreeMap::from([(
                    name.clone(),
                    one.clone(),
                )]));
                println!("{}", all[name]);
            } else {
                println!("{}", render::output_value_text(one));
            }
        }
        (None, true) => println!("{}", render::outputs_json(&outputs)),
        (None, false) if outputs.is_empty() => eprintln!(
            "Warning: No outputs found\n\nThe configuration of {} declares no output.",
            args.project.dir.display()
        ),
        (None, false) => print!("{}", render::outputs_text(&outputs)),
    }
    Ok(ExitCode::SUCCESS)
}

async fn run_state(args: StateArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        StateCommand::List { project, remote } => {
            let opened = open_with(&project, &remote, false).await?;
            let now = opened.state.load().await?;
            if now.entries.is_empty() && now.generated.is_empty() {
                let scope = opened.state.scope();
                eprintln!(
                    "atoll manages nothing for {} (workspace {}, repository {}).",
                    scope.project_dir, scope.workspace, scope.repo
                );
            }
            print!("{}", output::state_list(&now));
        }
        StateCommand::Show {
            address,
            project,
            version,
            remote,
        } => {
            let opened = open_with(&project, &remote, false).await?;
            let now = match version {
                Some(n) => {
                    let shown = shown_version(&opened.state, n).await?;
                    print!(
                        "{}",
                        output::state_versions(std::slice::from_ref(&shown.version))
                    );
                    shown.state
                }
                None => opened.state.load().await?,
            };
            match output::state_show(&now, &address) {
                Some(text) => print!("{text}"),
                None => bail!(
                    "{address} is not in atoll's state for {} (workspace {}); list it with `atoll state list`",
                    opened.state.scope().project_dir,
                    opened.state.scope().workspace
                ),
            }
        }
        StateCommand::ImportTerraform(args) => return tfstate::run_import(args).await,
        StateCommand::ExportTerraform(args) => return tfstate::run_export(args).await,
        StateCommand::Versions { project, remote } => {
            let opened = open_with(&project, &remote, false).await?;
            let versions = opened.state.versions().await?;
            if versions.is_empty() {
                let scope = opened.state.scope();
                eprintln!(
                    "No state versions yet for {} (workspace {}, repository {}): an apply writes the first.",
                    scope.project_dir, scope.workspace, scope.repo
                );
            }
            print!("{}", output::state_versions(&versions));
        }
        StateCommand::Mv {
            source,
            destination,
            dry_run,
            project,
        } => {
            let opened = open(&project).await?;
            print!(
                "{}",
                state_edit::mv(&opened.state, &source, &destination, dry_run).await?
            );
            if !dry_run {
                let reason = crate::store::VersionReason::StateMv;
                record_change(&opened, &project.dir, reason).await;
            }
        }
        StateCommand::Rm {
            addresses,
            dry_run,
            project,
        } => {
            let opened = open(&project).await?;
            print!(
                "{}",
                state_edit::rm(&opened.state, &addresses, dry_run).await?
            );
            if !dry_run {
                let reason = crate::store::VersionReason::StateRm;
                record_change(&opened, &project.dir, reason).await;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
