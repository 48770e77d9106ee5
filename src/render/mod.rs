//! `render` owns all user-facing text. For now: the Terraform-style human plan (with atoll's
//! per-guest disruption lines) and the JSON plan. It must not do I/O; it never sees a
//! sensitive value (the plan holds only markers), and it leaves escaping for Markdown comments
//! to the comment renderer.

mod plan_body;
mod plan_text;

pub use plan_text::plan_text;

use crate::proxmox::plan::Plan;

/// The JSON plan (DESIGN.md "The plan is the truth"), pretty-printed.
pub fn plan_json(plan: &Plan) -> String {
    // A `Plan` holds only strings, numbers, booleans and nulls: serialisation cannot fail.
    serde_json::to_string_pretty(plan)
        .unwrap_or_else(|error| format!("{{\"error\":\"plan could not be serialised: {error}\"}}"))
}
