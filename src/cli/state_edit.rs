//! `atoll state mv SOURCE DESTINATION` and `atoll state rm ADDRESS...`: edits of the
//! project's state alone, with `--dry-run`. A move follows a `moved` block's rules and is one
//! store transaction; a remove forgets what each address covers, as `atlantis state rm` does.
//! Nothing on the cluster changes; the next plan shows what would.

use std::fmt::Write as _;

use anyhow::bail;

use crate::proxmox::engine::renames_for;
use crate::proxmox::state::StateHandle;

/// Renames in state; the text `atoll` prints, Terraform's words.
pub(super) async fn mv(
    state: &StateHandle,
    source: &str,
    destination: &str,
    dry_run: bool,
) -> anyhow::Result<String> {
    for address in [source, destination] {
        model::ResourceAddress::parse(address)?;
    }
    let now = state.load().await?;
    let renames = renames_for(source, destination, &now).map_err(anyhow::Error::msg)?;
    let mut out = String::new();
    let verb = if dry_run { "Would move" } else { "Move" };
    for (from, to) in &renames {
        let _ = writeln!(out, "{verb} {from:?} to {to:?}");
    }
    if !dry_run {
        state.rename(&renames).await?;
        let _ = writeln!(out, "Successfully moved {} object(s).", renames.len());
    }
    Ok(out)
}

/// Forgets every instance each address covers; all addresses must match something.
pub(super) async fn rm(
    state: &StateHandle,
    addresses: &[String],
    dry_run: bool,
) -> anyhow::Result<String> {
    let parsed = addresses
        .iter()
        .map(|a| model::ResourceAddress::parse(a))
        .collect::<Result<Vec<_>, _>>()?;
    let now = state.load().await?;
    let mut removed: Vec<(&str, bool)> = Vec::new();
    for address in &parsed {
        let found = now.covered(|a| address.covers(a));
        if found.is_empty() {
            bail!(
                "Error: Invalid target address\n\nNo matching objects found for {} in the state \
                 of {} (workspace {}). To view the available instances, use \"atoll state list\".",
                address.as_str(),
                state.scope().project_dir,
                state.scope().workspace
            );
        }
        for hit in found {
            if !removed.contains(&hit) {
                removed.push(hit);
            }
        }
    }
    let mut out = String::new();
    let verb = if dry_run { "Would remove" } else { "Removed" };
    for (address, _) in &removed {
        let _ = writeln!(out, "{verb} {address}");
        if !dry_run {
            state.forget(address).await?;
        }
    }
    if !dry_run {
        let _ = writeln!(
            out,
            "Successfully removed {} resource instance(s).",
            removed.len()
        );
        let guests = removed.iter().filter(|(_, guest)| *guest).count();
        if guests > 0 {
            let _ = writeln!(
                out,
                "{guests} guest(s) keep running on the cluster; atoll no longer manages them."
            );
        }
    }
    Ok(out)
}
