//! `render` owns all user-facing text: the Terraform-style human plan (with atoll's per-guest
//! disruption lines), the JSON plan, and PR comments (`pr`: tera templates under
//! `templates/comments/`, embedded in the binary, with `comment`'s escaping, folding and
//! splitting as filters). It must not do I/O, and it never sees a sensitive value (the plan
//! holds only markers).

pub mod comment;
pub mod notice;
mod outputs;
mod plan_body;
mod plan_text;
pub mod policies;
pub mod pr;
pub mod state;
mod template;

pub use outputs::{
    checks_after_apply, output_value_text, outputs_json, outputs_text, outputs_text_capped,
};
pub use plan_text::{plan_output, plan_summary, plan_text};

use crate::proxmox::plan::Plan;

/// The JSON plan (DESIGN.md "The plan is the truth"), pretty-printed.
pub fn plan_json(plan: &Plan) -> String {
    // A `Plan` holds only strings, numbers, booleans and nulls: serialisation cannot fail.
    serde_json::to_string_pretty(plan)
        .unwrap_or_else(|error| format!("{{\"error\":\"plan could not be serialised: {error}\"}}"))
}
