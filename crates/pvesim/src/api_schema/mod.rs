//! One declarative parameter schema per endpoint, checked before the handler runs, as
//! pve-common's `RESTHandler::handle` does (`PVE::JSONSchema::validate` on the whole parameter
//! hash: path parameters, query and body together). Errors are PVE's: 400 `Parameter
//! verification failed.` with one message per parameter, in `check_prop`'s order — type, format
//! (property strings with their sub-keys), pattern, `maxLength`, `minLength`, range, enum —
//! then `requires` and `additionalProperties` (`check_object`).
//!
//! PVE's messages end in `\n` when they come from a `die`; the simulator leaves the trailing
//! newlines out, as everywhere else (`error.rs`).
//!
//! The tables are data written from PVE's API schema (`lxc.rs`, `qemu.rs` with the QEMU
//! property strings in `qemu_formats.rs`); the formats they name are in `formats.rs`.

pub(crate) mod formats;
pub(crate) mod lxc;
mod property_string;
pub(crate) mod qemu;
pub(crate) mod qemu_formats;

pub(crate) use property_string::parse_props;

use std::collections::BTreeMap;

use crate::error::{ApiError, ApiResult};
use crate::routes::Params;

/// JSON schema `type` of a property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    Bool,
    Int,
    Num,
    Str,
}

impl Ty {
    fn name(self) -> &'static str {
        match self {
            Ty::Bool => "boolean",
            Ty::Int => "integer",
            Ty::Num => "number",
            Ty::Str => "string",
        }
    }
}

/// How a property is named: one key, or `prefix0`..`prefix{count-1}` (`net0`, `mp7`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Name {
    Exact(&'static str),
    Indexed(&'static str, u32),
}

impl Name {
    fn matches(self, key: &str) -> bool {
        match self {
            Name::Exact(n) => n == key,
            Name::Indexed(prefix, count) => key
                .strip_prefix(prefix)
                .filter(|n| !n.is_empty() && (n.len() == 1 || !n.starts_with('0')))
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|n| n < count),
        }
    }
}

/// A `format`: a registered check (its `die` message), a `-list` of one, or a property string.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Format {
    None,
    Check(fn(&str) -> Result<(), String>),
    List(fn(&str) -> Result<(), String>),
    Props(&'static [Prop]),
}

/// An `enum`: fixed values, or values computed once (`valid_volume_keys`).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Values {
    None,
    Fixed(&'static [&'static str]),
    Computed(fn() -> Vec<String>),
}

/// One property of a parameter schema or of a property-string format.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Prop {
    pub(crate) name: Name,
    pub(crate) ty: Ty,
    pub(crate) optional: bool,
    pub(crate) format: Format,
    /// An anchored `pattern`, written as a predicate (the simulator has no regex engine).
    pub(crate) pattern: Option<fn(&str) -> bool>,
    pub(crate) max_length: Option<usize>,
    pub(crate) min_length: Option<usize>,
    pub(crate) minimum: Option<f64>,
    pub(crate) maximum: Option<f64>,
    pub(crate) values: Values,
    pub(crate) requires: Option<&'static str>,
    /// The property string's `default_key` (a bare value is assigned to it).
    pub(crate) default_key: bool,
    /// A property-string `alias` (the key's value is stored under the target), with its
    /// `keyAlias` (the key's own name is stored under that key: `virtio=MAC` sets `model`).
    pub(crate) alias: Option<(&'static str, Option<&'static str>)>,
}

impl Prop {
    const fn new(name: Name, ty: Ty) -> Self {
        Self {
            name,
            ty,
            optional: true,
            format: Format::None,
            pattern: None,
            max_length: None,
            min_length: None,
            minimum: None,
            maximum: None,
            values: Values::None,
            requires: None,
            default_key: false,
            alias: None,
        }
    }
    pub(crate) const fn boolean(name: &'static str) -> Self {
        Self::new(Name::Exact(name), Ty::Bool)
    }
    pub(crate) const fn int(name: &'static str) -> Self {
        Self::new(Name::Exact(name), Ty::Int)
    }
    pub(crate) const fn number(name: &'static str) -> Self {
        Self::new(Name::Exact(name), Ty::Num)
    }
    pub(crate) const fn string(name: &'static str) -> Self {
        Self::new(Name::Exact(name), Ty::Str)
    }
    pub(crate) const fn indexed(prefix: &'static str, count: u32) -> Self {
        Self::new(Name::Indexed(prefix, count), Ty::Str)
    }
    pub(crate) const fn required(mut self) -> Self {
        self.optional = false;
        self
    }
    pub(crate) const fn format(mut self, check: fn(&str) -> Result<(), String>) -> Self {
        self.format = Format::Check(check);
        self
    }
    pub(crate) const fn list(mut self, check: fn(&str) -> Result<(), String>) -> Self {
        self.format = Format::List(check);
        self
    }
    pub(crate) const fn props(mut self, props: &'static [Prop]) -> Self {
        self.format = Format::Props(props);
        self
    }
    pub(crate) const fn pattern(mut self, pattern: fn(&str) -> bool) -> Self {
        self.pattern = Some(pattern);
        self
    }
    pub(crate) const fn max_len(mut self, n: usize) -> Self {
        self.max_length = Some(n);
        self
    }
    pub(crate) const fn min_len(mut self, n: usize) -> Self {
        self.min_length = Some(n);
        self
    }
    pub(crate) const fn min(mut self, n: f64) -> Self {
        self.minimum = Some(n);
        self
    }
    pub(crate) const fn max(mut self, n: f64) -> Self {
        self.maximum = Some(n);
        self
    }
    pub(crate) const fn one_of(mut self, values: &'static [&'static str]) -> Self {
        self.values = Values::Fixed(values);
        self
    }
    pub(crate) const fn computed(mut self, values: fn() -> Vec<String>) -> Self {
        self.values = Values::Computed(values);
        self
    }
    pub(crate) const fn requires(mut self, key: &'static str) -> Self {
        self.requires = Some(key);
        self
    }
    pub(crate) const fn default_key(mut self) -> Self {
        self.default_key = true;
        self
    }
    /// `alias => target`, optionally with `keyAlias => key_alias`.
    pub(crate) const fn alias(
        mut self,
        target: &'static str,
        key_alias: Option<&'static str>,
    ) -> Self {
        self.alias = Some((target, key_alias));
        self
    }
}

/// An endpoint's `parameters`: the union of its property lists, `additionalProperties => 0`.
#[derive(Debug)]
pub(crate) struct Schema {
    pub(crate) parts: &'static [&'static [Prop]],
}

impl Schema {
    /// The property describing `key`, if the schema has one.
    pub(crate) fn prop(&self, key: &str) -> Option<&'static Prop> {
        self.parts
            .iter()
            .flat_map(|part| part.iter())
            .find(|p| p.name.matches(key))
    }

    /// `JSONSchema::validate`: every error at once, or `Ok`.
    pub(crate) fn validate(&self, params: &Params) -> ApiResult<()> {
        let mut errors = BTreeMap::new();
        for part in self.parts {
            for prop in part.iter() {
                check_declared(prop, params, &mut errors);
            }
        }
        for (key, values) in &params.0 {
            let Some(prop) = self.prop(key) else {
                add_error(
                    &mut errors,
                    key,
                    "property is not defined in schema and the schema does not allow additional properties",
                );
                continue;
            };
            if let Some(req) = prop.requires
                && !params.0.contains_key(req)
            {
                add_error(
                    &mut errors,
                    req,
                    &format!("missing property required by '{key}'"),
                );
            }
            if let [one] = values.as_slice() {
                check_value(prop, key, one, &mut errors);
            } else if !values.is_empty() && !matches!(prop.format, Format::List(_)) {
                let msg = format!("type check ('{}') failed - got ARRAY", prop.ty.name());
                add_error(&mut errors, key, &msg);
            } else if let Format::List(_) = prop.format {
                check_value(prop, key, &values.join(","), &mut errors);
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(ApiError::params(errors))
        }
    }
}

/// Exact-named, non-optional properties must be present.
fn check_declared(prop: &Prop, params: &Params, errors: &mut BTreeMap<String, String>) {
    if let Name::Exact(name) = prop.name
        && !prop.optional
        && params.0.get(name).is_none_or(Vec::is_empty)
    {
        add_error(errors, name, "property is missing and it is not optional");
    }
}

/// `add_error`: a second message for the same path is appended after a newline.
pub(super) fn add_error(errors: &mut BTreeMap<String, String>, path: &str, msg: &str) {
    errors
        .entry(path.to_owned())
        .and_modify(|e| {
            e.push('\n');
            e.push_str(msg);
        })
        .or_insert_with(|| msg.to_owned());
}

/// `check_type`: booleans are only `1`/`0` here (JSON `true`/`false` arrive as `1`/`0`).
fn type_ok(ty: Ty, value: &str) -> bool {
    match ty {
        Ty::Bool => value == "1" || value == "0",
        Ty::Int => formats::is_integer(value),
        Ty::Num => formats::is_number(value),
        Ty::Str => true,
    }
}

/// `check_prop` on a scalar value, in PVE's order; the first failing rule is reported.
pub(super) fn check_value(
    prop: &Prop,
    path: &str,
    value: &str,
    errors: &mut BTreeMap<String, String>,
) {
    if let Err(msg) = value_error(prop, path, value) {
        add_error(errors, path, &msg);
    }
}

fn value_error(prop: &Prop, path: &str, value: &str) -> Result<(), String> {
    if !type_ok(prop.ty, value) {
        return Err(format!(
            "type check ('{}') failed - got '{value}'",
            prop.ty.name()
        ));
    }
    let format = match prop.format {
        Format::None => Ok(()),
        Format::Check(check) => check(value),
        Format::List(check) => crate::propstr::split_list(value)
            .iter()
            .try_for_each(|v| check(v)),
        Format::Props(props) => parse_props(props, path, value).map(drop),
    };
    format.map_err(|e| format!("invalid format - {e}"))?;
    if prop.pattern.is_some_and(|p| !p(value)) {
        return Err("value does not match the regex pattern".to_owned());
    }
    let chars = value.chars().count();
    if let Some(max) = prop.max_length.filter(|m| chars > *m) {
        return Err(format!("value may only be {max} characters long"));
    }
    if let Some(min) = prop.min_length.filter(|m| chars < *m) {
        return Err(format!("value must be at least {min} characters long"));
    }
    if formats::is_number(value) {
        let n: f64 = value.parse().unwrap_or(0.0);
        if let Some(max) = prop.maximum.filter(|m| n > *m) {
            return Err(format!("value must have a maximum value of {max}"));
        }
        if let Some(min) = prop.minimum.filter(|m| n < *m) {
            return Err(format!("value must have a minimum value of {min}"));
        }
    }
    let allowed: Option<Vec<String>> = match prop.values {
        Values::None => None,
        Values::Fixed(v) => Some(v.iter().map(|s| (*s).to_owned()).collect()),
        Values::Computed(f) => Some(f()),
    };
    if let Some(allowed) = allowed.filter(|a| !a.iter().any(|v| v == value)) {
        return Err(format!(
            "value '{value}' does not have a value in the enumeration '{}'",
            allowed.join(", ")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
