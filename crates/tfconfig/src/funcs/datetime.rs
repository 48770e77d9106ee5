//! Time functions over RFC 3339 timestamps: `formatdate` (Terraform's own format spec),
//! `timeadd` (a Go duration) and `timecmp`.

use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime, UtcOffset};

use super::{FnError, FnResult, string_arg};
use crate::value::Value;

pub(super) fn call(name: &str, args: &[Value]) -> Option<FnResult> {
    Some(match name {
        "formatdate" => formatdate(args),
        "timeadd" => timeadd(args),
        "timecmp" => timecmp(args),
        _ => return None,
    })
}

fn timestamp(args: &[Value], i: usize) -> Result<OffsetDateTime, FnError> {
    let text = string_arg(args, i)?;
    // Go's RFC 3339 layout wants the `T` (a space or a `t` is refused), then `Z` or an offset.
    let strict = text.as_bytes().get(10) == Some(&b'T') && !text.ends_with('z');
    OffsetDateTime::parse(&text, &Rfc3339)
        .ok()
        .filter(|_| strict)
        .ok_or_else(|| {
            FnError::Arg(
                i,
                format!(
                    "not a valid RFC3339 timestamp: {text:?} (write it like 2024-01-31T12:00:00Z)"
                ),
            )
        })
}

fn rfc3339(t: OffsetDateTime) -> Result<Value, FnError> {
    t.format(&Rfc3339)
        .map(Value::String)
        .map_err(|e| FnError::Call(format!("the time cannot be written: {e}")))
}

fn timeadd(args: &[Value]) -> FnResult {
    let t = timestamp(args, 0)?;
    let d = go_duration(&string_arg(args, 1)?).map_err(|e| FnError::Arg(1, e))?;
    let sum = t
        .checked_add(d)
        .ok_or_else(|| FnError::Call("the time is out of range".into()))?;
    rfc3339(sum)
}

fn timecmp(args: &[Value]) -> FnResult {
    let (a, b) = (timestamp(args, 0)?, timestamp(args, 1)?);
    Ok(Value::Number(match a.cmp(&b) {
        std::cmp::Ordering::Less => -1.0,
        std::cmp::Ordering::Equal => 0.0,
        std::cmp::Ordering::Greater => 1.0,
    }))
}

/// A Go duration: an optional sign, then numbers with units `h m s ms us µs ns` (`1h30m`,
/// `-1.5h`, `250ms`).
fn go_duration(text: &str) -> Result<Duration, String> {
    let bad = || format!("invalid duration {text:?} (write it like 1h30m or 90s)");
    let (negative, mut rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total = 0f64;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        let number: f64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" | "μs" => 1e-6,
            "ns" => 1e-9,
            _ => return Err(bad()),
        };
        total += number * seconds;
        rest = &rest[unit_len..];
    }
    let d = Duration::checked_seconds_f64(if negative { -total } else { total }).ok_or_else(bad)?;
    Ok(d)
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

fn formatdate(args: &[Value]) -> FnResult {
    let spec = string_arg(args, 0)?;
    let t = timestamp(args, 1)?;
    let mut out = String::new();
    let chars: Vec<char> = spec.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            // A quoted literal; '' inside it (or alone) is one quote.
            let mut j = i + 1;
            if chars.get(j) == Some(&'\'') {
                out.push('\'');
                i = j + 1;
                continue;
            }
            loop {
                match chars.get(j) {
                    None => {
                        return Err(FnError::Arg(0, "unterminated literal '".into()));
                    }
                    Some('\'') if chars.get(j + 1) == Some(&'\'') => {
                        out.push('\'');
                        j += 2;
                    }
                    Some('\'') => break,
                    Some(other) => {
                        out.push(*other);
                        j += 1;
                    }
                }
            }
            i = j + 1;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            out.push(c);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|x| **x == c).count();
        out.push_str(&field(c, run, t)?);
        i += run;
    }
    Ok(Value::String(out))
}

/// One run of a format letter, as Terraform's `formatdate` documents them.
fn field(letter: char, run: usize, t: OffsetDateTime) -> Result<String, FnError> {
    let month = usize::from(u8::from(t.month()));
    let hour12 = match t.hour() % 12 {
        0 => 12,
        h => h,
    };
    let offset = t.offset();
    Ok(match (letter, run) {
        ('Y', 4) => format!("{:04}", t.year()),
        ('Y', 2) => format!("{:02}", t.year().rem_euclid(100)),
        ('M', 4) => MONTHS[month - 1].to_owned(),
        ('M', 3) => MONTHS[month - 1][..3].to_owned(),
        ('M', 2) => format!("{month:02}"),
        ('M', 1) => month.to_string(),
        ('D', 2) => format!("{:02}", t.day()),
        ('D', 1) => t.day().to_string(),
        ('E', 4) => t.weekday().to_string(),
        ('E', 3) => t.weekday().to_string()[..3].to_owned(),
        ('h', 2) => format!("{:02}", t.hour()),
        ('h', 1) => t.hour().to_string(),
        ('H', 2) => format!("{hour12:02}"),
        ('H', 1) => hour12.to_string(),
        ('A', 2) => (if t.hour() < 12 { "AM" } else { "PM" }).to_owned(),
        ('a', 2) => (if t.hour() < 12 { "am" } else { "pm" }).to_owned(),
        ('m', 2) => format!("{:02}", t.minute()),
        ('m', 1) => t.minute().to_string(),
        ('s', 2) => format!("{:02}", t.second()),
        ('s', 1) => t.second().to_string(),
        ('Z', 5) => zone(offset, true),
        ('Z', 4) => zone(offset, false),
        ('Z', 3) => {
            if offset.is_utc() {
                "UTC".to_owned()
            } else {
                zone(offset, false)
            }
        }
        ('Z', 1) => {
            if offset.is_utc() {
                "Z".to_owned()
            } else {
                zone(offset, true)
            }
        }
        _ => {
            return Err(FnError::Arg(
                0,
                format!(
                    "invalid date format verb {:?}: see Terraform's formatdate documentation",
                    letter.to_string().repeat(run)
                ),
            ));
        }
    })
}

/// `+hh:mm` (`colon`) or `+hhmm`.
fn zone(offset: UtcOffset, colon: bool) -> String {
    let (h, m, _) = offset.as_hms();
    let sign = if h < 0 || m < 0 { '-' } else { '+' };
    let (h, m) = (h.unsigned_abs(), m.unsigned_abs());
    if colon {
        format!("{sign}{h:02}:{m:02}")
    } else {
        format!("{sign}{h:02}{m:02}")
    }
}
