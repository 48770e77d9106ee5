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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::PveSim(args) => {
            atoll::telemetry::init();
            block_on(atoll::pvesim::cli::run(args))
        }
        Command::Validate(args) => {
            let argv: Vec<String> = std::env::args().collect();
            atoll::tfconfig::cli::run(&args, &argv)
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
