//! `format` and `formatlist`: Go-like verbs `%s %d %f %t %q %v %#v %e %g %x %X %o %b %%` with
//! flags, width and precision. Both stop as soon as what they build passes the bytes left to
//! the evaluation budget (`room`): widths and repeated rows multiply their input.

use super::{FnError, FnResult, fits, string_arg};
use crate::eval::NODE_BYTES;
use crate::value::{Type, Value, format_number, quote};
use unicode_segmentation::UnicodeSegmentation as _;

const MAX_WIDTH: usize = 4096;

pub(super) fn call(name: &str, args: &[Value], room: u64) -> Option<FnResult> {
    match name {
        "format" => Some(
            string_arg(args, 0)
                .and_then(|f| format_within(&f, &args[1..], room).map(Value::String)),
        ),
        "formatlist" => Some(formatlist(args, room)),
        _ => None,
    }
}

fn formatlist(args: &[Value], room: u64) -> FnResult {
    let f = string_arg(args, 0)?;
    let rest = &args[1..];
    let mut n: Option<usize> = None;
    for (i, a) in rest.iter().enumerate() {
        if let Some(items) = a.as_seq() {
            match n {
                Some(m) if m != items.len() => {
                    return Err(FnError::Arg(
                        i + 1,
                        format!(
                            "argument {} has length {}, which is inconsistent with argument 1 of length {m}",
                            i + 2,
                            items.len()
                        ),
                    ));
                }
                _ => n = Some(items.len()),
            }
        }
    }
    let n = n.unwrap_or(1);
    fits((n as u64).saturating_mul(NODE_BYTES), room)?;
    let mut out = Vec::with_capacity(n);
    let mut used = (n as u64).saturating_mul(NODE_BYTES);
    for i in 0..n {
        let row: Vec<Value> = rest
            .iter()
            .map(|a| {
                a.as_seq().map_or_else(
                    || a.clone(),
                    |items| items.get(i).cloned().unwrap_or_else(Value::null),
                )
            })
            .collect();
        let text = format_within(&f, &row, room - used)?;
        used += text.len() as u64;
        out.push(Value::String(text));
    }
    Ok(Value::List(Type::String, out))
}

#[derive(Default)]
struct Spec {
    minus: bool,
    plus: bool,
    zero: bool,
    space: bool,
    sharp: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

/// Formats `args` according to `f`.
#[cfg(test)]
pub(crate) fn format(f: &str, args: &[Value]) -> Result<String, FnError> {
    format_within(f, args, u64::MAX)
}

/// Formats `args` according to `f`, refusing a result longer than `room` bytes.
pub(crate) fn format_within(f: &str, args: &[Value], room: u64) -> Result<String, FnError> {
    let mut out = String::new();
    let mut chars = f.chars().peekable();
    let mut next_arg = 0usize;
    let mut reordered = false;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec::default();
        while let Some(&fl) = chars.peek() {
            match fl {
                '-' => spec.minus = true,
                '+' => spec.plus = true,
                '0' => spec.zero = true,
                ' ' => spec.space = true,
                '#' => spec.sharp = true,
                _ => break,
            }
            chars.next();
        }
        // `%[n]verb` takes argument n (one-based) and the ones after it next, as in Go; the
        // index may stand before the width or right before the verb.
        let indexed_before_width = arg_index(&mut chars, args.len())?;
        if let Some(n) = indexed_before_width {
            next_arg = n;
            reordered = true;
        }
        spec.width = digits(&mut chars);
        if indexed_before_width.is_some() && spec.width.is_some() {
            // Go reads `%[2]5d` as a bad index: an index before the width names the width's
            // argument (`%[2]*d`), which atoll does not take.
            return Err(FnError::Call(
                "an argument index before a width is not valid here; write %5[2]d".into(),
            ));
        }
        if chars.peek() == Some(&'.') {
            chars.next();
            spec.prec = Some(digits(&mut chars).unwrap_or(0));
        }
        if let Some(n) = arg_index(&mut chars, args.len())? {
            next_arg = n;
            reordered = true;
        }
        if spec.width.unwrap_or(0) > MAX_WIDTH || spec.prec.unwrap_or(0) > MAX_WIDTH {
            return Err(FnError::Call(format!(
                "width and precision may be at most {MAX_WIDTH}"
            )));
        }
        let Some(verb) = chars.next() else {
            return Err(FnError::Call(
                "unterminated format verb at end of string".into(),
            ));
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(arg) = args.get(next_arg) else {
            return Err(FnError::Call(format!(
                "not enough arguments for \"%{verb}\" at {}",
                next_arg + 1
            )));
        };
        next_arg += 1;
        let text = verb_text(verb, &spec, arg)?;
        out.push_str(&pad(text, &spec));
        fits(out.len() as u64, room)?;
    }
    if !reordered && next_arg < args.len() {
        return Err(FnError::Call(format!(
            "too many arguments; only {next_arg} used by format string"
        )));
    }
    Ok(out)
}

/// `[n]` at this point of a verb: the zero-based argument it names.
fn arg_index(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    count: usize,
) -> Result<Option<usize>, FnError> {
    if chars.peek() != Some(&'[') {
        return Ok(None);
    }
    chars.next();
    let n = digits(chars);
    if chars.next() != Some(']') {
        return Err(FnError::Call(
            "unterminated argument index [n] in format".into(),
        ));
    }
    match n {
        Some(n) if (1..=count).contains(&n) => Ok(Some(n - 1)),
        _ => Err(FnError::Call(format!(
            "invalid argument index: the format has {count} argument(s)"
        ))),
    }
}

fn digits(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<usize> {
    let mut n: Option<usize> = None;
    while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
        n = Some(n.unwrap_or(0).saturating_mul(10).saturating_add(d as usize));
        chars.next();
    }
    n
}

/// The first `prec` grapheme clusters of `s` (all of it without a precision).
fn truncated(s: String, prec: Option<usize>) -> String {
    match prec {
        Some(p) => s.graphemes(true).take(p).collect(),
        None => s,
    }
}

fn pad(text: String, spec: &Spec) -> String {
    let w = spec.width.unwrap_or(0);
    // cty's format counts width in grapheme clusters (`💃🏿` is one).
    let len = text.graphemes(true).count();
    if len >= w {
        return text;
    }
    let fill = w - len;
    if spec.minus {
        format!("{text}{}", " ".repeat(fill))
    } else if spec.zero && text.starts_with('-') {
        format!("-{}{}", "0".repeat(fill), &text[1..])
    } else if spec.zero {
        format!("{}{text}", "0".repeat(fill))
    } else {
        format!("{}{text}", " ".repeat(fill))
    }
}

fn num(arg: &Value, verb: char) -> Result<f64, FnError> {
    match arg {
        Value::Number(n) => Ok(*n),
        Value::String(s) => s.parse().map_err(|_| {
            FnError::Call(format!(
                "unsupported value for \"%{verb}\": a number is required"
            ))
        }),
        _ => Err(FnError::Call(format!(
            "unsupported value for \"%{verb}\": a number is required"
        ))),
    }
}

fn sign(n: f64, spec: &Spec, body: String) -> String {
    if n >= 0.0 && spec.plus {
        format!("+{body}")
    } else if n >= 0.0 && spec.space {
        format!(" {body}")
    } else {
        body
    }
}

fn verb_text(verb: char, spec: &Spec, arg: &Value) -> Result<String, FnError> {
    if arg.is_null() && verb != 'v' {
        return Err(FnError::Call(format!(
            "unsupported value for \"%{verb}\": null value cannot be formatted"
        )));
    }
    Ok(match verb {
        's' => {
            let s = string_arg(std::slice::from_ref(arg), 0).map_err(|_| {
                FnError::Call("unsupported value for \"%s\": string required".into())
            })?;
            truncated(s, spec.prec)
        }
        'q' => {
            let s = string_arg(std::slice::from_ref(arg), 0).map_err(|_| {
                FnError::Call("unsupported value for \"%q\": string required".into())
            })?;
            quote(&truncated(s, spec.prec))
        }
        't' => match arg {
            Value::Bool(b) => b.to_string(),
            Value::String(s) if s == "true" || s == "false" => s.clone(),
            _ => {
                return Err(FnError::Call(
                    "unsupported value for \"%t\": bool required".into(),
                ));
            }
        },
        'd' => {
            let n = num(arg, verb)?;
            if n.fract() != 0.0 {
                return Err(FnError::Call(
                    "unsupported value for \"%d\": an integer is required".into(),
                ));
            }
            sign(n, spec, format_number(n))
        }
        'f' | 'F' => {
            let n = num(arg, verb)?;
            sign(n, spec, format!("{:.*}", spec.prec.unwrap_or(6), n))
        }
        'e' | 'E' => {
            let n = num(arg, verb)?;
            let s = format!("{:.*e}", spec.prec.unwrap_or(6), n);
            let s = go_exponent(&s);
            sign(n, spec, if verb == 'E' { s.to_uppercase() } else { s })
        }
        'g' | 'G' => {
            let n = num(arg, verb)?;
            let s = go_general(n, spec.prec);
            sign(n, spec, if verb == 'G' { s.to_uppercase() } else { s })
        }
        'x' | 'X' | 'o' | 'b' => {
            let n = num(arg, verb)?;
            if n.fract() != 0.0 {
                return Err(FnError::Call(format!(
                    "unsupported value for \"%{verb}\": an integer is required"
                )));
            }
            let i = n as i64;
            let (neg, u) = (i < 0, i.unsigned_abs());
            let body = match verb {
                'x' => format!("{u:x}"),
                'X' => format!("{u:X}"),
                'o' => format!("{u:o}"),
                _ => format!("{u:b}"),
            };
            if neg { format!("-{body}") } else { body }
        }
        'v' => match arg {
            Value::String(s) if !spec.sharp => s.clone(),
            Value::Number(n) => format_number(*n),
            Value::Bool(b) => b.to_string(),
            Value::Null(_) => "null".into(),
            other => super::encoding::json_string(other),
        },
        other => {
            return Err(FnError::Call(format!(
                "unrecognized format verb \"%{other}\""
            )));
        }
    })
}

/// Rust prints `1.5e3`; Go prints `1.500000e+03`.
/// Go's `%g`: the shortest form (or `prec` significant digits), in exponent form when the
/// exponent is below -4 or at least the precision (6 for the shortest form), trailing zeros
/// dropped.
fn go_general(n: f64, prec: Option<usize>) -> String {
    if !n.is_finite() {
        return format_number(n);
    }
    let digits = prec.map(|p| p.max(1));
    let e_form = match digits {
        Some(p) => format!("{:.*e}", p - 1, n),
        None => format!("{n:e}"),
    };
    let exp: i64 = e_form
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    let limit = digits.map_or(6, |p| i64::try_from(p).unwrap_or(i64::MAX));
    if exp < -4 || exp >= limit {
        let (mantissa, _) = e_form.split_once('e').unwrap_or((&e_form, ""));
        let mantissa = trim_fraction(mantissa);
        return go_exponent(&format!("{mantissa}e{exp}"));
    }
    match digits {
        None => format_number(n),
        Some(p) => {
            let decimals = usize::try_from(i64::try_from(p).unwrap_or(0) - 1 - exp).unwrap_or(0);
            trim_fraction(&format!("{n:.decimals$}")).to_owned()
        }
    }
}

/// `1.2300` as `1.23`, `2.000` as `2`.
fn trim_fraction(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

fn go_exponent(s: &str) -> String {
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            format!("{m}e{sign}{digits:0>2}")
        }
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_supports_width_padding_and_verbs() {
        let args = [Value::string("web"), Value::Number(7.0), Value::Number(1.5)];
        assert_eq!(
            format("%-5s|%03d|%.2f", &args).ok().as_deref(),
            Some("web  |007|1.50")
        );
        assert_eq!(
            format("%q %%", &[Value::string("a\"b")]).ok().as_deref(),
            Some("\"a\\\"b\" %")
        );
    }

    #[test]
    fn format_rejects_missing_arguments_and_huge_widths() {
        assert!(format("%s %s", &[Value::string("a")]).is_err());
        assert!(format("%999999999d", &[Value::Number(1.0)]).is_err());
    }
}
