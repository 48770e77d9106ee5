//! Decoding of the blocks that speak about state rather than declare resources: `moved`,
//! `removed` and `check`, with Terraform 1.15's structure diagnostics.

use hcl_edit::Span as _;
use hcl_edit::structure::Block;

use super::decode::{block_span, literal_bool, span, unexpected_attr, unexpected_block};
use super::{Check, Expr, Module, Moved, Removed, Validation};
use crate::diag::{Diagnostic, Span};

/// `moved { from = ..., to = ... }`; the addresses are checked when the module is walked.
pub(super) fn decode_moved(
    m: &mut Module,
    file: usize,
    block: &Block,
    diags: &mut Vec<Diagnostic>,
) {
    const ALLOWED: &[&str] = &["from", "to"];
    let sp = block_span(file, block);
    let (mut from, mut to) = (None, None);
    for a in block.body.attributes() {
        let e = Expr {
            expr: a.value.clone(),
            file,
        };
        match a.key.as_str() {
            "from" => from = Some(e),
            "to" => to = Some(e),
            _ => unexpected_attr(file, a, ALLOWED, diags),
        }
    }
    for b in block.body.blocks() {
        unexpected_block(file, b, diags);
    }
    match (from, to) {
        (Some(from), Some(to)) => m.moves.push(Moved { from, to, span: sp }),
        (None, _) => missing_argument("from", &sp, diags),
        (_, None) => missing_argument("to", &sp, diags),
    }
}

/// `removed { from = ...  lifecycle { destroy = BOOL } }`. Terraform 1.15 destroys when the
/// `lifecycle` block or its `destroy` is left out (checked with its oracle: see
/// `tests/oracle/moved.txt`); `connection` and `provisioner` blocks are refused, atoll runs
/// no provisioners.
pub(super) fn decode_removed(
    m: &mut Module,
    file: usize,
    block: &Block,
    diags: &mut Vec<Diagnostic>,
) {
    const ALLOWED: &[&str] = &["from"];
    let sp = block_span(file, block);
    let mut from = None;
    let mut destroy = true;
    for a in block.body.attributes() {
        match a.key.as_str() {
            "from" => {
                from = Some(Expr {
                    expr: a.value.clone(),
                    file,
                });
            }
            _ => unexpected_attr(file, a, ALLOWED, diags),
        }
    }
    for b in block.body.blocks() {
        if b.ident.as_str() != "lifecycle" {
            unexpected_block(file, b, diags);
            continue;
        }
        for a in b.body.attributes() {
            match a.key.as_str() {
                "destroy" => destroy = literal_bool(file, a, diags),
                _ => unexpected_attr(file, a, &["destroy"], diags),
            }
        }
        for inner in b.body.blocks() {
            unexpected_block(file, inner, diags);
        }
    }
    match from {
        Some(from) => m.removed.push(Removed {
            from,
            destroy,
            span: sp,
        }),
        None => missing_argument("from", &sp, diags),
    }
}

/// `check "NAME" { assert { condition error_message } }`: Terraform 1.15's rules (at least
/// one assert, each condition reads something from the configuration). A scoped `data`
/// block is refused: atoll reads data sources only at module level.
pub(super) fn decode_check(
    m: &mut Module,
    file: usize,
    block: &Block,
    diags: &mut Vec<Diagnostic>,
) {
    let sp = block_span(file, block);
    for a in block.body.attributes() {
        unexpected_attr(file, a, &[], diags);
    }
    let mut asserts = Vec::new();
    for b in block.body.blocks() {
        match b.ident.as_str() {
            "assert" => {
                let cond = b.body.get_attribute("condition");
                let msg = b.body.get_attribute("error_message");
                let (Some(c), Some(e)) = (cond, msg) else {
                    diags.push(Diagnostic::error(
                        "Missing required argument",
                        "An assert block requires both \"condition\" and \"error_message\" arguments.",
                        Some(block_span(file, b)),
                    ));
                    continue;
                };
                let mut refs = Vec::new();
                crate::eval::references(&c.value, &mut refs);
                let condition = Expr {
                    expr: c.value.clone(),
                    file,
                };
                if refs.is_empty() {
                    diags.push(Diagnostic::error(
                        "Invalid assert expression",
                        "The condition expression must refer to at least one object from elsewhere in the configuration, or else its result would not be checking anything.",
                        condition.span(),
                    ));
                    continue;
                }
                asserts.push(Validation {
                    span: condition.span().unwrap_or_else(|| block_span(file, b)),
                    condition,
                    error_message: Expr {
                        expr: e.value.clone(),
                        file,
                    },
                });
            }
            "data" => diags.push(Diagnostic::error(
                "Unsupported block type",
                "atoll does not read data sources scoped to a check block yet; declare the data source at module level and refer to it from the assert.",
                span(file, b.ident.span()),
            )),
            _ => unexpected_block(file, b, diags),
        }
    }
    // Terraform 1.15 says this too when every assert was refused
    if asserts.is_empty() {
        diags.push(Diagnostic::error(
            "Zero assert blocks",
            "Check blocks must have at least one assert block.",
            Some(sp),
        ));
        return;
    }
    m.checks.push(Check { asserts });
}

fn missing_argument(name: &str, at: &Span, diags: &mut Vec<Diagnostic>) {
    diags.push(Diagnostic::error(
        "Missing required argument",
        format!("The argument \"{name}\" is required, but no definition was found."),
        Some(at.clone()),
    ));
}
