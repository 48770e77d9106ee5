//! The command-line arguments of `atoll plan`, `atoll apply`, `atoll state` and `atoll doctor`.

use std::path::PathBuf;

use crate::proxmox::apply::RestartPolicy;

/// Where the project is and which settings to use (shared by every subcommand).
#[derive(Debug, Clone, clap::Args)]
pub struct ProjectArgs {
    /// The project directory (root module).
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Workspace name.
    #[arg(long, default_value = "default")]
    pub workspace: String,
    /// Settings file (YAML, the server's format); else `ATOLL_*` and `PROXMOX_VE_*` variables.
    #[arg(long, env = "ATOLL_CONFIG")]
    pub config: Option<PathBuf>,
    /// The repository the state belongs to (`host/owner/repo`); `local` by default.
    #[arg(long, default_value = "local")]
    pub repo: String,
}

/// Root variable values.
#[derive(Debug, Clone, clap::Args)]
pub struct VarArgs {
    /// Set a root variable: NAME=VALUE (applied after the --var-file files).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Read root variable values from a .tfvars file.
    #[arg(long = "var-file", value_name = "FILE")]
    pub var_files: Vec<PathBuf>,
}

/// What a plan covers: Terraform's `-target`, `-replace` and `-destroy`, as a comment's
/// `atlantis plan -- ...` takes them.
#[derive(Debug, Clone, clap::Args)]
pub struct ScopeArgs {
    /// Plan only this resource or module and what it depends on (repeatable).
    #[arg(long = "target", value_name = "ADDRESS")]
    pub targets: Vec<String>,
    /// Plan this resource as replaced even without a change (repeatable).
    #[arg(long = "replace", value_name = "ADDRESS")]
    pub replace: Vec<String>,
    /// Plan the destruction of everything in state.
    #[arg(long)]
    pub destroy: bool,
}

/// `atoll plan`.
#[derive(Debug, Clone, clap::Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub vars: VarArgs,
    #[command(flatten)]
    pub scope: ScopeArgs,
    /// Print the JSON plan instead of the human one.
    #[arg(long)]
    pub json: bool,
    /// Exit 2 when the plan has changes (0: none, 1: error).
    #[arg(long)]
    pub detailed_exitcode: bool,
    /// Save the plan (JSON) for `atoll apply --plan FILE`.
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// `atoll apply`.
#[derive(Debug, Clone, clap::Args)]
pub struct ApplyArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub vars: VarArgs,
    /// A plan saved with `atoll plan --out`; refused if state or configuration changed since.
    #[arg(long)]
    pub plan: Option<PathBuf>,
    /// Apply without asking (a saved plan is never asked about).
    #[arg(long)]
    pub auto_approve: bool,
    /// What to do when a change needs a restart.
    #[arg(long, value_enum, default_value_t = RestartPolicy::Auto)]
    pub restart: RestartPolicy,
    /// Guests changed at once per node.
    #[arg(long, default_value_t = 4)]
    pub parallelism: usize,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// `atoll output`.
#[derive(Debug, Clone, clap::Args)]
pub struct OutputArgs {
    /// One output's value alone; all of them when left out.
    pub name: Option<String>,
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub vars: VarArgs,
    /// Print JSON: `{"NAME": {"sensitive": false, "value": ...}}` (a sensitive output has no value).
    #[arg(long)]
    pub json: bool,
}

/// `atoll state`.
#[derive(Debug, Clone, clap::Args)]
pub struct StateArgs {
    #[command(subcommand)]
    pub command: StateCommand,
}

#[derive(Debug, Clone, clap::Subcommand)]
pub enum StateCommand {
    /// List the resources atoll manages for the project and workspace.
    List {
        #[command(flatten)]
        project: ProjectArgs,
        #[command(flatten)]
        remote: RemoteArgs,
    },
    /// Show one resource (sensitive values hidden).
    Show {
        /// Resource address, e.g. proxmox_virtual_environment_container.web
        address: String,
        #[command(flatten)]
        project: ProjectArgs,
        /// Show the resource as state version N held it (see `atoll state versions`).
        #[arg(long, value_name = "N")]
        version: Option<u32>,
        #[command(flatten)]
        remote: RemoteArgs,
    },
    /// Take over a Terraform state (what `terraform state pull` prints): bpg's guests and
    /// objects by address, generated values with Terraform's values; nothing on the cluster
    /// changes.
    ImportTerraform(super::tfstate::ImportTerraformArgs),
    /// Write atoll's state as a Terraform state file (version 4) for `terraform state push`.
    ExportTerraform(super::tfstate::ExportTerraformArgs),
    /// List the state versions of the project and workspace: who changed its state, when,
    /// from which job and commit.
    Versions {
        #[command(flatten)]
        project: ProjectArgs,
        #[command(flatten)]
        remote: RemoteArgs,
    },
    /// Rename a resource, an instance or a whole module in state (as a `moved` block does);
    /// nothing on the cluster changes.
    Mv {
        /// Address in state, e.g. proxmox_virtual_environment_container.web or module.a
        source: String,
        /// New address, e.g. module.lxc.proxmox_virtual_environment_container.web
        destination: String,
        /// Say what would move, change nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        project: ProjectArgs,
    },
    /// Forget resources (every instance each address covers); the guests keep running.
    Rm {
        /// Addresses in state.
        #[arg(required = true)]
        addresses: Vec<String>,
        /// Say what would be forgotten, change nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        project: ProjectArgs,
    },
}

/// Where the state and the locks are: this machine's store, or an atoll server's API.
#[derive(Debug, Clone, clap::Args)]
pub struct RemoteArgs {
    /// Use the state and locks of the atoll server at URL through its API (the token is read
    /// from ATOLL_REMOTE_TOKEN, the server's api.token); give --repo as the server names it.
    #[arg(long, env = "ATOLL_REMOTE", value_name = "URL")]
    pub remote: Option<String>,
    /// With --remote: how long to wait for the project's lock while a pull request holds it
    /// (`90s`, `5m`, `1h`; `0` does not wait).
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_wait)]
    pub lock_timeout: std::time::Duration,
}

impl RemoteArgs {
    /// This machine's store (commands without `--remote`).
    pub fn none() -> Self {
        Self {
            remote: None,
            lock_timeout: std::time::Duration::ZERO,
        }
    }
}

/// `90s`, `5m`, `1h` or plain seconds.
fn parse_wait(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, "s"),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a duration: write 90s, 5m or 1h"))?;
    let seconds = match unit {
        "s" => n,
        "m" => n.saturating_mul(60),
        "h" => n.saturating_mul(3600),
        _ => return Err(format!("{text:?} is not a duration: write 90s, 5m or 1h")),
    };
    Ok(std::time::Duration::from_secs(seconds))
}

/// `atoll doctor`.
#[derive(Debug, Clone, clap::Args)]
pub struct DoctorArgs {
    /// Settings file (YAML, the server's format); else `ATOLL_*` and `PROXMOX_VE_*` variables.
    #[arg(long, env = "ATOLL_CONFIG")]
    pub config: Option<PathBuf>,
}
