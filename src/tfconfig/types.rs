//! Type constraints (`string`, `list(...)`, `object({ a = optional(number, 2) })`, `any`),
//! `optional()` defaults applied recursively, and conversion of values to a constraint with
//! cty's error messages.

use std::collections::BTreeMap;

use hcl_edit::Span as _;
use hcl_edit::expr::Expression;

use super::value::{Type, Value, format_number};

/// A type constraint as written in a `variable` block or a resource schema.
#[derive(Clone, Debug, PartialEq)]
pub enum Constraint {
    Any,
    Bool,
    Number,
    String,
    List(Box<Constraint>),
    Set(Box<Constraint>),
    Map(Box<Constraint>),
    Tuple(Vec<Constraint>),
    Object(BTreeMap<String, ObjectAttr>),
}

/// One attribute of an object constraint.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectAttr {
    pub ty: Constraint,
    pub optional: bool,
    /// Default for an optional attribute (already converted, with nested defaults applied).
    pub default: Option<Value>,
}

impl Constraint {
    /// The value type this constraint produces (`any` is dynamic).
    pub fn to_type(&self) -> Type {
        match self {
            Constraint::Any => Type::Dynamic,
            Constraint::Bool => Type::Bool,
            Constraint::Number => Type::Number,
            Constraint::String => Type::String,
            Constraint::List(e) => Type::List(Box::new(e.to_type())),
            Constraint::Set(e) => Type::Set(Box::new(e.to_type())),
            Constraint::Map(e) => Type::Map(Box::new(e.to_type())),
            Constraint::Tuple(es) => Type::Tuple(es.iter().map(Constraint::to_type).collect()),
            Constraint::Object(attrs) => Type::Object(
                attrs
                    .iter()
                    .map(|(k, a)| (k.clone(), a.ty.to_type()))
                    .collect(),
            ),
        }
    }

    /// The constraint that accepts exactly values of `ty`.
    pub fn from_type(ty: &Type) -> Constraint {
        match ty {
            Type::Dynamic => Constraint::Any,
            Type::Bool => Constraint::Bool,
            Type::Number => Constraint::Number,
            Type::String => Constraint::String,
            Type::List(e) => Constraint::List(Box::new(Constraint::from_type(e))),
            Type::Set(e) => Constraint::Set(Box::new(Constraint::from_type(e))),
            Type::Map(e) => Constraint::Map(Box::new(Constraint::from_type(e))),
            Type::Tuple(es) => Constraint::Tuple(es.iter().map(Constraint::from_type).collect()),
            Type::Object(attrs) => Constraint::Object(
                attrs
                    .iter()
                    .map(|(k, t)| {
                        let a = ObjectAttr {
                            ty: Constraint::from_type(t),
                            optional: false,
                            default: None,
                        };
                        (k.clone(), a)
                    })
                    .collect(),
            ),
        }
    }

    /// Friendly name for "X required" messages.
    pub fn friendly(&self) -> String {
        match self {
            Constraint::Any => "any value".into(),
            Constraint::Object(_) => "object".into(),
            Constraint::Tuple(_) => "tuple".into(),
            other => other.to_type().friendly(),
        }
    }
}

/// A type-expression error: message and the byte range it is about.
#[derive(Debug, Clone)]
pub struct TypeExprError {
    pub detail: String,
    pub range: Option<std::ops::Range<usize>>,
}

/// Evaluates a default expression inside `optional(T, default)`.
pub type DefaultEval<'a> = dyn Fn(&Expression) -> Result<Value, TypeExprError> + 'a;

/// Parses a type expression (`map(object({ ... }))`).
pub fn parse_type(expr: &Expression, eval: &DefaultEval<'_>) -> Result<Constraint, TypeExprError> {
    parse_inner(expr, eval, 0)
}

fn err(detail: impl Into<String>, expr: &Expression) -> TypeExprError {
    TypeExprError {
        detail: detail.into(),
        range: expr.span(),
    }
}

fn parse_inner(
    expr: &Expression,
    eval: &DefaultEval<'_>,
    depth: usize,
) -> Result<Constraint, TypeExprError> {
    if depth > 32 {
        return Err(err(
            "Type expressions may be nested at most 32 levels deep.",
            expr,
        ));
    }
    match expr {
        Expression::Variable(v) => match v.as_str() {
            "string" => Ok(Constraint::String),
            "number" => Ok(Constraint::Number),
            "bool" => Ok(Constraint::Bool),
            "any" => Ok(Constraint::Any),
            "list" | "set" | "map" | "tuple" | "object" => Err(err(
                format!(
                    "The {} type constructor requires one argument specifying the element type.",
                    v.as_str()
                ),
                expr,
            )),
            other => Err(err(
                format!("The keyword \"{other}\" is not a valid type specification."),
                expr,
            )),
        },
        Expression::Parenthesis(p) => parse_inner(p.inner(), eval, depth + 1),
        Expression::FuncCall(call) => parse_call(call, expr, eval, depth),
        _ => Err(err(
            "A type specification is either a primitive type keyword (bool, number, string) or a complex type constructor call, like list(string).",
            expr,
        )),
    }
}

fn parse_call(
    call: &hcl_edit::expr::FuncCall,
    expr: &Expression,
    eval: &DefaultEval<'_>,
    depth: usize,
) -> Result<Constraint, TypeExprError> {
    let name = call.name.name.as_str();
    let args: Vec<&Expression> = call.args.iter().collect();
    let one = |what: &str| -> Result<&Expression, TypeExprError> {
        match args.as_slice() {
            [a] => Ok(*a),
            _ => Err(err(
                format!(
                    "The {what} type constructor requires one argument specifying the element type."
                ),
                expr,
            )),
        }
    };
    match name {
        "list" => Ok(Constraint::List(Box::new(parse_inner(
            one("list")?,
            eval,
            depth + 1,
        )?))),
        "set" => Ok(Constraint::Set(Box::new(parse_inner(
            one("set")?,
            eval,
            depth + 1,
        )?))),
        "map" => Ok(Constraint::Map(Box::new(parse_inner(
            one("map")?,
            eval,
            depth + 1,
        )?))),
        "tuple" => match one("tuple")? {
            Expression::Array(items) => Ok(Constraint::Tuple(
                items
                    .iter()
                    .map(|e| parse_inner(e, eval, depth + 1))
                    .collect::<Result<_, _>>()?,
            )),
            other => Err(err(
                "The tuple type constructor requires a list of element types.",
                other,
            )),
        },
        "object" => match one("object")? {
            Expression::Object(obj) => parse_object(obj, eval, depth),
            other => Err(err(
                "The object type constructor requires an object of attribute types.",
                other,
            )),
        },
        "optional" => Err(err(
            "Keyword \"optional\" is valid only as a modifier for object type attributes.",
            expr,
        )),
        other => Err(err(
            format!("Keyword \"{other}\" is not a valid type constructor."),
            expr,
        )),
    }
}

fn parse_object(
    obj: &hcl_edit::expr::Object,
    eval: &DefaultEval<'_>,
    depth: usize,
) -> Result<Constraint, TypeExprError> {
    let mut attrs = BTreeMap::new();
    for (key, value) in obj.iter() {
        let name = match key {
            hcl_edit::expr::ObjectKey::Ident(id) => id.as_str().to_owned(),
            hcl_edit::expr::ObjectKey::Expression(e) => match e.as_str() {
                Some(s) => s.to_owned(),
                None => {
                    return Err(err(
                        "Object constructor map keys must be attribute names.",
                        e,
                    ));
                }
            },
        };
        let vexpr = value.expr();
        let attr = match vexpr {
            Expression::FuncCall(call) if call.name.name.as_str() == "optional" => {
                let args: Vec<&Expression> = call.args.iter().collect();
                let (ty_expr, def_expr) = match args.as_slice() {
                    [t] => (*t, None),
                    [t, d] => (*t, Some(*d)),
                    _ => {
                        return Err(err(
                            "Optional attribute modifier expects at most two arguments: an attribute type, and a default value.",
                            vexpr,
                        ));
                    }
                };
                let ty = parse_inner(ty_expr, eval, depth + 1)?;
                let default = match def_expr {
                    Some(d) => {
                        let raw = eval(d)?;
                        let with_defaults = apply_defaults(raw, &ty);
                        let converted = convert(with_defaults, &ty).map_err(|e| {
                            err(
                                format!(
                                    "Invalid default value for optional attribute: {}.",
                                    e.message()
                                ),
                                d,
                            )
                        })?;
                        Some(converted)
                    }
                    None => None,
                };
                ObjectAttr {
                    ty,
                    optional: true,
                    default,
                }
            }
            other => ObjectAttr {
                ty: parse_inner(other, eval, depth + 1)?,
                optional: false,
                default: None,
            },
        };
        attrs.insert(name, attr);
    }
    Ok(Constraint::Object(attrs))
}

/// Applies `optional(T, default)` defaults recursively. Null and unknown values are left alone.
pub fn apply_defaults(value: Value, c: &Constraint) -> Value {
    let (v, marked) = value.into_unmarked();
    let out = match (v, c) {
        (v @ (Value::Null(_) | Value::Unknown(_)), _) => v,
        (Value::Object(mut m) | Value::Map(_, mut m), Constraint::Object(attrs)) => {
            for (name, attr) in attrs {
                let absent = m.get(name).is_none_or(Value::is_null);
                if absent {
                    if let Some(d) = &attr.default {
                        m.insert(name.clone(), d.clone());
                    }
                } else if let Some(cur) = m.remove(name) {
                    m.insert(name.clone(), apply_defaults(cur, &attr.ty));
                }
            }
            Value::Object(m)
        }
        (Value::Map(t, m), Constraint::Map(e)) => Value::Map(
            t,
            m.into_iter()
                .map(|(k, v)| (k, apply_defaults(v, e)))
                .collect(),
        ),
        (Value::Object(m), Constraint::Map(e)) => Value::Object(
            m.into_iter()
                .map(|(k, v)| (k, apply_defaults(v, e)))
                .collect(),
        ),
        (Value::List(t, items), Constraint::List(e) | Constraint::Set(e)) => {
            Value::List(t, items.into_iter().map(|v| apply_defaults(v, e)).collect())
        }
        (Value::Set(t, items), Constraint::List(e) | Constraint::Set(e)) => {
            Value::Set(t, items.into_iter().map(|v| apply_defaults(v, e)).collect())
        }
        (Value::Tuple(items), Constraint::List(e) | Constraint::Set(e)) => {
            Value::Tuple(items.into_iter().map(|v| apply_defaults(v, e)).collect())
        }
        (Value::Tuple(items), Constraint::Tuple(es)) => Value::Tuple(
            items
                .into_iter()
                .enumerate()
                .map(|(i, v)| match es.get(i) {
                    Some(e) => apply_defaults(v, e),
                    None => v,
                })
                .collect(),
        ),
        (v, _) => v,
    };
    out.mark(marked)
}

/// A conversion failure: the path to the failing element and what was wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct ConvError {
    pub path: Vec<String>,
    pub detail: String,
}

impl ConvError {
    fn new(detail: impl Into<String>) -> Self {
        ConvError {
            path: Vec::new(),
            detail: detail.into(),
        }
    }

    fn at(mut self, step: String) -> Self {
        self.path.insert(0, step);
        self
    }

    /// `element "dev-gitea": attribute "hostname" is required`.
    pub fn message(&self) -> String {
        let mut out = String::new();
        for p in &self.path {
            out.push_str(p);
            out.push_str(": ");
        }
        out.push_str(&self.detail);
        out
    }
}

/// Converts a value to a constraint, as cty's `convert.Convert` does.
pub fn convert(value: Value, c: &Constraint) -> Result<Value, ConvError> {
    let (v, marked) = value.into_unmarked();
    let out = convert_unmarked(v, c)?;
    Ok(out.mark(marked))
}

fn convert_unmarked(v: Value, c: &Constraint) -> Result<Value, ConvError> {
    match v {
        Value::Null(_) => return Ok(Value::Null(c.to_type())),
        Value::Unknown(_) => return Ok(Value::Unknown(c.to_type())),
        _ => {}
    }
    match c {
        Constraint::Any => Ok(v),
        Constraint::String => match v {
            Value::String(_) => Ok(v),
            Value::Number(n) => Ok(Value::String(format_number(n))),
            Value::Bool(b) => Ok(Value::String(b.to_string())),
            _ => Err(ConvError::new("string required")),
        },
        Constraint::Number => match v {
            Value::Number(_) => Ok(v),
            Value::String(s) => s
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite() && !s.trim().is_empty())
                .map(Value::Number)
                .ok_or_else(|| ConvError::new("a number is required")),
            _ => Err(ConvError::new("number required")),
        },
        Constraint::Bool => match v {
            Value::Bool(_) => Ok(v),
            Value::String(s) if s == "true" => Ok(Value::Bool(true)),
            Value::String(s) if s == "false" => Ok(Value::Bool(false)),
            Value::String(_) => Err(ConvError::new("a bool is required")),
            _ => Err(ConvError::new("bool required")),
        },
        Constraint::List(e) | Constraint::Set(e) => convert_seq(v, c, e),
        Constraint::Map(e) => convert_map(v, c, e),
        Constraint::Tuple(es) => convert_tuple(v, es),
        Constraint::Object(attrs) => convert_object(v, attrs),
    }
}

fn convert_seq(v: Value, c: &Constraint, e: &Constraint) -> Result<Value, ConvError> {
    let (Value::List(_, items) | Value::Set(_, items) | Value::Tuple(items)) = v else {
        return Err(ConvError::new(format!("{} required", c.friendly())));
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        out.push(convert(item, e).map_err(|err| err.at(format!("element {i}")))?);
    }
    let elem = unify_elements(&mut out, e)?;
    Ok(match c {
        Constraint::Set(_) => Value::new_set(elem, out),
        _ => Value::List(elem, out),
    })
}

fn convert_map(v: Value, c: &Constraint, e: &Constraint) -> Result<Value, ConvError> {
    let (Value::Map(_, entries) | Value::Object(entries)) = v else {
        return Err(ConvError::new(format!("{} required", c.friendly())));
    };
    let mut out = BTreeMap::new();
    for (k, item) in entries {
        let conv = convert(item, e)
            .map_err(|err| err.at(format!("element {}", super::value::quote(&k))))?;
        out.insert(k, conv);
    }
    let mut vals: Vec<Value> = out.values().cloned().collect();
    let elem = unify_elements(&mut vals, e)
        .map_err(|_| ConvError::new("all map elements must have the same type"))?;
    let out = out.into_keys().zip(vals).collect();
    Ok(Value::Map(elem, out))
}

/// For `list(any)`/`map(any)`: all elements must end up with one type.
fn unify_elements(items: &mut [Value], e: &Constraint) -> Result<Type, ConvError> {
    if *e != Constraint::Any {
        return Ok(e.to_type());
    }
    let Some(first) = items.iter().map(Value::ty).find(|t| *t != Type::Dynamic) else {
        return Ok(Type::Dynamic);
    };
    let target = Constraint::from_type(&first);
    for item in items.iter_mut() {
        if item.ty() != first {
            let taken = std::mem::replace(item, Value::null());
            *item = convert(taken, &target)
                .map_err(|_| ConvError::new("all list elements must have the same type"))?;
        }
    }
    Ok(first)
}

fn convert_tuple(v: Value, es: &[Constraint]) -> Result<Value, ConvError> {
    let (Value::List(_, items) | Value::Tuple(items) | Value::Set(_, items)) = v else {
        return Err(ConvError::new("tuple required"));
    };
    if items.len() != es.len() {
        return Err(ConvError::new(format!(
            "tuple required with exactly {} elements",
            es.len()
        )));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, (item, e)) in items.into_iter().zip(es).enumerate() {
        out.push(convert(item, e).map_err(|err| err.at(format!("element {i}")))?);
    }
    Ok(Value::Tuple(out))
}

fn convert_object(v: Value, attrs: &BTreeMap<String, ObjectAttr>) -> Result<Value, ConvError> {
    let (Value::Map(_, mut given) | Value::Object(mut given)) = v else {
        return Err(ConvError::new("object required"));
    };
    let missing: Vec<&str> = attrs
        .iter()
        .filter(|(k, a)| !a.optional && !given.contains_key(*k))
        .map(|(k, _)| k.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(ConvError::new(missing_message(&missing)));
    }
    let mut out = BTreeMap::new();
    for (name, attr) in attrs {
        let conv = match given.remove(name) {
            Some(item) => convert(item, &attr.ty)
                .map_err(|err| err.at(format!("attribute {}", super::value::quote(name))))?,
            None => Value::Null(attr.ty.to_type()),
        };
        out.insert(name.clone(), conv);
    }
    Ok(Value::Object(out))
}

fn missing_message(missing: &[&str]) -> String {
    let quoted: Vec<String> = missing.iter().map(|m| format!("\"{m}\"")).collect();
    match quoted.as_slice() {
        [one] => format!("attribute {one} is required"),
        [a, b] => format!("attributes {a} and {b} are required"),
        [init @ .., last] => format!("attributes {}, and {last} are required", init.join(", ")),
        [] => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> Constraint {
        let expr = hcl_edit::parser::parse_expr(src).unwrap_or_else(|e| panic!("{e}"));
        let eval = |e: &Expression| -> Result<Value, TypeExprError> {
            Ok(match e {
                Expression::Bool(b) => Value::Bool(*b.value()),
                Expression::Number(n) => Value::Number(n.as_f64().unwrap_or(0.0)),
                Expression::Object(o) if o.is_empty() => Value::Object(BTreeMap::new()),
                _ => Value::null(),
            })
        };
        parse_type(&expr, &eval).unwrap_or_else(|e| panic!("{}", e.detail))
    }

    #[test]
    fn optional_object_defaults_fill_absent_and_nested_attributes() {
        let c = parse(
            "object({ features = optional(object({ nesting = optional(bool, true), keyctl = optional(bool, false) }), {}) })",
        );
        let given = Value::Object(BTreeMap::new());
        let out =
            convert(apply_defaults(given, &c), &c).unwrap_or_else(|e| panic!("{}", e.message()));
        assert_eq!(
            out.to_string(),
            "{features = {keyctl = false, nesting = true}}"
        );
    }

    #[test]
    fn missing_attributes_are_listed_sorted() {
        let c = parse("object({ b = string, a = string, c = number })");
        let err = convert(Value::Object(BTreeMap::new()), &c)
            .err()
            .map(|e| e.message());
        assert_eq!(
            err.as_deref(),
            Some("attributes \"a\", \"b\", and \"c\" are required")
        );
    }

    #[test]
    fn nested_error_path_names_map_key_and_attribute() {
        let c = parse("map(object({ hostname = string }))");
        let v = Value::Object(BTreeMap::from([(
            "dev-gitea".to_owned(),
            Value::Object(BTreeMap::new()),
        )]));
        let err = convert(v, &c).err().map(|e| e.message());
        assert_eq!(
            err.as_deref(),
            Some("element \"dev-gitea\": attribute \"hostname\" is required")
        );
    }

    #[test]
    fn strings_convert_to_numbers_and_back() {
        assert_eq!(
            convert(Value::string("12"), &Constraint::Number),
            Ok(Value::Number(12.0))
        );
        assert_eq!(
            convert(Value::Number(12.0), &Constraint::String),
            Ok(Value::string("12"))
        );
        assert!(convert(Value::string("x"), &Constraint::Number).is_err());
    }

    #[test]
    fn optional_outside_object_is_rejected() {
        let expr = hcl_edit::parser::parse_expr("list(optional(string))")
            .unwrap_or_else(|e| panic!("{e}"));
        let eval = |_: &Expression| -> Result<Value, TypeExprError> { Ok(Value::null()) };
        assert!(parse_type(&expr, &eval).is_err());
    }
}
