//! The command line's own lines: apply progress and result, `state list|show` and `doctor`.
//! Sensitive values are never printed: fingerprints and generated values show as
//! `(sensitive value)`.

use std::fmt::Write as _;

use crate::proxmox::apply::{ApplyEvent, ApplyReport, Outcome};
use crate::proxmox::plan::{StateEntry, StateValue};
use crate::proxmox::state::ProjectState;

const HIDDEN: &str = "(sensitive value)";

/// One progress line per event, on stderr.
pub(super) fn progress(event: &ApplyEvent) {
    match event {
        ApplyEvent::Started { address, step } => eprintln!("{address}: {step} started"),
        ApplyEvent::Done { address, detail } => eprintln!("{address}: done ({detail})"),
        ApplyEvent::Failed { address, error } => eprintln!("{address}: FAILED: {error}"),
    }
}

/// The result of an apply: which resources changed and which did not.
pub(super) fn apply_text(report: &ApplyReport) -> String {
    let mut out = String::from("\n");
    let (mut changed, mut failed, mut skipped) = (0, 0, 0);
    for result in &report.results {
        let line = match &result.outcome {
            Outcome::Changed {
                detail,
                left_pending,
            } => {
                changed += 1;
                let mut line = format!("  ok      {}: {detail}", result.address);
                if !left_pending.is_empty() {
                    let _ = write!(line, " [pending: {}]", left_pending.join(", "));
                }
                line
            }
            Outcome::Failed {
                error,
                changed: partly,
            } => {
                failed += 1;
                let state = if *partly {
                    "partly changed"
                } else {
                    "not changed"
                };
                format!("  FAILED  {} ({state}): {error}", result.address)
            }
            Outcome::Skipped { reason } => {
                skipped += 1;
                format!("  skipped {}: {reason}", result.address)
            }
        };
        out.push_str(&line);
        out.push('\n');
    }
    let verdict = if failed + skipped == 0 {
        "Apply complete!"
    } else {
        "Apply finished with errors."
    };
    let _ = writeln!(
        out,
        "\n{verdict} Resources: {changed} changed, {failed} failed, {skipped} not attempted."
    );
    out
}

/// `atoll state list`: one line per resource.
pub(super) fn state_list(state: &ProjectState) -> String {
    let mut out = String::new();
    for entry in &state.entries {
        let line = match entry {
            StateEntry::Guest {
                address,
                node,
                vm_id,
                ..
            } => format!("{address}\tnode={node}\tvm_id={vm_id}"),
            StateEntry::Download {
                address,
                node,
                volid,
                ..
            } => format!("{address}\tnode={node}\tvolid={volid}"),
            StateEntry::Object { address, id, .. } => format!("{address}\t{}", id.describe()),
        };
        out.push_str(&line);
        out.push('\n');
    }
    for generated in &state.generated {
        let _ = writeln!(out, "{}\tgenerated", generated.address);
    }
    out
}

/// `atoll state show ADDR`.
pub(super) fn state_show(state: &ProjectState, address: &str) -> Option<String> {
    let mut out = String::new();
    if let Some(entry) = state.entries.iter().find(|e| e.address() == address) {
        let _ = writeln!(out, "# {address}");
        match entry {
            StateEntry::Guest {
                resource_type,
                node,
                vm_id,
                attributes,
                ..
            } => {
                let _ = writeln!(
                    out,
                    "type   = {resource_type}\nnode   = {node}\nvm_id  = {vm_id}"
                );
                for (key, value) in attributes {
                    let shown = match value {
                        StateValue::Plain(text) => format!("{text:?}"),
                        StateValue::Fingerprint(_) => HIDDEN.to_owned(),
                    };
                    let _ = writeln!(out, "config.{key} = {shown}");
                }
            }
            StateEntry::Download {
                resource_type,
                node,
                volid,
                arguments,
                ..
            } => {
                let _ = writeln!(
                    out,
                    "type   = {resource_type}\nnode   = {node}\nvolid  = {volid}"
                );
                for (key, value) in arguments {
                    let _ = writeln!(out, "{key} = {value:?}");
                }
            }
            StateEntry::Object {
                resource_type,
                id,
                fields,
                entries,
                ..
            } => {
                let _ = writeln!(
                    out,
                    "type   = {resource_type}\nobject = {}\npath   = {}",
                    id.describe(),
                    id.path()
                );
                for (key, value) in fields {
                    let _ = writeln!(out, "{key} = {value:?}");
                }
                for (i, entry) in entries.iter().flatten().enumerate() {
                    let _ = writeln!(out, "entry[{i}] = {entry:?}");
                }
                // what Proxmox VE made for it (an API token's value): kept, never shown
                let made = state.object_values.iter().filter(|v| v.address == address);
                for key in made.flat_map(|v| v.values.0.keys()) {
                    let _ = writeln!(out, "{key} = {HIDDEN}");
                }
            }
        }
        return Some(out);
    }
    let generated = state.generated.iter().find(|g| g.address == address)?;
    let _ = writeln!(out, "# {address}\ntype   = {}", generated.resource_type);
    for (key, value) in &generated.arguments {
        match crate::proxmox::desired::shown_argument(&generated.resource_type, key, value) {
            Some(_) if !crate::proxmox::desired::is_stored_value(&generated.resource_type, key) => {
                let _ = writeln!(out, "{key} = {value:?}");
            }
            Some(shown) => {
                let _ = writeln!(out, "{key} = {shown}");
            }
            None => {
                let _ = writeln!(out, "{key} = {HIDDEN}");
            }
        }
    }
    for key in generated.values.0.keys() {
        let _ = writeln!(out, "{key} = {HIDDEN}");
    }
    Some(out)
}

/// `atoll doctor`: one line per check in the apply result's columns, the fix under a failure,
/// and a verdict.
pub(super) fn doctor_text(report: &crate::doctor::Report) -> String {
    use crate::doctor::Verdict;
    let mut out = String::new();
    let (mut failed, mut warned) = (0, 0);
    for line in &report.lines {
        let check = line.check;
        match &line.verdict {
            Verdict::Ok(text) => {
                let _ = writeln!(out, "  ok      {check}: {text}");
            }
            Verdict::Warn(text) => {
                warned += 1;
                let _ = writeln!(out, "  warn    {check}: {text}");
            }
            Verdict::Skipped(text) => {
                let _ = writeln!(out, "  skipped {check}: {text}");
            }
            Verdict::Fail(failure) => {
                failed += 1;
                let _ = writeln!(out, "  FAILED  {check}: {}", failure.problem);
                let _ = writeln!(out, "          fix: {}", failure.fix);
            }
        }
    }
    let verdict = if failed == 0 {
        "Everything atoll needs holds.".to_owned()
    } else {
        format!("{failed} problem(s) to fix; exit code 1.")
    };
    let warnings = match warned {
        0 => String::new(),
        1 => " 1 warning.".to_owned(),
        n => format!(" {n} warnings."),
    };
    let _ = writeln!(out, "\n{verdict}{warnings}");
    out
}

/// `atoll state versions`: one line per version, newest first.
pub(super) fn state_versions(versions: &[crate::store::StateVersion]) -> String {
    let mut out = String::new();
    for v in versions {
        let when = v
            .created_at
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        let job = v.meta.job.map(|j| format!("\tjob={j}")).unwrap_or_default();
        let commit = v
            .meta
            .commit
            .as_deref()
            .map(|c| format!("\tcommit={}", c.get(..12).unwrap_or(c)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{}\t{when}\t{}\tby {}\t{} resources{job}{commit}",
            v.version,
            v.meta.reason.as_str(),
            v.meta.actor,
            v.resources
        );
    }
    out
}
