//! Number functions: `range sum max min abs ceil floor signum pow log parseint`.

use super::{FnError, FnResult, fits, int_arg, num_arg, seq_arg, string_arg};
use crate::eval::NODE_BYTES;
use crate::value::{Type, Value};

/// The most values `range` makes, as go-cty limits it.
const RANGE_MAX: usize = 1024;

/// `room`: the bytes left to the evaluation budget (`range` refuses a list that would not fit).
pub(super) fn call(name: &str, args: &[Value], room: u64) -> Option<FnResult> {
    let r = match name {
        "range" => range(args, room),
        "sum" => seq_arg(args, 0).and_then(|s| {
            if s.is_empty() {
                return Err(FnError::Arg(0, "cannot sum an empty list".into()));
            }
            s.iter()
                .enumerate()
                .try_fold(0.0, |acc, (i, v)| {
                    num_arg(std::slice::from_ref(v), 0)
                        .map(|n| acc + n)
                        .map_err(|_| FnError::Arg(0, format!("element {i} is not a number")))
                })
                .map(Value::Number)
        }),
        "max" | "min" => minmax(name, args),
        "abs" => num_arg(args, 0).map(|n| Value::Number(n.abs())),
        "ceil" => num_arg(args, 0).map(|n| Value::Number(n.ceil())),
        "floor" => num_arg(args, 0).map(|n| Value::Number(n.floor())),
        "signum" => {
            num_arg(args, 0).map(|n| Value::Number(if n == 0.0 { 0.0 } else { n.signum() }))
        }
        "pow" => num_arg(args, 0).and_then(|a| num_arg(args, 1).map(|b| Value::Number(a.powf(b)))),
        "log" => {
            num_arg(args, 0).and_then(|a| num_arg(args, 1).map(|b| Value::Number(a.ln() / b.ln())))
        }
        "parseint" => parseint(args),
        _ => return None,
    };
    Some(r)
}

fn range(args: &[Value], room: u64) -> FnResult {
    let nums: Vec<f64> = (0..args.len())
        .map(|i| num_arg(args, i))
        .collect::<Result<_, _>>()?;
    let (start, end, step) = match nums.as_slice() {
        [e] => (0.0, *e, if *e >= 0.0 { 1.0 } else { -1.0 }),
        [s, e] => (*s, *e, if e >= s { 1.0 } else { -1.0 }),
        [s, e, st] => (*s, *e, *st),
        _ => {
            return Err(FnError::Call(
                "range expects one, two or three arguments".into(),
            ));
        }
    };
    if step == 0.0 || (step > 0.0 && start > end) || (step < 0.0 && start < end) {
        if step == 0.0 {
            return Err(FnError::Call("step must not be zero".into()));
        }
        return Err(FnError::Call(
            "step must be in the direction of the end value".into(),
        ));
    }
    let count = ((end - start) / step).ceil();
    if !count.is_finite() || count > RANGE_MAX as f64 {
        return Err(FnError::Call(format!(
            "more than {RANGE_MAX} values were generated; either decrease the difference between start and end or use a smaller step"
        )));
    }
    fits((count as u64).saturating_mul(NODE_BYTES), room)?;
    Ok(Value::List(
        Type::Number,
        (0..count as usize)
            .map(|i| Value::Number(start + step * i as f64))
            .collect(),
    ))
}

fn minmax(name: &str, args: &[Value]) -> FnResult {
    let nums: Vec<f64> = (0..args.len())
        .map(|i| num_arg(args, i))
        .collect::<Result<_, _>>()?;
    let r = if name == "max" {
        nums.iter().copied().fold(f64::NEG_INFINITY, f64::max)
    } else {
        nums.iter().copied().fold(f64::INFINITY, f64::min)
    };
    if nums.is_empty() {
        return Err(FnError::Call("must pass at least one number".into()));
    }
    Ok(Value::Number(r))
}

fn parseint(args: &[Value]) -> FnResult {
    let s = match args.first() {
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(FnError::Arg(
                0,
                format!(
                    "first argument must be a string, not {}",
                    other.ty().friendly()
                ),
            ));
        }
        None => string_arg(args, 0)?,
    };
    let base = int_arg(args, 1)?;
    if !(2..=62).contains(&base) {
        return Err(FnError::Arg(
            1,
            "base must be a whole number between 2 and 62 inclusive".into(),
        ));
    }
    parse_in_base(&s, base as u32)
        .map(Value::Number)
        .ok_or_else(|| {
            FnError::Arg(
                0,
                format!(
                    "cannot parse {} as a base {base} integer",
                    crate::value::quote(&s)
                ),
            )
        })
}

/// Go's `big.Int.SetString(s, base)`, which Terraform's `parseint` calls: an optional sign, then
/// at least one digit. Up to base 36 letters of either case are 10..35; above it `a`..`z` are
/// 10..35 and `A`..`Z` are 36..61. The result is as precise as a number here can be.
fn parse_in_base(s: &str, base: u32) -> Option<f64> {
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    let mut n = 0.0_f64;
    for c in digits.chars() {
        let d = match c {
            '0'..='9' => c as u32 - '0' as u32,
            'a'..='z' => c as u32 - 'a' as u32 + 10,
            'A'..='Z' if base <= 36 => c as u32 - 'A' as u32 + 10,
            'A'..='Z' => c as u32 - 'A' as u32 + 36,
            _ => return None,
        };
        if d >= base {
            return None;
        }
        n = n * f64::from(base) + f64::from(d);
    }
    Some(if negative { -n } else { n })
}

#[cfg(test)]
mod tests {
    use super::parse_in_base;

    #[test]
    fn parseint_follows_go_big_int_digits_up_to_base_62() {
        assert_eq!(parse_in_base("12", 37), Some(39.0));
        assert_eq!(parse_in_base("FF", 16), Some(255.0));
        assert_eq!(parse_in_base("ff", 16), Some(255.0));
        assert_eq!(parse_in_base("Z", 62), Some(61.0));
        assert_eq!(parse_in_base("z", 62), Some(35.0));
        assert_eq!(parse_in_base("-101", 2), Some(-5.0));
        assert_eq!(parse_in_base("+7", 8), Some(7.0));
        assert_eq!(parse_in_base("8", 8), None);
        assert_eq!(parse_in_base("", 10), None);
        assert_eq!(parse_in_base("-", 10), None);
        assert_eq!(parse_in_base("1_000", 10), None);
        assert_eq!(parse_in_base("A", 37), Some(36.0));
    }
}
