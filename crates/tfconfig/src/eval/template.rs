//! Templates: `"${...}"` interpolation, `%{if}`/`%{for}` directives, `~` strip markers and
//! heredocs. A template that is a single interpolation returns the value itself, unconverted.
//! The text is charged to the budget's bytes as it is written, so a `%{for}` over a large
//! collection stops when the budget is spent, not after building the whole string.

use std::ops::Range;

use hcl_edit::Span as _;
use hcl_edit::template::{Directive, Element, StringTemplate, Template};

use super::Scope;
use crate::diag::Diagnostic;
use crate::types::{Constraint, convert};
use crate::value::{Type, Value, format_number};

pub(super) fn eval_string_template(
    s: &Scope<'_>,
    t: &StringTemplate,
    range: Option<Range<usize>>,
) -> Result<Value, Diagnostic> {
    if let Some(Element::Interpolation(i)) = t.as_single_element() {
        return s.eval(&i.expr);
    }
    eval_template(s, t, range, false)
}

/// Evaluates a template to a string value. `by_line` for heredocs and template files, whose
/// literal text HCL splits at its newlines, so a strip marker reaches one line only; a quoted
/// string is one literal (its `\n` are escapes), stripped whole.
pub(crate) fn eval_template(
    s: &Scope<'_>,
    t: &Template,
    range: Option<Range<usize>>,
    by_line: bool,
) -> Result<Value, Diagnostic> {
    let mut r = Render {
        out: String::new(),
        strip_next: false,
        by_line,
        unknown: false,
        marked: false,
        range: range.clone(),
        literal_start: None,
        nested: 0,
    };
    r.template(s, t)?;
    s.charge(1, range)?;
    let v = if r.unknown {
        Value::Unknown(Type::String)
    } else {
        Value::String(crate::value::nfc(r.out))
    };
    Ok(v.mark(r.marked))
}

struct Render {
    out: String,
    strip_next: bool,
    by_line: bool,
    unknown: bool,
    marked: bool,
    /// The template's range, for the budget's diagnostic about its literal text.
    range: Option<Range<usize>>,
    /// Where the literal text just written starts in `out`; `None` after a value or a
    /// directive. A strip marker strips only literal text, never an interpolated value.
    literal_start: Option<usize>,
    /// How many directives deep the current text is.
    nested: usize,
}

impl Render {
    /// `{~`: strips the whitespace at the end of the text before it. HCL splits template
    /// literals at newlines, so only the last line's piece is stripped: its trailing spaces,
    /// and its newline when the text ends with one, never the lines before.
    fn strip_before(&mut self, strip: bool) {
        let Some(start) = self.literal_start.filter(|_| strip) else {
            return;
        };
        let body = self.out.strip_suffix('\n').unwrap_or(&self.out);
        let line_start = match body[start..].rfind('\n') {
            Some(at) if self.by_line => start + at + 1,
            _ => start,
        };
        let keep = line_start + self.out[line_start..].trim_end().len();
        self.out.truncate(keep);
    }

    /// `~}` before `text`: strips the whitespace at its start, up to and including the first
    /// newline (the indentation of the next line stays, as in HCL).
    fn literal(&mut self, s: &Scope<'_>, text: &str) -> Result<(), Diagnostic> {
        let text = if self.strip_next {
            let first_line = match text.find('\n') {
                Some(at) if self.by_line => at + 1,
                _ => text.len(),
            };
            let kept = text[..first_line].trim_start();
            &text[first_line - kept.len()..]
        } else {
            text
        };
        self.strip_next = false;
        // The parser decodes the escapes of a quoted string's top-level text only.
        let decoded;
        let text = if self.nested > 0 && !self.by_line && text.contains('\\') {
            decoded = unescape(text);
            &decoded
        } else {
            text
        };
        let start = self.out.len();
        self.push(s, text, self.range.clone())?;
        self.literal_start = Some(self.literal_start.unwrap_or(start));
        Ok(())
    }

    /// Appends text, charging its bytes.
    fn push(
        &mut self,
        s: &Scope<'_>,
        text: &str,
        range: Option<Range<usize>>,
    ) -> Result<(), Diagnostic> {
        s.charge_bytes(text.len() as u64, range)?;
        self.out.push_str(text);
        Ok(())
    }

    fn template(&mut self, s: &Scope<'_>, t: &Template) -> Result<(), Diagnostic> {
        for el in t.iter() {
            match el {
                Element::Literal(l) => self.literal(s, l.value())?,
                Element::Interpolation(i) => {
                    self.strip_before(i.strip.strip_start());
                    let v = s.eval(&i.expr)?;
                    self.push_value(s, v, i.expr.span())?;
                    self.strip_next = i.strip.strip_end();
                }
                Element::Directive(d) => match d.as_ref() {
                    Directive::If(dir) => self.if_directive(s, dir)?,
                    Directive::For(dir) => self.for_directive(s, dir)?,
                },
            }
        }
        Ok(())
    }

    fn push_value(
        &mut self,
        s: &Scope<'_>,
        v: Value,
        range: Option<Range<usize>>,
    ) -> Result<(), Diagnostic> {
        self.literal_start = None;
        let (v, marked) = v.into_unmarked();
        self.marked |= marked || v.contains_sensitive();
        match v {
            Value::String(st) => self.push(s, &st, range)?,
            Value::Number(n) => self.push(s, &format_number(n), range)?,
            Value::Bool(b) => self.push(s, if b { "true" } else { "false" }, range)?,
            Value::Unknown(_) => self.unknown = true,
            Value::Null(_) => {
                return Err(s.error(
                    "Invalid template interpolation value",
                    "The expression result is null. Cannot include a null value in a string template.",
                    range,
                ));
            }
            other => {
                return Err(s.error(
                    "Invalid template interpolation value",
                    format!("Cannot include the given value in a string template: string required, but have {}.", other.ty().friendly()),
                    range,
                ));
            }
        }
        Ok(())
    }

    /// `%{if}`: the chosen branch's text, with the marks of both (HCL evaluates it as a
    /// conditional). Each strip marker strips the literal text next to it in the source.
    fn if_directive(
        &mut self,
        s: &Scope<'_>,
        dir: &hcl_edit::template::IfDirective,
    ) -> Result<(), Diagnostic> {
        self.strip_before(dir.if_expr.strip.strip_start());
        self.literal_start = None;
        self.strip_next = false;
        let (cond, marked) = s.eval(&dir.if_expr.cond_expr)?.into_unmarked();
        self.marked |= marked;
        let cond = match cond {
            Value::String(_) => convert(cond, &Constraint::Bool).unwrap_or(Value::Null(Type::Bool)),
            other => other,
        };
        let branch = match cond {
            Value::Bool(b) => b,
            Value::Unknown(_) => {
                self.unknown = true;
                return Ok(());
            }
            _ => {
                return Err(s.error(
                    "Invalid template directive",
                    "The condition value of an %{if} directive must be a bool.",
                    dir.if_expr.cond_expr.span(),
                ));
            }
        };
        let else_t = dir.else_expr.as_ref();
        let endif_strip = dir.endif_expr.strip.strip_start();
        let (chosen, other) = if branch {
            let before_end = else_t.map_or(endif_strip, |e| e.strip.strip_start());
            let chosen = (
                &dir.if_expr.template,
                dir.if_expr.strip.strip_end(),
                before_end,
            );
            (Some(chosen), else_t.map(|e| &e.template))
        } else {
            let chosen = else_t.map(|e| (&e.template, e.strip.strip_end(), endif_strip));
            (chosen, Some(&dir.if_expr.template))
        };
        if let Some(t) = other {
            self.marked |= self.branch_marked(s, t);
        }
        if let Some((t, strip_start, strip_end)) = chosen {
            self.strip_next = strip_start;
            self.nested += 1;
            let done = self.template(s, t);
            self.nested -= 1;
            done?;
            self.strip_before(strip_end);
        }
        self.literal_start = None;
        self.strip_next = dir.endif_expr.strip.strip_end();
        Ok(())
    }

    /// Whether the branch not taken would be marked (its errors do not count).
    fn branch_marked(&self, s: &Scope<'_>, t: &Template) -> bool {
        let mut r = Render {
            out: String::new(),
            strip_next: false,
            by_line: self.by_line,
            unknown: false,
            marked: false,
            range: self.range.clone(),
            literal_start: None,
            nested: self.nested + 1,
        };
        r.template(s, t).is_ok() && r.marked
    }

    fn for_directive(
        &mut self,
        s: &Scope<'_>,
        dir: &hcl_edit::template::ForDirective,
    ) -> Result<(), Diagnostic> {
        let f = &dir.for_expr;
        self.strip_before(f.strip.strip_start());
        self.literal_start = None;
        self.strip_next = false;
        let (coll, marked) = s.eval(&f.collection_expr)?.into_unmarked();
        self.marked |= marked;
        let range = f.collection_expr.span();
        let Some(pairs) = super::expr::iteration_pairs(s, coll, "a %{for} directive", range)?
        else {
            self.unknown = true;
            return Ok(());
        };
        for (k, v) in pairs {
            let mut b = vec![(f.value_var.as_str().to_owned(), v)];
            if let Some(kv) = &f.key_var {
                b.push((kv.as_str().to_owned(), k));
            }
            let child = s.child(b);
            self.strip_next = f.strip.strip_end();
            self.literal_start = None;
            self.nested += 1;
            let done = self.template(&child, &f.template);
            self.nested -= 1;
            done?;
            self.strip_before(dir.endfor_expr.strip.strip_start());
        }
        self.literal_start = None;
        self.strip_next = dir.endfor_expr.strip.strip_end();
        Ok(())
    }
}

/// Decodes the escapes of quoted-string text: `\n \r \t \" \\` and `\uNNNN`/`\UNNNNNNNN`.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some(q @ ('"' | '\\')) => out.push(q),
            Some(u @ ('u' | 'U')) => {
                let len = if u == 'u' { 4 } else { 8 };
                let hex: String = chars.by_ref().take(len).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => {
                        out.push('\\');
                        out.push(u);
                        out.push_str(&hex);
                    }
                }
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}
