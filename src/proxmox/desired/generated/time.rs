//! The hashicorp/time provider's timestamps (`internal/provider/resource_time_*.go`):
//! `time_static`, a UTC timestamp taken once at apply or the `rfc3339` the configuration gives,
//! and `time_offset`, a base timestamp (now, or `base_rfc3339`) moved by its `offset_*`
//! arguments, Go's `AddDate` and `Add` in the provider's order. Both are stored in state and
//! unchanged until an argument or a `triggers` value changes; `time_rotating` and `time_sleep`
//! ([`super::rotating`]) share the timestamps' forms.

use std::collections::BTreeMap;

use time::format_description::well_known::Rfc3339;
use time::{Date, Duration, OffsetDateTime};

pub(super) const COMPUTED: &[&str] = &[
    "day", "hour", "id", "minute", "month", "rfc3339", "second", "unix", "year",
];

pub(super) const OFFSET_COMPUTED: &[&str] = &[
    "base_rfc3339",
    "day",
    "hour",
    "id",
    "minute",
    "month",
    "rfc3339",
    "second",
    "unix",
    "year",
];

/// What a changed offset or base computes again, as the provider's `Update` does; the stored
/// `base_rfc3339` is the base it starts from.
pub(super) const OFFSET_FOLLOWS_UPDATE: &[&str] = &[
    "day", "hour", "id", "minute", "month", "rfc3339", "second", "unix", "year",
];

const OFFSETS: [&str; 6] = [
    "offset_seconds",
    "offset_minutes",
    "offset_hours",
    "offset_days",
    "offset_months",
    "offset_years",
];

/// `rfc3339` (`time_static`) or `base_rfc3339` (`time_offset`), when given, must be an RFC 3339
/// timestamp; `time_offset` needs one of its offsets (the provider's `AtLeastOneOf`).
pub(super) fn check(
    resource_type: &str,
    arguments: &BTreeMap<String, String>,
    pending: &[String],
) -> Result<(), String> {
    for name in ["rfc3339", "base_rfc3339"] {
        if let Some(text) = arguments.get(name) {
            parse(name, text)?;
        }
    }
    if resource_type == "time_offset" {
        at_least_one(&OFFSETS, arguments, pending)?;
        for name in OFFSETS {
            whole(arguments, name)?;
        }
    }
    Ok(())
}

/// The plugin framework's `AtLeastOneOf`, in its words.
pub(super) fn at_least_one(
    names: &[&str],
    arguments: &BTreeMap<String, String>,
    pending: &[String],
) -> Result<(), String> {
    if names
        .iter()
        .any(|n| arguments.contains_key(*n) || pending.iter().any(|p| p == n))
    {
        return Ok(());
    }
    Err(format!(
        "At least one attribute out of [{}] must be specified",
        names.join(",")
    ))
}

pub(super) fn parse(name: &str, text: &str) -> Result<OffsetDateTime, String> {
    OffsetDateTime::parse(text, &Rfc3339).map_err(|_| {
        format!("{name} {text:?} is not an RFC 3339 timestamp (for example 2020-02-12T06:36:13Z)")
    })
}

/// Go's `Format(time.RFC3339)`: whole seconds, `Z` for UTC, the offset otherwise.
pub(super) fn format(at: OffsetDateTime) -> Result<String, String> {
    at.replace_nanosecond(0)
        .unwrap_or(at)
        .format(&Rfc3339)
        .map_err(|e| format!("formatting the time failed: {e}"))
}

/// Now, in UTC, to the second (Go's `time.Now().UTC()` as the provider stores it).
pub(super) fn now() -> OffsetDateTime {
    let now = OffsetDateTime::now_utc();
    now.replace_nanosecond(0).unwrap_or(now)
}

/// A whole-number argument (the provider's `Int64Attribute`), if set.
pub(super) fn whole(
    arguments: &BTreeMap<String, String>,
    name: &str,
) -> Result<Option<i64>, String> {
    let Some(text) = arguments.get(name) else {
        return Ok(None);
    };
    match text.trim().parse::<f64>() {
        Ok(n) if n.fract() == 0.0 && n.abs() < 1e12 => Ok(Some(n as i64)),
        _ => Err(format!("{name} must be a whole number, got: {text}")),
    }
}

/// Go's `t.AddDate(years, months, days)`: the month normalised into the year, then the day
/// into the month (January 31 plus one month is March 2 or 3), the time of day and offset kept.
pub(super) fn add_date(
    at: OffsetDateTime,
    years: i64,
    months: i64,
    days: i64,
) -> Result<OffsetDateTime, String> {
    let out_of_range = || "the offset timestamp is out of range".to_owned();
    let month0 = i64::from(u8::from(at.month())) - 1 + months;
    let year = i64::from(at.year()) + years + month0.div_euclid(12);
    let month = u8::try_from(month0.rem_euclid(12) + 1).map_err(|_| out_of_range())?;
    let first = Date::from_calendar_date(
        i32::try_from(year).map_err(|_| out_of_range())?,
        time::Month::try_from(month).map_err(|_| out_of_range())?,
        1,
    )
    .map_err(|_| out_of_range())?;
    let date = first
        .checked_add(Duration::days(i64::from(at.day()) - 1 + days))
        .ok_or_else(out_of_range)?;
    Ok(at.replace_date(date))
}

/// `t.Add(n * unit)`.
pub(super) fn add(at: OffsetDateTime, n: i64, unit: Duration) -> Result<OffsetDateTime, String> {
    unit.checked_mul(i32::try_from(n).map_err(|_| "the offset is out of range".to_owned())?)
        .and_then(|d| at.checked_add(d))
        .ok_or_else(|| "the offset timestamp is out of range".to_owned())
}

/// The parts of a timestamp, as the provider sets them: of the timestamp as written (Go's
/// `time.Parse` keeps its offset).
pub(super) fn parts(at: OffsetDateTime) -> Vec<(&'static str, String)> {
    vec![
        ("year", at.year().to_string()),
        ("month", u8::from(at.month()).to_string()),
        ("day", at.day().to_string()),
        ("hour", at.hour().to_string()),
        ("minute", at.minute().to_string()),
        ("second", at.second().to_string()),
        ("unix", at.unix_timestamp().to_string()),
    ]
}

pub(super) fn values(pairs: Vec<(&str, String)>) -> BTreeMap<String, String> {
    pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

/// `time_static`: the timestamp's parts (`id` is the timestamp).
pub(super) fn generate(
    arguments: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, String> {
    let (at, text) = match arguments.get("rfc3339") {
        Some(text) => (parse("rfc3339", text)?, text.clone()),
        None => {
            let now = now();
            (now, format(now)?)
        }
    };
    let mut pairs = parts(at);
    pairs.extend([("id", text.clone()), ("rfc3339", text)]);
    Ok(values(pairs))
}

/// `time_offset`: the base (`base_rfc3339`, or now) moved by each offset in the provider's
/// order (days, hours, minutes, months, seconds, years); `id` is the base.
pub(super) fn offset(
    arguments: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, String> {
    let base = match arguments.get("base_rfc3339") {
        Some(text) => parse("base_rfc3339", text)?,
        None => now(),
    };
    let n = |name| whole(arguments, name).map(Option::unwrap_or_default);
    let mut at = add_date(base, 0, 0, n("offset_days")?)?;
    at = add(at, n("offset_hours")?, Duration::HOUR)?;
    at = add(at, n("offset_minutes")?, Duration::MINUTE)?;
    at = add_date(at, 0, n("offset_months")?, 0)?;
    at = add(at, n("offset_seconds")?, Duration::SECOND)?;
    at = add_date(at, n("offset_years")?, 0, 0)?;
    let mut pairs = parts(at);
    pairs.extend([
        ("base_rfc3339", format(base)?),
        ("id", format(base)?),
        ("rfc3339", format(at)?),
    ]);
    Ok(values(pairs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxmox::desired::generated::test_args as args;

    #[test]
    fn a_given_timestamp_is_split_into_its_parts() {
        let v = generate(&args(&[("rfc3339", "2020-02-12T06:36:13Z")])).expect("time");
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
        assert!(check("time_static", &args(&[("rfc3339", "yesterday")]), &[]).is_err());
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

    #[test]
    fn offsets_move_the_base_as_go_adds_dates() {
        // January 31 plus one month is March 3 in 2021, as Go normalises February 31.
        let v = offset(&args(&[
            ("base_rfc3339", "2021-01-31T10:00:00Z"),
            ("offset_months", "1"),
        ]))
        .expect("offset");
        assert_eq!(v["rfc3339"], "2021-03-03T10:00:00Z");
        assert_eq!(v["id"], "2021-01-31T10:00:00Z");
        assert_eq!(v["base_rfc3339"], "2021-01-31T10:00:00Z");
        let v = offset(&args(&[
            ("base_rfc3339", "2020-02-12T06:36:13+01:00"),
            ("offset_days", "-13"),
            ("offset_hours", "20"),
            ("offset_years", "1"),
        ]))
        .expect("offset");
        assert_eq!(v["rfc3339"], "2021-01-31T02:36:13+01:00");
        assert_eq!((v["day"].as_str(), v["hour"].as_str()), ("31", "2"));
        assert_eq!(v["unix"], "1612056973");
        assert!(check("time_offset", &args(&[]), &[]).is_err());
        assert!(check("time_offset", &args(&[]), &["offset_days".to_owned()]).is_ok());
    }
}
