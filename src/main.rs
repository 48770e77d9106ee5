use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// atoll: Atlantis-style pull-request automation for Proxmox VE.
#[derive(Debug, Parser)]
#[command(name = "atoll", version)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the Proxmox VE API simulator.
    PveSim(atoll::pvesim::cli::PveSimArgs),
}

fn main() -> ExitCode {
    atoll::telemetry::init();
    let cli = Cli::parse();
    let Some(command) = cli.command else {
        return ExitCode::SUCCESS;
    };
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
    let result = match command {
        Command::PveSim(args) => runtime.block_on(atoll::pvesim::cli::run(args)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
