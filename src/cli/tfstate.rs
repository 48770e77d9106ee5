//! `atoll state import-terraform` and `atoll state export-terraform`: coming from Terraform and
//! leaving for it. Thin: the file format and the takeover are `proxmox::tfstate`'s.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use super::{ProjectArgs, VarArgs, cli_vars, engine, evaluate_outputs, input, install_modules};
use crate::proxmox::tfstate::{self, MAX_BYTES, export, import};

/// `atoll state import-terraform FILE` or `--from-backend`.
#[derive(Debug, Clone, clap::Args)]
pub struct ImportTerraformArgs {
    /// The state file (what `terraform state pull` prints); `-` reads it from standard input.
    #[arg(required_unless_present = "from_backend")]
    pub file: Option<PathBuf>,
    /// Read the state from the project's `backend "s3"` block instead of a file, with the key
    /// pair and endpoints of atoll's settings (`terraform_state.s3`).
    #[arg(long, conflicts_with = "file")]
    pub from_backend: bool,
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub vars: VarArgs,
}

/// `atoll state export-terraform`.
#[derive(Debug, Clone, clap::Args)]
pub struct ExportTerraformArgs {
    #[command(flatten)]
    pub project: ProjectArgs,
    #[command(flatten)]
    pub vars: VarArgs,
    /// Write the state file here (readable by its owner only); standard output without it.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Reads at most [`MAX_BYTES`] (and one more, to tell a larger file).
fn read_bounded(path: &std::path::Path) -> anyhow::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let limit = (MAX_BYTES + 1) as u64;
    if path.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .take(limit)
            .read_to_end(&mut bytes)
            .context("reading the state file from standard input")?;
    } else {
        std::fs::File::open(path)
            .and_then(|file| file.take(limit).read_to_end(&mut bytes))
            .with_context(|| format!("reading the state file {}", path.display()))?;
    }
    Ok(bytes)
}

pub(super) async fn run_import(args: ImportTerraformArgs) -> anyhow::Result<ExitCode> {
    // A bad file is refused before anything is opened.
    let from_file = match &args.file {
        Some(path) if !args.from_backend => Some(tfstate::parse(&read_bounded(path)?)?),
        _ => None,
    };
    let opened = super::open(&args.project).await?;
    let engine = engine(&opened.settings)?;
    let mut input = input(
        &args.project.dir,
        &args.project.workspace,
        cli_vars(&args.vars)?,
    );
    input.limits = opened.settings.limits.clone();
    install_modules(&opened.settings, &mut input).await?;
    let file = match from_file {
        Some(file) => file,
        None => from_backend(&opened.settings, &input).await?,
    };
    let report = import::take_over(&engine, &opened.state, &input, &file)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    print!("{}", summary(&report));
    if !(report.taken.is_empty() && report.generated.is_empty()) {
        let reason = crate::store::VersionReason::ImportTerraform;
        super::record_change(&opened, &args.project.dir, reason).await;
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads the state where the project's `backend "s3"` block keeps it for the workspace.
async fn from_backend(
    settings: &super::settings::Settings,
    input: &tfconfig::Input,
) -> anyhow::Result<tfstate::TfState> {
    let block = tfconfig::backend(input)
        .map_err(|e| anyhow::anyhow!("the project's configuration cannot be read:\n{e}"))?;
    let resolved = crate::s3::backend::resolve(
        block.as_ref(),
        &input.workspace,
        &settings.terraform_state.s3,
    )
    .map_err(anyhow::Error::msg)?;
    for note in &resolved.notes {
        eprintln!("Note: {note}");
    }
    let bytes =
        crate::s3::get_object(&resolved.location, resolved.credentials.as_ref(), MAX_BYTES).await?;
    eprintln!(
        "Read Terraform's state from {} ({} bytes).",
        resolved.location.describe(),
        bytes.len()
    );
    Ok(tfstate::parse(&bytes)?)
}

fn summary(report: &import::Report) -> String {
    let mut out = String::new();
    for (address, what) in &report.taken {
        out.push_str(&format!("{address}: took over {what}\n"));
    }
    for address in &report.generated {
        out.push_str(&format!(
            "{address}: took over Terraform's generated values\n"
        ));
    }
    for address in &report.kept {
        out.push_str(&format!("{address}: already in atoll's state, kept\n"));
    }
    if !report.left_alone.is_empty() {
        out.push_str("\nLeft alone (atoll does not manage them):\n");
        for (address, why) in &report.left_alone {
            out.push_str(&format!("  {address}: {why}\n"));
        }
    }
    out.push_str(&format!(
        "\nImported {} resources and {} generated values; {} already in state, {} left alone. \
         Nothing on the cluster changed: run `atoll plan` to see what atoll would change.\n",
        report.taken.len(),
        report.generated.len(),
        report.kept.len(),
        report.left_alone.len()
    ));
    out
}

pub(super) async fn run_export(args: ExportTerraformArgs) -> anyhow::Result<ExitCode> {
    let opened = super::open(&args.project).await?;
    let now = opened.state.load().await?;
    let mut input = input(
        &args.project.dir,
        &args.project.workspace,
        cli_vars(&args.vars)?,
    );
    input.limits = opened.settings.limits.clone();
    install_modules(&opened.settings, &mut input).await?;
    let outputs = match evaluate_outputs(&opened.state, &input, &tfconfig::Known::new()).await {
        Ok(outputs) => outputs,
        Err(e) => {
            eprintln!(
                "Warning: the outputs could not be evaluated, so the file has none\n\n{e:#}\n"
            );
            Default::default()
        }
    };
    let file = export::state_file(&now, opened.state.scope(), &outputs);
    let text = format!("{}\n", serde_json::to_string_pretty(&file)?);
    match &args.out {
        Some(path) => {
            write_private(path, text.as_bytes())
                .with_context(|| format!("writing the state file {}", path.display()))?;
            eprintln!(
                "Wrote {} resources to {}; hand it to Terraform with `terraform state push {}`.",
                now.entries.len() + now.generated.len(),
                path.display(),
                path.display()
            );
        }
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// The file holds generated secrets, as Terraform's does: only its owner reads it.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)?.write_all(bytes)
}
