//! Parameter schemas as `PVE::JSONSchema` checks them before a handler runs: unknown and
//! missing keys, types (booleans normalized to `1`/`0`), then format, pattern, length, range
//! and enumeration, every failing key reported at once (`400 Parameter verification failed.`).

use std::collections::BTreeMap;

use crate::error::{ApiError, ApiResult};
use crate::routes::Params;

/// A parameter's type.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ty {
    Str,
    Int { min: Option<i64>, max: Option<i64> },
    Bool,
    Enum(&'static [&'static str]),
}

/// A format check: the message PVE's format function dies with.
pub(crate) type Format = fn(&str) -> Result<(), String>;

/// One parameter of a method.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Field {
    pub(crate) name: &'static str,
    ty: Ty,
    optional: bool,
    pattern: Option<fn(&str) -> bool>,
    min_len: Option<usize>,
    max_len: Option<usize>,
    format: Option<Format>,
}

impl Field {
    pub(crate) const fn new(name: &'static str, ty: Ty) -> Self {
        Self {
            name,
            ty,
            optional: true,
            pattern: None,
            min_len: None,
            max_len: None,
            format: None,
        }
    }

    pub(crate) const fn str(name: &'static str) -> Self {
        Self::new(name, Ty::Str)
    }

    pub(crate) const fn boolean(name: &'static str) -> Self {
        Self::new(name, Ty::Bool)
    }

    pub(crate) const fn int(name: &'static str, min: Option<i64>, max: Option<i64>) -> Self {
        Self::new(name, Ty::Int { min, max })
    }

    pub(crate) const fn one_of(name: &'static str, values: &'static [&'static str]) -> Self {
        Self::new(name, Ty::Enum(values))
    }

    /// The same schema under another name (`rename` takes the `name` schema).
    pub(crate) const fn named(mut self, name: &'static str) -> Self {
        self.name = name;
        self
    }

    pub(crate) const fn required(mut self) -> Self {
        self.optional = false;
        self
    }

    pub(crate) const fn pattern(mut self, check: fn(&str) -> bool) -> Self {
        self.pattern = Some(check);
        self
    }

    pub(crate) const fn len(mut self, min: usize, max: usize) -> Self {
        self.min_len = Some(min);
        self.max_len = Some(max);
        self
    }

    pub(crate) const fn max_len(mut self, max: usize) -> Self {
        self.max_len = Some(max);
        self
    }

    pub(crate) const fn format(mut self, check: Format) -> Self {
        self.format = Some(check);
        self
    }

    /// The value as the handler sees it, or the message for the key.
    fn check(&self, value: &str) -> Result<String, String> {
        let value = match self.ty {
            Ty::Bool => bool_value(value)?,
            Ty::Int { .. } => int_value(value)?,
            Ty::Str | Ty::Enum(_) => value.to_owned(),
        };
        if let Some(check) = self.format {
            check(&value).map_err(|e| format!("invalid format - {e}"))?;
        }
        if let Some(check) = self.pattern
            && !check(&value)
        {
            return Err("value does not match the regex pattern".to_owned());
        }
        let chars = value.chars().count();
        if let Some(max) = self.max_len
            && chars > max
        {
            return Err(format!("value may only be {max} characters long"));
        }
        if let Some(min) = self.min_len
            && chars < min
        {
            return Err(format!("value must be at least {min} characters long"));
        }
        self.check_range_and_enum(&value)?;
        Ok(value)
    }

    fn check_range_and_enum(&self, value: &str) -> Result<(), String> {
        match self.ty {
            Ty::Int { min, max } => {
                let n: i64 = value.parse().unwrap_or_default();
                if let Some(max) = max
                    && n > max
                {
                    return Err(format!("value must have a maximum value of {max}"));
                }
                if let Some(min) = min
                    && n < min
                {
                    return Err(format!("value must have a minimum value of {min}"));
                }
                Ok(())
            }
            Ty::Enum(values) if !values.contains(&value) => Err(format!(
                "value '{value}' does not have a value in the enumeration '{}'",
                values.join(", ")
            )),
            _ => Ok(()),
        }
    }
}

fn bool_value(v: &str) -> Result<String, String> {
    let lower = v.to_ascii_lowercase();
    match lower.as_str() {
        "1" | "true" | "yes" | "on" => Ok("1".to_owned()),
        "0" | "false" | "no" | "off" => Ok("0".to_owned()),
        _ => Err(format!("type check ('boolean') failed - got '{v}'")),
    }
}

fn int_value(v: &str) -> Result<String, String> {
    let digits = v.strip_prefix(['-', '+']).unwrap_or(v);
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("type check ('integer') failed - got '{v}'"));
    }
    v.parse::<i64>()
        .map(|n| n.to_string())
        .map_err(|_| format!("type check ('integer') failed - got '{v}'"))
}

/// The checked parameters, by name.
pub(crate) type Checked = BTreeMap<String, String>;

/// Checks `params` against `fields`; the path parameters are not in `params`.
pub(crate) fn check(params: &Params, fields: &[Field]) -> ApiResult<Checked> {
    let mut errors = BTreeMap::new();
    let mut out = Checked::new();
    for key in params.keys() {
        if !fields.iter().any(|f| f.name == key) {
            errors.insert(
                key.clone(),
                "property is not defined in schema and the schema does not allow additional properties"
                    .to_owned(),
            );
        }
    }
    for field in fields {
        let value = match params.get(field.name) {
            Ok(v) => v,
            Err(e) => {
                errors.extend(e.errors.unwrap_or_default());
                continue;
            }
        };
        match value {
            None if !field.optional => {
                errors.insert(
                    field.name.to_owned(),
                    "property is missing and it is not optional".to_owned(),
                );
            }
            None => {}
            Some(v) => match field.check(v) {
                Ok(v) => {
                    out.insert(field.name.to_owned(), v);
                }
                Err(e) => {
                    errors.insert(field.name.to_owned(), e);
                }
            },
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(ApiError::params(errors))
    }
}

/// Checks a path parameter the way the schema checks it (`400` naming the key).
pub(crate) fn check_path(field: &Field, value: &str) -> ApiResult<String> {
    field
        .check(value)
        .map_err(|e| ApiError::param(field.name, e))
}

/// `pve-config-digest`.
pub(crate) const DIGEST: Field = Field::str("digest").max_len(64);

/// `pve-configid-list` (`delete`): each id `[a-z][a-z0-9_-]+`.
pub(crate) const DELETE_LIST: Field = Field::str("delete").format(configid_list);

fn configid_list(list: &str) -> Result<(), String> {
    for id in crate::propstr::split_list(list) {
        let mut chars = id.chars();
        let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && id.len() >= 2
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !ok {
            return Err(format!("invalid configuration ID '{id}'"));
        }
    }
    Ok(())
}

/// `PVE::Tools::assert_if_modified`: only when the caller sent a digest.
pub(crate) fn assert_digest(given: Option<&String>, current: &str) -> ApiResult<()> {
    match given {
        Some(d) if d != current => Err(ApiError::die(
            "detected modified configuration - file changed by other user? Try again.",
        )),
        _ => Ok(()),
    }
}
