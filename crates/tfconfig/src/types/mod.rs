//! Type constraints (`string`, `list(...)`, `object({ a = optional(number, 2) })`, `any`),
//! `optional()` defaults applied recursively, and conversion of values to a constraint with
//! cty's error messages.

use std::collections::BTreeMap;

use hcl_edit::Span as _;
use hcl_edit::expr::Expression;

mod convert;
mod unify;

pub use convert::{ConvError, apply_defaults, convert, undeclared_attributes};
pub use unify::{unify, unify_unsafe, unify_values};

use super::value::{Type, Value};

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
            Constraint::Tuple(es) => {
                Type::Tuple(Box::new(es.iter().map(Constraint::to_type).collect()))
            }
            Constraint::Object(attrs) => Type::Object(Box::new(
                attrs
                    .iter()
                    .map(|(k, a)| (k.clone(), a.ty.to_type()))
                    .collect(),
            )),
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
