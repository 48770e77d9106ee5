//! `atoll pve-sim`: runs the simulator until Ctrl-C.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::{FaultSettings, Scenario, SimOptions, Simulator};

/// Command-line arguments of `atoll pve-sim`.
#[derive(Debug, Clone, clap::Args)]
pub struct PveSimArgs {
    /// Address to listen on, e.g. 127.0.0.1:8006.
    #[arg(long, default_value = "127.0.0.1:8006")]
    pub listen: SocketAddr,
    /// Scenario file (YAML; see docs/pve-sim.md). Default: node `pve`, storages `local` and
    /// `local-lvm`, token `root@pam!atoll=secret`.
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// Latency added to every request, in milliseconds.
    #[arg(long, default_value_t = 0)]
    pub latency_ms: u64,
    /// Duration of every worker task, in milliseconds.
    #[arg(long, default_value_t = 500)]
    pub task_ms: u64,
    /// Serve HTTPS with a generated CA and certificate.
    #[arg(long)]
    pub tls: bool,
    /// Write the CA certificate (PEM) here, for clients (with --tls).
    #[arg(long)]
    pub cert_out: Option<PathBuf>,
    /// Probability (0..1) of an injected transient error per request.
    #[arg(long, default_value_t = 0.0)]
    pub error_rate: f64,
    /// Concurrent API workers per node (PVE: 3).
    #[arg(long, default_value_t = 3)]
    pub workers: usize,
    /// Delay before answering a failed authentication, in milliseconds (PVE: 3000).
    #[arg(long, default_value_t = 3000)]
    pub auth_delay_ms: u64,
}

/// Runs the simulator until interrupted.
pub async fn run(args: PveSimArgs) -> anyhow::Result<()> {
    let scenario = match &args.scenario {
        Some(path) => Scenario::load(path)?,
        None => Scenario::default(),
    };
    if args.cert_out.is_some() && !args.tls {
        anyhow::bail!("--cert-out needs --tls");
    }
    let opts = SimOptions {
        listen: args.listen,
        tls: args.tls,
        task_duration: Duration::from_millis(args.task_ms),
        auth_failure_delay: Duration::from_millis(args.auth_delay_ms),
        workers_per_node: args.workers,
        faults: FaultSettings {
            latency: Duration::from_millis(args.latency_ms),
            error_rate: args.error_rate.clamp(0.0, 1.0),
            ..FaultSettings::default()
        },
        ..SimOptions::default()
    };
    let sim = Simulator::start(&scenario, opts).await?;
    if let (Some(path), Some(pem)) = (&args.cert_out, sim.ca_pem()) {
        std::fs::write(path, pem)
            .map_err(|e| anyhow::anyhow!("writing CA certificate to {}: {e}", path.display()))?;
    }
    println!("listening on {}", sim.url());
    tokio::signal::ctrl_c().await?;
    sim.shutdown();
    Ok(())
}
