//! Small argument helpers shared by the function families: typed access to an argument by
//! position, with Terraform's conversions and messages.

use super::FnError;
use crate::value::Value;

pub(crate) fn str_arg(args: &[Value], i: usize) -> Result<&str, FnError> {
    match args.get(i) {
        Some(Value::String(s)) => Ok(s),
        Some(Value::Null(_)) => Err(FnError::Arg(i, "argument must not be null".into())),
        _ => Err(FnError::Arg(i, "string required".into())),
    }
}

/// A string argument, converting numbers and bools as Terraform does.
pub(crate) fn string_arg(args: &[Value], i: usize) -> Result<String, FnError> {
    match args.get(i) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(crate::value::format_number(*n)),
        Some(Value::Bool(b)) => Ok(b.to_string()),
        Some(Value::Null(_)) => Err(FnError::Arg(i, "argument must not be null".into())),
        _ => Err(FnError::Arg(i, "string required".into())),
    }
}

pub(crate) fn num_arg(args: &[Value], i: usize) -> Result<f64, FnError> {
    match args.get(i) {
        Some(Value::Number(n)) => Ok(*n),
        Some(Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .map_err(|_| FnError::Arg(i, "a number is required".into())),
        Some(Value::Null(_)) => Err(FnError::Arg(i, "argument must not be null".into())),
        _ => Err(FnError::Arg(i, "a number is required".into())),
    }
}

pub(crate) fn int_arg(args: &[Value], i: usize) -> Result<i64, FnError> {
    let n = num_arg(args, i)?;
    if n.fract() != 0.0 || n.abs() > 9.0e15 {
        return Err(FnError::Arg(i, "a whole number is required".into()));
    }
    Ok(n as i64)
}

pub(crate) fn seq_arg(args: &[Value], i: usize) -> Result<&[Value], FnError> {
    match args.get(i) {
        Some(v) => v
            .as_seq()
            .ok_or_else(|| FnError::Arg(i, "list of any single type required".into())),
        None => Err(FnError::Arg(i, "argument is missing".into())),
    }
}
