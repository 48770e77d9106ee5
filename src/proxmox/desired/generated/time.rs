//! `time_static` (hashicorp/time, `internal/provider/resource_time_static.go`): a UTC
//! timestamp taken once, at apply, or the `rfc3339` the configuration gives; stored in state and
//! unchanged until a `triggers` value (or `rfc3339`) changes.

use std::collections::BTreeMap;

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

pub(super) const COMPUTED: &[&str] = &[
    "day", "hour", "id", "minute", "month", "rfc3339", "second", "unix", "year",
];

/// `rfc3339`, when given, must be an RFC 3339 timestamp.
pub(super) fn check(arguments: &BTreeMap<String, String>) -> Result<(), String> {
    match arguments.get("rfc3339") {
        Some(text) => parse(text).map(|_| ()),
        None => Ok(()),
    }
}

fn parse(text: &str) -> Result<OffsetDateTime, String> {
    OffsetDateTime::parse(text, &Rfc3339).map_err(|_| {
        format!("rfc3339 {text:?} is not an RFC 3339 timestamp (for example 2020-02-12T06:36:13Z)")
    })
}

/// The timestamp's parts, as the provider sets them (`id` is the timestamp).
pub(super) fn generate(
    arguments: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, String> {
    let (at, text) = match arguments.get("rfc3339") {
        Some(text) => (parse(text)?, text.clone()),
        None => {
            // Go's `time.Now().UTC().Format(time.RFC3339)`: whole seconds, `Z`.
            let now = OffsetDateTime::now_utc()
                .replace_nanosecond(0)
                .unwrap_or_else(|_| OffsetDateTime::now_utc());
            let text = now
                .format(&Rfc3339)
                .map_err(|e| format!("formatting the time failed: {e}"))?;
            (now, text)
        }
    };
    // The parts are of the timestamp as written (Go's `time.Parse` keeps its offset).
    Ok([
        ("year", at.year().to_string()),
        ("month", u8::from(at.month()).to_string()),
        ("day", at.day().to_string()),
        ("hour", at.hour().to_string()),
        ("minute", at.minute().to_string()),
        ("second", at.second().to_string()),
        ("unix", at.unix_timestamp().to_string()),
        ("id", text.clone()),
        ("rfc3339", text),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_timestamp_is_split_into_its_parts() {
        let args = BTreeMap::from([("rfc3339".to_owned(), "2020-02-12T06:36:13Z".to_owned())]);
        let v = generate(&args).expect("time");
        assert_eq!(
            (v["year"].as_str(), v["month"].as_str(), v["day"].as_str()),
            ("2020", "2", "12")
        );
        assert_eq!(
            (
                v["hour"].as_str(),
                v["minute"].as_str(),
                v["second"].as_str()
            ),
            ("6", "36", "13")
        );
        assert_eq!(v["unix"], "1581489373");
        assert_eq!(v["id"], "2020-02-12T06:36:13Z");
        assert!(
            check(&BTreeMap::from([(
                "rfc3339".to_owned(),
                "yesterday".to_owned()
            )]))
            .is_err()
        );
    }

    #[test]
    fn now_is_taken_to_the_second_in_utc() {
        let v = generate(&BTreeMap::new()).expect("time");
        assert!(
            v["rfc3339"].ends_with('Z') && v["rfc3339"].len() == 20,
            "{}",
            v["rfc3339"]
        );
    }
}
