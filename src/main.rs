mod demo;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use atoll::config::{LogFormat, LogSettings};
use clap::{Parser, Subcommand};

/// atoll: Atlantis-style pull-request automation for Proxmox VE.
#[derive(Debug, Parser)]
#[command(name = "atoll", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the server: webhooks, workers, health endpoints.
    Serve {
        /// YAML settings file; `ATOLL_*` environment variables override it.
        #[arg(long, short, env = "ATOLL_CONFIG")]
        config: PathBuf,
    },
    /// Check a settings file and list every problem with its key path.
    CheckConfig {
        #[arg(long, short, env = "ATOLL_CONFIG")]
        config: PathBuf,
    },
    /// Run the Proxmox VE API simulator.
    PveSim(pvesim::cli::PveSimArgs),
    /// Load and evaluate a project without contacting Proxmox; Terraform-style diagnostics.
    Validate(tfconfig::cli::ValidateArgs),
    /// Plan a project against the configured Proxmox VE endpoint (same engine and guard as the server).
    Plan(atoll::cli::PlanArgs),
    /// Apply a project, or a plan saved with `atoll plan --out`.
    Apply(atoll::cli::ApplyArgs),
    /// What atoll manages for a project and workspace.
    State(atoll::cli::StateArgs),
    /// The root module's outputs, evaluated with what atoll's state knows; sensitive ones redacted.
    Output(atoll::cli::OutputArgs),
    /// Check the Proxmox VE endpoint, login, version, privileges and self-discovery; exit 0
    /// only when everything holds.
    Doctor(atoll::cli::DoctorArgs),
    /// Play a scripted PR against the simulator and a fake GitHub, on loopback.
    Demo {
        /// Exit 0 after the script instead of serving until Ctrl-C.
        #[arg(long)]
        exit: bool,
    },
    /// Read a dashboard password from standard input; print its Argon2 hash for
    /// web.password_hash.
    HashPassword,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::CheckConfig { config } => check_config(&config),
        Command::Serve { config } => serve(&config),
        Command::PveSim(args) => {
            atoll::telemetry::init(&LogSettings {
                level: "info".to_owned(),
                format: LogFormat::Text,
            });
            run(pvesim::cli::run(args))
        }
        Command::HashPassword => atoll::web::hash_password_cli(),
        Command::Validate(args) => {
            let argv: Vec<String> = std::env::args().collect();
            run_cli(atoll::cli::validate(args, argv))
        }
        Command::Plan(args) => run_cli(atoll::cli::plan(args)),
        Command::Apply(args) => run_cli(atoll::cli::apply(args)),
        Command::State(args) => run_cli(atoll::cli::state(args)),
        Command::Output(args) => run_cli(atoll::cli::output(args)),
        Command::Doctor(args) => run_cli(atoll::cli::doctor(args)),
        Command::Demo { exit } => {
            atoll::telemetry::init(&LogSettings {
                level: "warn".to_owned(),
                format: LogFormat::Text,
            });
            run(demo::run(exit))
        }
    }
}

fn check_config(path: &Path) -> ExitCode {
    match atoll::config::load(path) {
        Ok(loaded) => {
            for w in &loaded.warnings {
                eprintln!("warning: {w}");
            }
            println!("{}: configuration is valid", path.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprint!("{}: {e}", path.display());
            ExitCode::from(2)
        }
    }
}

fn serve(path: &Path) -> ExitCode {
    let loaded = match atoll::config::load(path) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprint!("{}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    atoll::telemetry::init(&loaded.settings.log);
    for w in &loaded.warnings {
        tracing::warn!("{w}");
    }
    run(atoll::app::run(loaded.settings))
}

/// Runs one command's future on a multi-threaded runtime and maps its result to an exit code.
fn run(command: impl std::future::Future<Output = anyhow::Result<()>>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: starting the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs a command that maps its own outcome to an exit code (`plan`, `apply`, `state`).
fn run_cli(command: impl std::future::Future<Output = ExitCode>) -> ExitCode {
    atoll::telemetry::init(&LogSettings {
        level: "warn".to_owned(),
        format: LogFormat::Text,
    });
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(command),
        Err(e) => {
            eprintln!("error: starting the async runtime: {e}");
            ExitCode::FAILURE
        }
    }
}
