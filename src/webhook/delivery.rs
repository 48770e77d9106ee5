//! Reads a delivery's headers: which forge sent it, its delivery id, its event names and its
//! signature. Gitea and Forgejo also send GitHub's headers, so theirs are checked first.

use axum::http::HeaderMap;

use model::ForgeKind;

use super::WebhookError;

/// Longest delivery id accepted (forges send UUIDs).
const MAX_DELIVERY_ID: usize = 128;

/// The parts of a delivery's headers the intake needs.
#[derive(Debug)]
pub(super) struct DeliveryHeaders<'h> {
    pub(super) forge: ForgeKind,
    /// `forgejo` when Forgejo headers were seen, for logs.
    pub(super) flavour: &'static str,
    pub(super) delivery_id: &'h str,
    pub(super) event: &'h str,
    pub(super) event_type: Option<&'h str>,
    /// Hex HMAC; `None` when absent or empty (Gitea sends empty headers without a secret).
    pub(super) signature: Option<&'h str>,
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// Whether the content type is JSON (`application/json`, parameters allowed).
pub(super) fn is_json(headers: &HeaderMap) -> bool {
    header(headers, "content-type").is_some_and(|ct| {
        let essence = ct.split(';').next().unwrap_or("").trim();
        essence.eq_ignore_ascii_case("application/json")
    })
}

pub(super) fn read(headers: &HeaderMap) -> Result<DeliveryHeaders<'_>, WebhookError> {
    let forgejo = [
        "x-forgejo-event",
        "x-forgejo-event-type",
        "x-forgejo-delivery",
    ]
    .iter()
    .any(|h| headers.contains_key(*h));
    let gitea = ["x-gitea-event", "x-gitea-event-type", "x-gitea-delivery"]
        .iter()
        .any(|h| headers.contains_key(*h));
    let (forge, flavour, prefix) = if forgejo {
        (ForgeKind::Gitea, "forgejo", "x-forgejo-")
    } else if gitea {
        (ForgeKind::Gitea, "gitea", "x-gitea-")
    } else if headers.contains_key("x-github-event") {
        (ForgeKind::Github, "github", "x-github-")
    } else {
        return Err(WebhookError::UnknownForge);
    };
    let required = |suffix: &str| {
        let name = format!("{prefix}{suffix}");
        header(headers, &name).ok_or(WebhookError::MissingHeader(name))
    };
    let delivery_id = required("delivery")?;
    if delivery_id.len() > MAX_DELIVERY_ID {
        return Err(WebhookError::BadHeader(format!(
            "{prefix}delivery is too long"
        )));
    }
    let event = required("event")?;
    let event_type = match forge {
        ForgeKind::Gitea => header(headers, &format!("{prefix}event-type")),
        ForgeKind::Github => None,
    };
    let signature =
        match (forge, forgejo) {
            // Only the SHA-256 header: never the legacy SHA-1 `X-Hub-Signature`.
            (ForgeKind::Github, _) => header(headers, "x-hub-signature-256")
                .map(|s| s.strip_prefix("sha256=").unwrap_or("-")),
            (ForgeKind::Gitea, true) => header(headers, "x-forgejo-signature")
                .or_else(|| header(headers, "x-gitea-signature")),
            (ForgeKind::Gitea, false) => header(headers, "x-gitea-signature"),
        };
    let signature = signature.filter(|s| !s.is_empty());
    Ok(DeliveryHeaders {
        forge,
        flavour,
        delivery_id,
        event,
        event_type,
        signature,
    })
}
