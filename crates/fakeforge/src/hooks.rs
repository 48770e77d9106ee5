//! Signs and sends webhook deliveries with the headers each forge sends, and records them.

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, USER_AGENT};

use super::{FakeError, Shared, lock};
use model::ForgeKind;

/// One webhook the fake sent (or would have sent: no target set).
#[derive(Debug, Clone)]
pub struct Delivery {
    /// `X-GitHub-Event` / `X-Gitea-Event`.
    pub event: String,
    /// `X-Gitea-Event-Type` (Gitea only).
    pub event_type: Option<String>,
    pub delivery_id: String,
    /// The exact bytes sent.
    pub body: Vec<u8>,
    /// Every header sent, lower-case names.
    pub headers: Vec<(String, String)>,
    /// The receiver's HTTP status; `None` when no webhook target is set.
    pub status: Option<u16>,
    /// The receiver's response body.
    pub response: String,
}

/// HMAC-SHA1 hex, for the legacy `X-Hub-Signature` header Gitea still sends.
fn sign_sha1(secret: &str, body: &[u8]) -> String {
    use hmac::{Hmac, Mac};
    match Hmac::<sha1::Sha1>::new_from_slice(secret.as_bytes()) {
        Ok(mut mac) => {
            mac.update(body);
            hex::encode(mac.finalize().into_bytes())
        }
        Err(_) => String::new(),
    }
}

fn headers_for(
    kind: ForgeKind,
    event: &str,
    event_type: Option<&str>,
    id: &str,
    signature: Option<&str>,
) -> Vec<(String, String)> {
    let mut h: Vec<(String, String)> = vec![("content-type".into(), "application/json".into())];
    let mut add = |k: &str, v: &str| h.push((k.to_owned(), v.to_owned()));
    match kind {
        ForgeKind::Github => {
            add("user-agent", "GitHub-Hookshot/fakeforge");
            add("x-github-event", event);
            add("x-github-delivery", id);
            add("x-github-hook-id", "1");
            add("x-github-hook-installation-target-type", "repository");
            if let Some(sig) = signature {
                add("x-hub-signature-256", &format!("sha256={sig}"));
            }
        }
        ForgeKind::Gitea => {
            let kind = event_type.unwrap_or(event);
            add("user-agent", "Go-http-client/1.1");
            for prefix in ["x-gitea", "x-gogs", "x-github", "x-forgejo"] {
                add(&format!("{prefix}-event"), event);
                add(&format!("{prefix}-event-type"), kind);
                add(&format!("{prefix}-delivery"), id);
            }
            let sig = signature.unwrap_or("");
            add("x-gitea-signature", sig);
            add("x-gogs-signature", sig);
            add("x-forgejo-signature", sig);
            add("x-hub-signature-256", &format!("sha256={sig}"));
        }
    }
    h
}

/// Serialises, signs and (when a target is set) sends one delivery; records it either way.
pub(super) async fn deliver(
    shared: &Shared,
    event: &str,
    event_type: Option<&str>,
    payload: &serde_json::Value,
) -> Result<Delivery, FakeError> {
    let body = serde_json::to_vec_pretty(payload).map_err(|e| FakeError::Webhook(e.to_string()))?;
    let id = uuid::Uuid::new_v4().to_string();
    let target = lock(&shared.webhook).clone();
    let signature = target.as_ref().map(|t| sign(&t.secret, &body));
    let mut headers = headers_for(shared.kind, event, event_type, &id, signature.as_deref());
    if shared.kind == ForgeKind::Gitea {
        let sha1 = target
            .as_ref()
            .map(|t| sign_sha1(&t.secret, &body))
            .unwrap_or_default();
        headers.push(("x-hub-signature".to_owned(), format!("sha1={sha1}")));
    }
    let mut delivery = Delivery {
        event: event.to_owned(),
        event_type: event_type.map(str::to_owned),
        delivery_id: id,
        body,
        headers,
        status: None,
        response: String::new(),
    };
    if let Some(target) = target {
        let mut map = HeaderMap::new();
        for (k, v) in &delivery.headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|e| FakeError::Webhook(e.to_string()))?;
            let value = HeaderValue::from_str(v).map_err(|e| FakeError::Webhook(e.to_string()))?;
            map.append(name, value);
        }
        map.entry(CONTENT_TYPE)
            .or_insert(HeaderValue::from_static("application/json"));
        map.entry(USER_AGENT)
            .or_insert(HeaderValue::from_static("fakeforge"));
        let response = shared
            .http
            .post(&target.url)
            .headers(map)
            .body(delivery.body.clone())
            .send()
            .await
            .map_err(|e| FakeError::Webhook(e.without_url().to_string()))?;
        delivery.status = Some(response.status().as_u16());
        delivery.response = response.text().await.unwrap_or_default();
    }
    lock(&shared.deliveries).push(delivery.clone());
    Ok(delivery)
}

/// HMAC-SHA256(`secret`, `body`) as lowercase hex: the signature both forges send (GitHub with a
/// `sha256=` prefix). Written here, apart from atoll's verifier, so the fake checks it.
fn sign(secret: &str, body: &[u8]) -> String {
    use hmac::{Hmac, Mac};
    let Ok(mut mac) = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()) else {
        unreachable!("HMAC-SHA256 accepts keys of any length")
    };
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}
