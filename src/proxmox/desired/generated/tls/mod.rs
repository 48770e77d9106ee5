//! The hashicorp/tls provider's resources, made natively with RustCrypto as the provider makes
//! them with Go's crypto/x509: `tls_private_key` (`key`), and the certificates made from keys,
//! `tls_self_signed_cert` and `tls_locally_signed_cert` (`cert`) and `tls_cert_request`
//! (`request`), from the PEM a configuration gives (`pem`), with the subject and names Go
//! writes (`names`), signed as Go signs (`sign`). A certificate input that cannot be used (a
//! PEM that does not parse, a CA key that is not the CA certificate's) is refused when atoll
//! plans, with the provider's summary ([`Refusal`]). It must not keep a key anywhere but the
//! values it returns, nor read anything but its arguments.

mod cert;
mod key;
mod names;
mod pem;
mod request;
mod sign;
#[cfg(test)]
mod tests;
mod uses;

use std::collections::BTreeMap;

pub(super) use key::{BUDGET, COMPUTED, KeySpec, generate};

/// What a self-signed certificate computes, in name order.
pub(super) const SELF_SIGNED_COMPUTED: &[&str] = &[
    "cert_pem",
    "id",
    "key_algorithm",
    "ready_for_renewal",
    "validity_end_time",
    "validity_start_time",
];

/// What a locally signed certificate computes, in name order.
pub(super) const LOCALLY_SIGNED_COMPUTED: &[&str] = &[
    "ca_key_algorithm",
    "cert_pem",
    "id",
    "ready_for_renewal",
    "validity_end_time",
    "validity_start_time",
];

/// What a certificate request computes, in name order.
pub(super) const REQUEST_COMPUTED: &[&str] = &["cert_request_pem", "id", "key_algorithm"];

/// Why a certificate's arguments cannot make it: the provider's summary ("Failed to parse CA
/// private key PEM") and what went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) summary: &'static str,
    pub(crate) detail: String,
}

impl Refusal {
    pub(crate) fn new(summary: &'static str, detail: impl Into<String>) -> Self {
        Refusal {
            summary,
            detail: detail.into(),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.summary, self.detail)
    }
}

/// Whether the resource type is one of the certificates (`check_certificate` applies).
pub(super) fn is_certificate(resource_type: &str) -> bool {
    matches!(
        resource_type,
        "tls_self_signed_cert" | "tls_cert_request" | "tls_locally_signed_cert"
    )
}

/// The certificate's known arguments checked as its generation will use them, when atoll
/// plans; an argument still unknown (a key made at this apply) is checked at apply.
pub(super) fn check_certificate(
    resource_type: &str,
    arguments: &BTreeMap<String, String>,
) -> Result<(), Refusal> {
    match resource_type {
        "tls_cert_request" => request::check(arguments),
        _ => cert::check(resource_type, arguments),
    }
}

/// Makes the certificate or request and every computed attribute.
pub(super) fn generate_certificate(
    resource_type: &str,
    arguments: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, String> {
    let made = match resource_type {
        "tls_cert_request" => request::generate(arguments),
        "tls_self_signed_cert" => cert::self_signed(arguments, now()),
        _ => cert::locally_signed(arguments, now()),
    };
    made.map_err(|refusal| refusal.to_string())
}

/// Why a stored certificate is due to be made anew: it is ready for renewal at `now` (the
/// provider's `modifyPlanIfCertificateReadyForRenewal`).
pub(super) fn due(
    values: &BTreeMap<&str, &str>,
    arguments: &BTreeMap<String, String>,
    now: time::OffsetDateTime,
) -> Option<String> {
    cert::due(values, arguments, now)
}

/// Now, in UTC, to the second: a certificate's validity has no finer grain.
fn now() -> time::OffsetDateTime {
    let now = time::OffsetDateTime::now_utc();
    now.replace_nanosecond(0).unwrap_or(now)
}
