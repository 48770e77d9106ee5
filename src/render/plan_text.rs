//! The Terraform-style human plan (reference/hcl.md section 4) with atoll's additions: one
//! line per guest naming the disruption, `# BLOCKED: ...` lines from the guard, a drift
//! section, and the summary `Plan: 1 to add, 2 to change, 0 to destroy. 1 restart. 0 blocked.`

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::plan_body::{Mode, render_body, value};
use crate::proxmox::plan::{Action, Effect, Plan, Power, ResourceChange};

/// The whole human plan.
pub fn plan_text(plan: &Plan) -> String {
    let mut out = String::new();
    render_drift(&mut out, plan);
    if plan.is_empty() {
        let _ = write!(out, "\n{NO_CHANGES}\n\n");
        out.push_str(
            "atoll has compared your Proxmox VE guests against your configuration and found\n\
             no differences, so no changes are needed.\n",
        );
        return out;
    }
    render_legend(&mut out, plan);
    out.push_str("\natoll will perform the following actions:\n");
    for change in plan.resource_changes.iter().filter(|c| c.does_something()) {
        out.push('\n');
        render_resource(&mut out, change);
    }
    let _ = writeln!(out, "\n{}", plan_summary(plan));
    out
}

const NO_CHANGES: &str = "No changes. Your infrastructure matches the configuration.";

/// The plan as `atoll plan` prints it and a PR comment shows it: the human plan, then the
/// configuration's warnings as Terraform prints them after its plan.
pub fn plan_output(plan: &Plan, warnings: &[String]) -> String {
    let mut out = plan_text(plan);
    for warning in warnings {
        out.push('\n');
        out.push_str(warning);
        if !warning.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// The plan's one-line summary, the last line of [`plan_text`]: `No changes. ...` or
/// `Plan: 1 to add, 2 to change, 0 to destroy. 1 restart. 0 blocked.`
pub fn plan_summary(plan: &Plan) -> String {
    if plan.is_empty() {
        return NO_CHANGES.to_owned();
    }
    let s = plan.summary;
    let restarts = if s.restart == 1 {
        "restart"
    } else {
        "restarts"
    };
    // Terraform names imports first, and only when there are some
    let imports = if s.import > 0 {
        format!("{} to import, ", s.import)
    } else {
        String::new()
    };
    format!(
        "Plan: {imports}{} to add, {} to change, {} to destroy. {} {restarts}. {} blocked.",
        s.add, s.change, s.destroy, s.restart, s.blocked
    )
}

fn render_legend(out: &mut String, plan: &Plan) {
    let present: BTreeSet<&str> = plan
        .resource_changes
        .iter()
        .map(|c| match c.actions.as_slice() {
            [Action::Create] => "create",
            [Action::Update] => "update",
            [Action::Delete] => "delete",
            [Action::Delete, Action::Create] => "replace",
            _ => "",
        })
        .collect();
    if present.iter().all(|a| a.is_empty()) {
        // imports alone: no symbol to explain
        return;
    }
    out.push_str(
        "\natoll compared your configuration with the Proxmox VE cluster and made this\n\
         plan. Resource actions are indicated with the following symbols:\n",
    );
    let legend = [
        ("create", "  + create"),
        ("update", "  ~ update in-place"),
        ("delete", "  - destroy"),
        ("replace", "-/+ destroy and then create replacement"),
    ];
    for (_, line) in legend.into_iter().filter(|(a, _)| present.contains(a)) {
        let _ = writeln!(out, "{line}");
    }
}

/// `module.a.TYPE.NAME["key"]` -> (`TYPE`, `NAME`).
pub(crate) fn type_and_name(address: &str) -> (String, String) {
    let mut segments = Vec::new();
    let (mut current, mut depth, mut quoted) = (String::new(), 0usize, false);
    for c in address.chars() {
        match c {
            '"' if depth > 0 => quoted = !quoted,
            '[' if !quoted => depth += 1,
            ']' if !quoted => depth = depth.saturating_sub(1),
            '.' if depth == 0 && !quoted => {
                segments.push(std::mem::take(&mut current));
                continue;
            }
            _ if depth > 0 => continue,
            _ => {}
        }
        if depth == 0 && c != ']' {
            current.push(c);
        }
    }
    segments.push(current);
    let name = segments.pop().unwrap_or_default();
    (segments.pop().unwrap_or_default(), name)
}

fn render_resource(out: &mut String, change: &ResourceChange) {
    let address = &change.address;
    let (symbol, comment, mode) = match change.actions.as_slice() {
        [Action::Create] => ("  +", "will be created", Mode::Create),
        [Action::Delete] => ("  -", "will be destroyed", Mode::Delete),
        [Action::Delete, Action::Create] => ("-/+", "must be replaced", Mode::Update),
        [Action::NoOp] if change.forget => (
            " .",
            "will no longer be managed by atoll, but will not be destroyed",
            Mode::Update,
        ),
        [Action::NoOp] if change.importing.is_none() => ("   ", "", Mode::Update),
        [Action::NoOp] => ("   ", "will be imported", Mode::Update),
        _ => ("  ~", "will be updated in-place", Mode::Update),
    };
    // Terraform's words for a move: alone, or under another action's header
    match change.previous_address.as_deref() {
        Some(from) if comment.is_empty() => {
            let _ = writeln!(out, "  # {from} has moved to {address}");
        }
        Some(from) => {
            let _ = writeln!(out, "  # {address} {comment}");
            let _ = writeln!(out, "  # (moved from {from})");
        }
        None if change.forget => {
            let _ = writeln!(out, " # {address} {comment}");
            out.push_str(" # (destroy = false is set in the configuration)\n");
        }
        None => {
            let _ = writeln!(out, "  # {address} {comment}");
        }
    }
    if let Some(importing) = change.importing.as_ref().filter(|_| !change.is_no_op()) {
        let _ = writeln!(
            out,
            "  # (imported from {})",
            value(&importing.id.clone().into())
        );
    }
    if mode == Mode::Delete && change.kind.is_some() {
        out.push_str("  # (because it is not in the configuration)\n");
    }
    for line in guest_lines(change) {
        let _ = writeln!(out, "  # {line}");
    }
    let (resource_type, name) = type_and_name(address);
    let _ = writeln!(out, "{symbol} resource \"{resource_type}\" \"{name}\" {{");
    let id = change
        .vm_id
        .filter(|_| mode != Mode::Create)
        .map(|id| id.to_string())
        .or_else(|| change.importing.as_ref().map(|i| i.id.clone()));
    render_body(out, &change.attributes, mode, id.as_deref());
    out.push_str("    }\n");
}

fn joined(paths: &[&str]) -> String {
    paths.join(", ")
}

/// atoll's lines under the header comment: guard verdict, the change's notes, then what happens
/// to the guest.
fn guest_lines(change: &ResourceChange) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(blocked) = &change.blocked {
        lines.push(format!("BLOCKED: {}", blocked.reason));
    }
    lines.extend(change.notes.iter().map(|note| format!("({note})")));
    if let Some(object) = &change.object {
        if object.kind == crate::proxmox::types::ObjectKind::Pool {
            return lines;
        }
        if object.is_access() {
            if change.actions == [Action::Update] {
                lines.push("(applied at once)".to_owned());
            }
            return lines;
        }
        let dropping = change.paths_with(Effect::LinkReset);
        if !dropping.is_empty() {
            lines.push(format!(
                "(can drop traffic that flows today: {})",
                joined(&dropping)
            ));
        } else if change.actions == [Action::Update] {
            lines.push("(applied at once; drops nothing that flows today)".to_owned());
        }
        return lines;
    }
    if change.kind.is_none() || change.actions != [Action::Update] {
        return lines;
    }
    let power = |after: bool| {
        change
            .attributes
            .iter()
            .any(|a| a.path == "started" && a.after == serde_json::Value::Bool(after))
    };
    if power(false) {
        lines.push("(guest will be stopped)".to_owned());
    }
    let restart = change.paths_with(Effect::Restart);
    let restart: Vec<&str> = restart.into_iter().filter(|p| *p != "started").collect();
    if !restart.is_empty() {
        lines.push(format!("(guest will be restarted: {})", joined(&restart)));
    }
    let links: BTreeSet<&str> = change
        .attributes
        .iter()
        .filter(|a| a.effect == Some(Effect::LinkReset))
        .map(|a| a.pve_key.as_str())
        .collect();
    if !links.is_empty() {
        let links: Vec<&str> = links.into_iter().collect();
        lines.push(format!("(network link will be reset: {})", joined(&links)));
    }
    let deferred = change.paths_with(Effect::Deferred);
    if change.power == Some(Power::Stopped) {
        lines.push("(guest is stopped: changes take effect when it next starts)".to_owned());
    } else if !deferred.is_empty() {
        lines.push(format!(
            "(takes effect at the guest's next restart: {})",
            joined(&deferred)
        ));
    }
    if power(true) {
        lines.push("(guest will be started)".to_owned());
    }
    if change.disruption == Some(Effect::Live) && !power(true) {
        lines.push("(applied live, no restart)".to_owned());
    }
    lines
}

fn render_drift(out: &mut String, plan: &Plan) {
    let drifted: Vec<&ResourceChange> = plan
        .resource_changes
        .iter()
        .filter(|c| !c.drift.is_empty())
        .collect();
    if drifted.is_empty() {
        return;
    }
    out.push_str("\nNote: Objects have changed outside of atoll\n");
    for change in drifted {
        let _ = writeln!(out, "\n  # {}:", change.address);
        for note in &change.drift.notes {
            let _ = writeln!(out, "  #   {note}");
        }
        for d in &change.drift.changed_outside {
            let (state, live) = (value(&d.state), value(&d.live));
            let _ = writeln!(
                out,
                "  #   {} changed outside atoll: {state} -> {live}",
                d.path
            );
        }
        for p in &change.drift.pending {
            let queued = match (p.delete, p.sensitive) {
                (true, _) => "delete".to_owned(),
                (false, true) => "(sensitive value)".to_owned(),
                (false, false) => value(&p.pending),
            };
            let _ = writeln!(
                out,
                "  #   {} already pending on the guest ({queued}); a restart applies it",
                p.path
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::type_and_name;

    #[test]
    fn resource_type_and_name_come_from_the_address() {
        let address = "module.dev[\"a.b\"].proxmox_virtual_environment_container.lxc[\"x.y\"]";
        let (t, n) = type_and_name(address);
        assert_eq!(
            (t.as_str(), n.as_str()),
            ("proxmox_virtual_environment_container", "lxc")
        );
    }
}
