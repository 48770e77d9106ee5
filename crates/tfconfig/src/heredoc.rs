//! Flush heredocs (`<<-EOT`) as HCL reads them: the `~` strip markers first, then the
//! indentation.
//!
//! hcl-edit removes a flush heredoc's common indentation while it parses, before anything
//! applies the strip markers, and measures it on its own literals. HCL's parser (hclsyntax's
//! `parseTemplateParts` and `flushHeredocTemplateParts`) works on the scanner's tokens instead:
//! it applies every marker to the literal token next to it, then takes the smallest indentation
//! of the literals that open a line (after stripping; a directive or interpolation that opens a
//! line counts as none, a line of only spaces not at all) and removes it from those literals
//! alone. So `%{~ for}` indented like the text strips its own line's indentation to nothing,
//! and every other line keeps its indentation: cloud-init YAML written that way stays YAML.
//!
//! Owns: rewriting the literals of every flush heredoc of a parsed body, expression or
//! template from the source text it was parsed from, and clearing that heredoc's strip
//! markers, which are then applied. Must not: touch any other template, or change what the
//! heredoc's interpolations and directives evaluate (only literal text changes).

use hcl_edit::Span as _;
use hcl_edit::expr::Expression;
use hcl_edit::structure::Body;
use hcl_edit::template::{Directive, Element, HeredocTemplate, Strip, Template};
use hcl_edit::visit_mut::{self, VisitMut};
use unicode_segmentation::UnicodeSegmentation as _;

/// Rewrites the flush heredocs of a body parsed from `src`.
pub(crate) fn flush_body(body: &mut Body, src: &str) {
    Flusher { src }.visit_body_mut(body);
}

/// Rewrites the flush heredocs of an expression parsed from `src`.
pub(crate) fn flush_expr(expr: &mut Expression, src: &str) {
    Flusher { src }.visit_expr_mut(expr);
}

/// Rewrites the flush heredocs inside the interpolations of a template parsed from `src`.
pub(crate) fn flush_template(template: &mut Template, src: &str) {
    Flusher { src }.visit_template_mut(template);
}

struct Flusher<'a> {
    src: &'a str,
}

impl VisitMut for Flusher<'_> {
    fn visit_heredoc_template_mut(&mut self, node: &mut HeredocTemplate) {
        if is_flush(node, self.src) {
            flush(&mut node.template, self.src);
        }
        // Heredocs inside its interpolations are rewritten too.
        visit_mut::visit_heredoc_template_mut(self, node);
    }
}

/// Whether the heredoc opens with `<<-`: the text before its template is `<<-DELIM` and a
/// line ending.
fn is_flush(h: &HeredocTemplate, src: &str) -> bool {
    let Some(start) = h.template.span().map(|s| s.start) else {
        return false;
    };
    src.get(..start)
        .map(|before| before.trim_end_matches(['\n', '\r']))
        .and_then(|before| before.strip_suffix(h.delimiter.as_str()))
        .is_some_and(|before| before.ends_with("<<-"))
}

/// A token of HCL's template scanner, as far as stripping and flushing tell them apart: a
/// literal's text up to and including a newline, or a `${…}`/`%{…}` sequence with its markers.
enum Token {
    Literal { slot: usize, text: String },
    Sequence { strip: Strip },
}

/// Gives the heredoc's literals the text HCL gives them and clears its strip markers. Left as
/// hcl-edit parsed it when a literal's place in the source is not known.
fn flush(template: &mut Template, src: &str) {
    let mut tokens = Vec::new();
    let mut slots = 0;
    if tokenize(template, src, &mut tokens, &mut slots).is_none() {
        return;
    }
    strip(&mut tokens);
    remove_indentation(&mut tokens);
    let mut texts = vec![String::new(); slots];
    for token in tokens {
        if let Token::Literal { slot, text } = token {
            texts[slot].push_str(&text);
        }
    }
    let mut texts = texts.into_iter();
    write_back(template, &mut texts);
}

/// The template's tokens in source order, descending into directives (not interpolations).
fn tokenize(t: &Template, src: &str, out: &mut Vec<Token>, slots: &mut usize) -> Option<()> {
    for el in t.iter() {
        match el {
            Element::Literal(l) => {
                let raw = src.get(l.span()?)?;
                for line in raw.split_inclusive('\n') {
                    out.push(Token::Literal {
                        slot: *slots,
                        text: line.to_owned(),
                    });
                }
                *slots += 1;
            }
            Element::Interpolation(i) => out.push(Token::Sequence { strip: i.strip }),
            Element::Directive(d) => match d.as_ref() {
                Directive::If(d) => {
                    out.push(Token::Sequence {
                        strip: d.if_expr.strip,
                    });
                    tokenize(&d.if_expr.template, src, out, slots)?;
                    if let Some(e) = &d.else_expr {
                        out.push(Token::Sequence { strip: e.strip });
                        tokenize(&e.template, src, out, slots)?;
                    }
                    out.push(Token::Sequence {
                        strip: d.endif_expr.strip,
                    });
                }
                Directive::For(d) => {
                    out.push(Token::Sequence {
                        strip: d.for_expr.strip,
                    });
                    tokenize(&d.for_expr.template, src, out, slots)?;
                    out.push(Token::Sequence {
                        strip: d.endfor_expr.strip,
                    });
                }
            },
        }
    }
    Some(())
}

/// The strip markers, as HCL's parser applies them: `{~` removes the trailing whitespace of
/// the literal token just before (one line's piece at most), `~}` the leading whitespace of
/// the one just after (up to and including its newline).
fn strip(tokens: &mut [Token]) {
    let mut trim_next = false;
    for i in 0..tokens.len() {
        let trim = std::mem::take(&mut trim_next);
        match &mut tokens[i] {
            Token::Literal { text, .. } => {
                if trim {
                    *text = text.trim_start().to_owned();
                }
            }
            Token::Sequence { strip } => {
                let strip = *strip;
                trim_next = strip.strip_end();
                if strip.strip_start()
                    && let Some(Token::Literal { text, .. }) =
                        i.checked_sub(1).map(|p| &mut tokens[p])
                {
                    text.truncate(text.trim_end().len());
                }
            }
        }
    }
}

/// HCL's flush rule: the smallest indentation, in grapheme clusters, of the tokens that open
/// a line (one of only whitespace and a newline does not count, a sequence counts as none),
/// removed from those literals alone. A line opens after a literal that ends with a newline,
/// once the markers have stripped it.
fn remove_indentation(tokens: &mut [Token]) {
    let mut least = usize::MAX;
    let mut opening = Vec::new();
    let mut newline = true;
    for (i, token) in tokens.iter().enumerate() {
        if std::mem::take(&mut newline) {
            let spaces = match token {
                Token::Literal { text, .. } => {
                    let rest = text.trim_start();
                    if rest.is_empty() && text.ends_with('\n') {
                        usize::MAX
                    } else {
                        opening.push(i);
                        text[..text.len() - rest.len()].graphemes(true).count()
                    }
                }
                Token::Sequence { .. } => 0,
            };
            least = least.min(spaces);
        }
        if let Token::Literal { text, .. } = token {
            newline = text.ends_with('\n');
        }
    }
    for i in opening {
        if let Token::Literal { text, .. } = &mut tokens[i] {
            let cut: usize = text.graphemes(true).take(least).map(str::len).sum();
            text.drain(..cut);
        }
    }
}

/// Stores the literals' new text (with `$${` and `%%{` unescaped, as the parser does) and
/// clears the markers just applied, in the order [`tokenize`] numbered the literals.
fn write_back(t: &mut Template, texts: &mut impl Iterator<Item = String>) {
    for el in t.iter_mut() {
        match el {
            Element::Literal(l) => **l = unescape(&texts.next().unwrap_or_default()),
            Element::Interpolation(i) => i.strip = Strip::None,
            Element::Directive(d) => match d.as_mut() {
                Directive::If(d) => {
                    d.if_expr.strip = Strip::None;
                    write_back(&mut d.if_expr.template, texts);
                    if let Some(e) = &mut d.else_expr {
                        e.strip = Strip::None;
                        write_back(&mut e.template, texts);
                    }
                    d.endif_expr.strip = Strip::None;
                }
                Directive::For(d) => {
                    d.for_expr.strip = Strip::None;
                    write_back(&mut d.for_expr.template, texts);
                    d.endfor_expr.strip = Strip::None;
                }
            },
        }
    }
}

/// A heredoc literal's escapes: `$${` and `%%{` stand for `${` and `%{`.
fn unescape(raw: &str) -> String {
    raw.replace("$${", "${").replace("%%{", "%{")
}

#[cfg(test)]
mod tests {
    use hcl_edit::expr::Expression;
    use hcl_edit::template::{Element, Strip, Template};

    fn heredoc(src: &str) -> Template {
        let mut e = hcl_edit::parser::parse_expr(src).expect("parses");
        super::flush_expr(&mut e, src);
        let Expression::HeredocTemplate(h) = e else {
            panic!("not a heredoc: {src}");
        };
        h.template
    }

    fn literals(t: &Template) -> Vec<String> {
        t.iter()
            .filter_map(|el| match el {
                Element::Literal(l) => Some(l.value().clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_stripped_directive_opening_a_line_keeps_every_lines_indentation() {
        let t =
            heredoc("<<-EOT\n    users:\n    %{~ if true }\n      - a\n    %{~ endif }\n    EOT");
        assert_eq!(literals(&t), ["    users:\n", "\n"]);
        let Some(Element::Directive(d)) = t.iter().nth(1) else {
            panic!("no directive");
        };
        let hcl_edit::template::Directive::If(d) = d.as_ref() else {
            panic!("not an if");
        };
        assert_eq!(literals(&d.if_expr.template), ["\n      - a\n"]);
        assert_eq!(d.if_expr.strip, Strip::None, "applied, so cleared");
    }

    #[test]
    fn a_heredoc_that_is_not_flush_keeps_its_text_and_markers() {
        let t = heredoc("<<EOT\n    a\n    ${~ \"b\"}\nEOT");
        assert_eq!(literals(&t), ["    a\n    ", "\n"]);
        let Some(Element::Interpolation(i)) = t.iter().nth(1) else {
            panic!("no interpolation");
        };
        assert_eq!(i.strip, Strip::Start);
    }

    #[test]
    fn a_flush_heredoc_inside_a_template_files_interpolation_is_flushed() {
        let src = "x ${<<-IN\n    a\n    %{~ if true }\n    b\n    %{~ endif }\n  IN\n}";
        let mut t = hcl_edit::parser::parse_template(src).expect("parses");
        super::flush_template(&mut t, src);
        let Some(Element::Interpolation(i)) = t.iter().nth(1) else {
            panic!("no interpolation");
        };
        let Expression::HeredocTemplate(h) = &i.expr else {
            panic!("not a heredoc");
        };
        assert_eq!(literals(&h.template), ["    a\n", "\n"]);
    }
}
