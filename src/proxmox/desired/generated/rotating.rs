//! `time_rotating` and `time_sleep` (hashicorp/time, `internal/provider/resource_time_rotating.go`
//! and `resource_time_sleep.go`): the two time resources whose effect depends on when atoll
//! runs. A rotating timestamp is due once its `rotation_rfc3339` has passed when atoll plans
//! (the provider's `Read` then removes it from state, so Terraform makes it anew); a sleep makes
//! the apply wait, on the runtime's timer, after creating it and before destroying it.

use std::collections::BTreeMap;
use std::time::Duration as StdDuration;

use time::{Duration, OffsetDateTime};

use super::time::{add, add_date, at_least_one, format, now, parse, parts, values, whole};

pub(super) const ROTATING_COMPUTED: &[&str] = &[
    "day",
    "hour",
    "id",
    "minute",
    "month",
    "rfc3339",
    "rotation_rfc3339",
    "second",
    "unix",
    "year",
];

/// What a changed rotation computes again from the stored base, as the provider's `Update`
/// does; `rfc3339` and `id` (the base) stay.
pub(super) const ROTATING_FOLLOWS_UPDATE: &[&str] = &[
    "day",
    "hour",
    "minute",
    "month",
    "rotation_rfc3339",
    "second",
    "unix",
    "year",
];

pub(super) const SLEEP_COMPUTED: &[&str] = &["id"];

const ROTATIONS: [&str; 6] = [
    "rotation_minutes",
    "rotation_hours",
    "rotation_days",
    "rotation_months",
    "rotation_years",
    "rotation_rfc3339",
];

/// The provider's `AtLeastOneOf` on each resource, and its timestamps' form.
pub(super) fn check(
    resource_type: &str,
    arguments: &BTreeMap<String, String>,
    pending: &[String],
) -> Result<(), String> {
    if resource_type == "time_sleep" {
        return at_least_one(&["create_duration", "destroy_duration"], arguments, pending);
    }
    at_least_one(&ROTATIONS, arguments, pending)?;
    for name in ["rfc3339", "rotation_rfc3339"] {
        if let Some(text) = arguments.get(name) {
            parse(name, text)?;
        }
    }
    for name in &ROTATIONS[..5] {
        whole(arguments, name)?;
    }
    Ok(())
}

/// `time_rotating`: the base (`rfc3339`, or now) and its rotation time. As the provider's
/// `setRotationValues`, each rotation argument set replaces the one before, in its order (days,
/// hours, minutes, months, `rotation_rfc3339`, years); the parts are of the rotation time, `id`
/// and `rfc3339` the base.
pub(super) fn rotating(
    arguments: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, String> {
    let base = match arguments.get("rfc3339") {
        Some(text) => parse("rfc3339", text)?,
        None => now(),
    };
    let n = |name| whole(arguments, name).map(|n| n.filter(|n| *n != 0));
    let mut rotation = None;
    if let Some(days) = n("rotation_days")? {
        rotation = Some(add_date(base, 0, 0, days)?);
    }
    if let Some(hours) = n("rotation_hours")? {
        rotation = Some(add(base, hours, Duration::HOUR)?);
    }
    if let Some(minutes) = n("rotation_minutes")? {
        rotation = Some(add(base, minutes, Duration::MINUTE)?);
    }
    if let Some(months) = n("rotation_months")? {
        rotation = Some(add_date(base, 0, months, 0)?);
    }
    if let Some(text) = arguments.get("rotation_rfc3339") {
        rotation = Some(parse("rotation_rfc3339", text)?);
    }
    if let Some(years) = n("rotation_years")? {
        rotation = Some(add_date(base, years, 0, 0)?);
    }
    let rotation = rotation.ok_or("no rotation argument is set")?;
    let mut pairs = parts(rotation);
    pairs.extend([
        ("id", format(base)?),
        ("rfc3339", format(base)?),
        ("rotation_rfc3339", format(rotation)?),
    ]);
    Ok(values(pairs))
}

/// Why a stored `time_rotating` is due for replacement when atoll plans at `now`: its rotation
/// time has passed (the provider's `Read` removes it from state, and `ReplaceIfOutdated`).
pub(super) fn due(values: &BTreeMap<&str, &str>, now: OffsetDateTime) -> Option<String> {
    let rotation = parse("rotation_rfc3339", values.get("rotation_rfc3339")?).ok()?;
    (now > rotation).then(|| {
        format!(
            "its rotation time {} has passed: it rotates now, as the time provider makes it anew \
             once the rotation time is past when Terraform runs",
            values.get("rotation_rfc3339").copied().unwrap_or_default()
        )
    })
}

/// `time_sleep`: `id` is when it was made (after its wait).
pub(super) fn sleep() -> Result<BTreeMap<String, String>, String> {
    Ok(values(vec![("id", format(now())?)]))
}

/// How long `create_duration` or `destroy_duration` makes the apply wait (none when unset);
/// the schema has checked its form and bound.
pub(super) fn duration(arguments: &BTreeMap<String, String>, name: &str) -> StdDuration {
    arguments
        .get(name)
        .and_then(|text| tfconfig::schema::sleep_secs(text))
        .map_or(StdDuration::ZERO, StdDuration::from_secs_f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxmox::desired::generated::test_args as args;

    #[test]
    fn the_last_rotation_argument_in_the_providers_order_wins() {
        let v = rotating(&args(&[
            ("rfc3339", "2024-01-31T00:00:00Z"),
            ("rotation_days", "1"),
            ("rotation_months", "1"),
        ]))
        .expect("rotating");
        assert_eq!(v["rotation_rfc3339"], "2024-03-02T00:00:00Z");
        assert_eq!(v["rfc3339"], "2024-01-31T00:00:00Z");
        assert_eq!(v["id"], v["rfc3339"]);
        assert_eq!((v["month"].as_str(), v["day"].as_str()), ("3", "2"));
        assert!(check("time_rotating", &args(&[]), &[]).is_err());
        assert!(check("time_sleep", &args(&[]), &[]).is_err());
    }

    #[test]
    fn a_rotation_is_due_once_its_time_has_passed() {
        let stored = BTreeMap::from([("rotation_rfc3339", "2024-03-02T00:00:00Z")]);
        let before = parse("t", "2024-03-01T23:59:59Z").expect("time");
        let after = parse("t", "2024-03-02T00:00:01Z").expect("time");
        assert!(due(&stored, before).is_none());
        let why = due(&stored, after).expect("due");
        assert!(why.contains("2024-03-02T00:00:00Z has passed"), "{why}");
    }

    #[test]
    fn durations_are_read_as_the_provider_writes_them() {
        let a = args(&[("create_duration", "1.5s"), ("destroy_duration", "250ms")]);
        assert_eq!(
            duration(&a, "create_duration"),
            StdDuration::from_millis(1500)
        );
        assert_eq!(
            duration(&a, "destroy_duration"),
            StdDuration::from_millis(250)
        );
        assert_eq!(duration(&a, "other"), StdDuration::ZERO);
        assert_eq!(tfconfig::schema::sleep_secs("1m30s"), None);
        assert_eq!(tfconfig::schema::sleep_secs("2h"), Some(7200.0));
        assert_eq!(tfconfig::schema::sleep_secs(".5s"), None);
    }
}
