//! Functions that take expressions rather than values: `try` and `can` (each argument evaluated
//! in turn, errors caught), `convert` (a value and a type expression) and `templatestring` (a
//! reference to a template, and its variables).

use std::ops::Range;

use hcl_edit::Span as _;
use hcl_edit::expr::Expression;
use hcl_edit::template::Element;

use super::file;
use crate::diag::Diagnostic;
use crate::eval::Scope;
use crate::types::{TypeExprError, apply_defaults, convert, parse_type};
use crate::value::{Type, Value};

/// Calls one of [`super::LAZY`] with its argument expressions.
pub(crate) fn call_lazy(
    s: &Scope<'_>,
    name: &str,
    args: &[&Expression],
    expand: bool,
    range: Option<Range<usize>>,
) -> Result<Value, Diagnostic> {
    if expand {
        return Err(s.error(
            "Invalid expanding argument value",
            format!("The \"{name}\" function does not accept an expanding argument."),
            range,
        ));
    }
    match (name, args) {
        ("can", [one]) => match s.eval(one) {
            Ok(v) if v.contains_unknown() => Ok(Value::Unknown(Type::Bool)),
            Ok(_) => Ok(Value::Bool(true)),
            Err(_) => Ok(Value::Bool(false)),
        },
        ("can", _) => Err(s.error(
            "Invalid number of arguments",
            "Function \"can\" expects 1 argument(s).",
            range,
        )),
        ("try", []) => Err(s.error(
            "Not enough function arguments",
            "Function \"try\" expects at least one argument.",
            range,
        )),
        ("try", _) => try_each(s, args, range),
        ("convert", [value, ty]) => convert_call(s, value, ty, range),
        ("templatestring", [template, vars]) => templatestring(s, template, vars, range),
        (_, _) => Err(arity(s, name, args.len(), range)),
    }
}

fn arity(s: &Scope<'_>, name: &str, given: usize, range: Option<Range<usize>>) -> Diagnostic {
    let params = match name {
        "convert" => ["value", "type"],
        _ => ["template", "vars"],
    };
    match params.get(given) {
        Some(missing) => s.error(
            "Not enough function arguments",
            format!("Function \"{name}\" expects 2 argument(s). Missing value for \"{missing}\"."),
            range,
        ),
        None => s.error(
            "Too many function arguments",
            format!("Function \"{name}\" expects only 2 argument(s)."),
            range,
        ),
    }
}

fn try_each(
    s: &Scope<'_>,
    args: &[&Expression],
    range: Option<Range<usize>>,
) -> Result<Value, Diagnostic> {
    for a in args {
        if let Ok(v) = s.eval(a) {
            if v.is_unknown() {
                return Ok(Value::Unknown(Type::Dynamic));
            }
            return Ok(v);
        }
    }
    Err(s.error(
        "Error in function call",
        "Call to function \"try\" failed: no expression succeeded.",
        range,
    ))
}

fn invalid(
    s: &Scope<'_>,
    param: &str,
    msg: impl std::fmt::Display,
    secrets: &[String],
    range: Option<Range<usize>>,
) -> Diagnostic {
    let msg = if secrets.is_empty() {
        msg.to_string()
    } else {
        super::redact(&msg.to_string(), secrets)
    };
    s.error(
        "Invalid function argument",
        format!("Invalid value for \"{param}\" parameter: {msg}."),
        range,
    )
}

/// `convert(value, type)`: the value converted to a type constraint as a variable's value is
/// (`optional` attributes and their defaults included), the defaults applied after converting.
fn convert_call(
    s: &Scope<'_>,
    value: &Expression,
    ty: &Expression,
    range: Option<Range<usize>>,
) -> Result<Value, Diagnostic> {
    let v = s.eval(value)?;
    // Defaults are constants, as Terraform reads them with no variables and no functions.
    let constant = Scope::constant(s.ctx, s.file);
    let eval = |e: &Expression| {
        constant.eval(e).map_err(|d| TypeExprError {
            detail: d.detail,
            range: e.span(),
        })
    };
    let c = parse_type(ty, &eval).map_err(|e| {
        s.error(
            "Invalid type specification",
            e.detail,
            e.range.or_else(|| range.clone()),
        )
    })?;
    if v.is_unknown() {
        let marked = v.contains_sensitive();
        return Ok(Value::Unknown(c.to_type()).mark(marked));
    }
    let secrets = super::sensitive_texts(std::slice::from_ref(&v));
    let out = convert(v, &c).map_err(|e| invalid(s, "value", e.message(), &secrets, range))?;
    Ok(apply_defaults(out, &c))
}

/// Whether a `templatestring` template argument is a reference, as Terraform requires (a
/// variable, and attributes, indexes or splats of one).
fn is_reference(e: &Expression) -> bool {
    match e {
        Expression::Variable(_) => true,
        Expression::Traversal(t) => is_reference(&t.expr),
        _ => false,
    }
}

/// Terraform's refusal of a template argument that is not a reference.
fn not_a_reference(e: &Expression) -> &'static str {
    const WRAP: &str = "invalid template expression: templatestring is only for rendering templates retrieved dynamically from elsewhere; to treat the inner expression as template syntax, write the reference expression directly without any template interpolation syntax";
    const LITERAL: &str = "invalid template expression: templatestring is only for rendering templates retrieved dynamically from elsewhere, and so does not support providing a literal template; consider using a template string expression instead";
    const INLINE: &str = "invalid template expression: templatestring is only for rendering templates retrieved dynamically from elsewhere; to render an inline template, consider using a plain template string expression";
    const OTHER: &str = "invalid template expression: must be a direct reference to a single string from elsewhere, containing valid Terraform template syntax";
    match e {
        Expression::String(_) => LITERAL,
        Expression::StringTemplate(t) => match t.iter().collect::<Vec<_>>().as_slice() {
            [Element::Interpolation(_)] => WRAP,
            [Element::Literal(_)] => LITERAL,
            _ => INLINE,
        },
        Expression::HeredocTemplate(h) => match h.template.iter().collect::<Vec<_>>().as_slice() {
            [Element::Literal(_)] => LITERAL,
            _ => INLINE,
        },
        _ => OTHER,
    }
}

/// `templatestring(ref, vars)`: renders the template text a reference holds, with only `vars`
/// in scope and no file functions, as `templatefile` renders a file.
fn templatestring(
    s: &Scope<'_>,
    template: &Expression,
    vars: &Expression,
    range: Option<Range<usize>>,
) -> Result<Value, Diagnostic> {
    let sb = &s.ctx.sandbox;
    file::allowed_in_template(sb, "templatestring").map_err(|e| {
        super::call_error(s, "templatestring", &TEMPLATESTRING, e, &[], range.clone())
    })?;
    if !is_reference(template) {
        return Err(invalid(
            s,
            "template",
            not_a_reference(template),
            &[],
            range,
        ));
    }
    let text = s.eval(template).map_err(|d| {
        invalid(
            s,
            "template",
            format!("invalid template expression: {}", d.detail),
            &[],
            range.clone(),
        )
    })?;
    let vars = s.eval(vars)?;
    if text.is_unknown() || vars.is_unknown() {
        return Ok(Value::Unknown(Type::String));
    }
    let (text, marked) = text.into_unmarked();
    let Value::String(text) = text else {
        return Err(invalid(
            s,
            "template",
            "invalid template value: a string is required",
            &[],
            range,
        ));
    };
    let secrets = if marked {
        vec![text.clone()]
    } else {
        Vec::new()
    };
    let (vars, vars_marked) = vars.into_unmarked();
    let vars = file::template_vars(Some(&vars)).map_err(|_| {
        invalid(
            s,
            "vars",
            "invalid vars value: must be a map",
            &[],
            range.clone(),
        )
    })?;
    if let Some(bad) = vars
        .keys()
        .find(|k| hcl_edit::Ident::try_new(k.as_str()).is_err())
    {
        let msg = format!(
            "invalid template variable name {bad:?}: must start with a letter, followed by zero or more letters, digits, and underscores"
        );
        return Err(invalid(s, "vars", msg, &[], range));
    }
    let parsed = crate::nesting::check(&text)
        .map_err(|deep| deep.detail())
        .and_then(|()| hcl_edit::parser::parse_template(&text).map_err(|e| e.message().to_owned()))
        .map(|mut t| {
            crate::heredoc::flush_template(&mut t, &text);
            t
        })
        .map_err(|e| {
            invalid(
                s,
                "template",
                format!("invalid template: {e}"),
                &secrets,
                range.clone(),
            )
        })?;
    let file = s
        .ctx
        .sources
        .borrow_mut()
        .add("<templatestring argument>".to_owned(), text);
    let out = file::render(s, "templatestring", file, &parsed, vars)
        .map_err(|e| super::call_error(s, "templatestring", &TEMPLATESTRING, e, &secrets, range))?;
    Ok(out.mark(marked || vars_marked))
}

const TEMPLATESTRING: super::Sig = super::Sig {
    params: &["template", "vars"],
    variadic: false,
    structural: false,
    ret: Type::String,
};
