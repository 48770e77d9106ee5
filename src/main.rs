use std::process::ExitCode;

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
    /// Run the Proxmox VE API simulator.
    PveSim(atoll::pvesim::cli::PveSimArgs),
    /// Load and evaluate a project without contacting Proxmox; Terraform-style diagnostics.
    Validate(atoll::tfconfig::cli::ValidateArgs),
    /// Plan a project against the configured Proxmox VE endpoint (same engine and guard as the server).
    Plan(atoll::proxmox::cli::PlanArgs),
    /// Apply a project, or a plan saved with `atoll plan --out`.
    Apply(atoll::proxmox::cli::ApplyArgs),
    /// What atoll manages for a project and workspace.
    State(atoll::proxmox::cli::StateArgs),
}

fn main() -> ExitCode {
    atoll::telemetry::init();
    let cli = Cli::parse();
    match cli.command {
        Command::PveSim(args) => {
            atoll::telemetry::init();
            block_on(atoll::pvesim::cli::run(args))
        }
        Command::Plan(args) => run_async(atoll::proxmox::cli::plan(args)),
        Command::Apply(args) => run_async(atoll::proxmox::cli::apply(args)),
        Command::State(args) => run_async(atoll::proxmox::cli::state(args)),
        Command::Validate(args) => {
            let argv: Vec<String> = std::env::args().collect();
            atoll::tfconfig::cli::run(&args, &argv)
        }
    }
}

fn run_async(fut: impl std::future::Future<Output = ExitCode>) -> ExitCode {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(fut),
        Err(e) => {
            eprintln!("error: starting the async runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

fn block_on(fut: impl std::future::Future<Output = anyhow::Result<()>>) -> ExitCode {
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
    match runtime.block_on(fut) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
