//! The tera engine for PR comments: the templates under `templates/comments/`, embedded in the
//! binary, rendered with Markdown escaping on by default.
//!
//! Comment templates are Markdown, not HTML, so tera's HTML autoescaping would be wrong for
//! them. Instead this engine turns autoescaping on for `.md` templates with
//! [`escape`](super::comment::escape) as the escape function: every `{{ value }}` is made inert
//! for Markdown (no HTML, no mentions, no links) unless a template says otherwise, deliberately,
//! with one of these filters:
//!
//! - `code(lang="diff", summary="Show Output")`: a fenced block, folded into `<details>` above
//!   [`FOLD_ABOVE_LINES`](super::comment::FOLD_ABOVE_LINES) lines;
//! - `fenced`: text for inside a fence the template writes itself;
//! - `inline`: text for inside an inline code span (backticks cannot end it);
//! - `safe`: atoll's own Markdown (closing lines, next steps), never user text.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde::Serialize;
use tera::{Context, Filter, Tera, Value};

use super::comment::{code_block, code_text, escape};

/// Every comment template, by name (file name under `templates/comments/`).
pub(super) const TEMPLATES: &[(&str, &str)] = &[
    (
        "apply_interrupted.md",
        include_str!("../../templates/comments/apply_interrupted.md"),
    ),
    (
        "unlock_announcement.md",
        include_str!("../../templates/comments/unlock_announcement.md"),
    ),
    ("plan.md", include_str!("../../templates/comments/plan.md")),
    (
        "plan_unmet_requirements.md",
        include_str!("../../templates/comments/plan_unmet_requirements.md"),
    ),
    (
        "apply_skipped.md",
        include_str!("../../templates/comments/apply_skipped.md"),
    ),
    (
        "automerge.md",
        include_str!("../../templates/comments/automerge.md"),
    ),
    (
        "policy_check.md",
        include_str!("../../templates/comments/policy_check.md"),
    ),
    (
        "approve_policies.md",
        include_str!("../../templates/comments/approve_policies.md"),
    ),
    (
        "plan_none.md",
        include_str!("../../templates/comments/plan_none.md"),
    ),
    (
        "lock_conflict.md",
        include_str!("../../templates/comments/lock_conflict.md"),
    ),
    (
        "unmet_requirements.md",
        include_str!("../../templates/comments/unmet_requirements.md"),
    ),
    (
        "stale.md",
        include_str!("../../templates/comments/stale.md"),
    ),
    (
        "error.md",
        include_str!("../../templates/comments/error.md"),
    ),
    (
        "apply_progress.md",
        include_str!("../../templates/comments/apply_progress.md"),
    ),
    (
        "apply_no_permission.md",
        include_str!("../../templates/comments/apply_no_permission.md"),
    ),
    (
        "apply_turned_off.md",
        include_str!("../../templates/comments/apply_turned_off.md"),
    ),
    (
        "apply_no_plan.md",
        include_str!("../../templates/comments/apply_no_plan.md"),
    ),
    (
        "unlock.md",
        include_str!("../../templates/comments/unlock.md"),
    ),
    (
        "verbose_log.md",
        include_str!("../../templates/comments/verbose_log.md"),
    ),
    (
        "cancel.md",
        include_str!("../../templates/comments/cancel.md"),
    ),
    (
        "cancel_no_permission.md",
        include_str!("../../templates/comments/cancel_no_permission.md"),
    ),
    (
        "pr_closed.md",
        include_str!("../../templates/comments/pr_closed.md"),
    ),
    (
        "reply.md",
        include_str!("../../templates/comments/reply.md"),
    ),
    ("help.md", include_str!("../../templates/comments/help.md")),
    (
        "fork_refused.md",
        include_str!("../../templates/comments/fork_refused.md"),
    ),
    (
        "unlock_no_permission.md",
        include_str!("../../templates/comments/unlock_no_permission.md"),
    ),
    (
        "reply_truncated.md",
        include_str!("../../templates/comments/reply_truncated.md"),
    ),
    (
        "apply_coalesced.md",
        include_str!("../../templates/comments/apply_coalesced.md"),
    ),
    (
        "job_gave_up.md",
        include_str!("../../templates/comments/job_gave_up.md"),
    ),
    (
        "version.md",
        include_str!("../../templates/comments/version.md"),
    ),
    (
        "import.md",
        include_str!("../../templates/comments/import.md"),
    ),
    (
        "state_rm.md",
        include_str!("../../templates/comments/state_rm.md"),
    ),
    (
        "import_unmet.md",
        include_str!("../../templates/comments/import_unmet.md"),
    ),
    (
        "state_no_permission.md",
        include_str!("../../templates/comments/state_no_permission.md"),
    ),
];

static ENGINE: LazyLock<Result<Tera, String>> = LazyLock::new(|| engine().map_err(|e| chain(&e)));

fn engine() -> tera::Result<Tera> {
    let mut tera = Tera::default();
    tera.autoescape_on(vec![".md"]);
    tera.set_escape_fn(escape);
    tera.register_filter("code", CodeBlock);
    tera.register_filter("fenced", Fenced);
    tera.register_filter("inline", Inline);
    tera.add_raw_templates(TEMPLATES.iter().copied())?;
    Ok(tera)
}

/// Renders comment template `name` with `view` as its context. The templates are embedded
/// and each one is exercised by the tests, so a failure here is a defect in atoll: it still
/// yields a comment (saying so) rather than no answer at all.
pub(super) fn render(name: &str, view: &impl Serialize) -> String {
    let result = match &*ENGINE {
        Ok(tera) => Context::from_serialize(view)
            .and_then(|ctx| tera.render(name, &ctx))
            .map_err(|e| chain(&e)),
        Err(e) => Err(e.clone()),
    };
    result.unwrap_or_else(|error| {
        format!(
            "**atoll could not render this comment** (template `{name}`): {}\n\nThis is a bug in atoll; please report it.\n",
            escape(&error)
        )
    })
}

/// A tera error with its causes (tera puts the useful part in the source chain).
fn chain(error: &tera::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn text_of<'a>(value: &'a Value, filter: &str) -> tera::Result<&'a str> {
    value
        .as_str()
        .ok_or_else(|| tera::Error::msg(format!("filter `{filter}` expects a string, got {value}")))
}

fn arg<'a>(args: &'a HashMap<String, Value>, name: &str, default: &'a str) -> &'a str {
    args.get(name).and_then(Value::as_str).unwrap_or(default)
}

/// `code(lang=..., summary=...)`: a fenced code block, folded when long.
struct CodeBlock;

impl Filter for CodeBlock {
    fn filter(&self, value: &Value, args: &HashMap<String, Value>) -> tera::Result<Value> {
        let text = text_of(value, "code")?;
        let block = code_block(
            arg(args, "lang", ""),
            text,
            arg(args, "summary", "Show output"),
        );
        Ok(Value::String(block))
    }

    fn is_safe(&self) -> bool {
        true
    }
}

/// `fenced`: text for inside a fence written by the template.
struct Fenced;

impl Filter for Fenced {
    fn filter(&self, value: &Value, _: &HashMap<String, Value>) -> tera::Result<Value> {
        Ok(Value::String(code_text(text_of(value, "fenced")?)))
    }

    fn is_safe(&self) -> bool {
        true
    }
}

/// `inline`: text for inside an inline code span; a backtick would end the span, so it
/// becomes a quote, and `@` cannot mention anyone.
struct Inline;

impl Filter for Inline {
    fn filter(&self, value: &Value, _: &HashMap<String, Value>) -> tera::Result<Value> {
        let text = text_of(value, "inline")?;
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            match c {
                '`' => out.push('\''),
                c if c.is_control() => out.push(' '),
                '@' => out.push_str("@\u{200B}"),
                c => out.push(c),
            }
        }
        Ok(Value::String(out))
    }

    fn is_safe(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_template_parses() {
        if let Err(e) = &*ENGINE {
            panic!("comment templates do not parse: {e}");
        }
    }

    #[test]
    fn values_are_markdown_escaped_unless_a_filter_says_otherwise() {
        #[derive(Serialize)]
        struct View {
            user: &'static str,
        }
        let body = render(
            "apply_no_permission.md",
            &View {
                user: "<b>@root</b>",
            },
        );
        assert!(body.contains("&lt;b&gt;@\u{200B}root&lt;/b&gt;"), "{body}");
    }

    #[test]
    fn a_missing_template_yields_an_explanation_not_a_panic() {
        let body = render("nope.md", &());
        assert!(body.contains("could not render"), "{body}");
    }
}
