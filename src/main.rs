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
    /// Load and evaluate a project without contacting Proxmox; Terraform-style diagnostics.
    Validate(atoll::tfconfig::cli::ValidateArgs),
}

fn main() -> ExitCode {
    atoll::telemetry::init();
    let cli = Cli::parse();
    match cli.command {
        Command::Validate(args) => {
            let argv: Vec<String> = std::env::args().collect();
            atoll::tfconfig::cli::run(&args, &argv)
        }
    }
}
