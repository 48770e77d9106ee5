//! Small constructors that keep the schema tables readable.

use super::{AttrSchema, BlockSchema, BodySchema, Check, Deprecation, Replace, Sdk};
use crate::types::Constraint;
use crate::value::Value;

pub(super) fn s() -> Constraint {
    Constraint::String
}
pub(super) fn n() -> Constraint {
    Constraint::Number
}
pub(super) fn b() -> Constraint {
    Constraint::Bool
}
/// Any type (cty's `DynamicPseudoType`): the value keeps the type it was written with.
pub(super) fn dy() -> Constraint {
    Constraint::Any
}
pub(super) fn ls() -> Constraint {
    Constraint::List(Box::new(Constraint::String))
}
/// A list of `inner` (bpg's `ipv4_addresses`: a list of lists of strings).
pub(super) fn list_of(inner: Constraint) -> Constraint {
    Constraint::List(Box::new(inner))
}
pub(super) fn ms() -> Constraint {
    Constraint::Map(Box::new(Constraint::String))
}

pub(super) fn base(name: &'static str, ty: Constraint) -> AttrSchema {
    AttrSchema {
        name,
        ty,
        required: false,
        computed: false,
        read_only: false,
        default: None,
        replace: Replace::Never,
        sensitive: false,
        check: None,
        deprecated: None,
    }
}

/// Deprecated by its provider, with the provider's message.
pub(super) fn deprecated(a: AttrSchema, sdk: Sdk, message: &'static str) -> AttrSchema {
    AttrSchema {
        deprecated: Some(Deprecation { sdk, message }),
        ..a
    }
}

/// With the provider's validator.
pub(super) fn checked(a: AttrSchema, check: Check) -> AttrSchema {
    AttrSchema {
        check: Some(check),
        ..a
    }
}
/// Required.
pub(super) fn req(name: &'static str, ty: Constraint) -> AttrSchema {
    AttrSchema {
        required: true,
        ..base(name, ty)
    }
}
/// Optional, no default.
pub(super) fn opt(name: &'static str, ty: Constraint) -> AttrSchema {
    base(name, ty)
}
/// Optional with a default.
pub(super) fn def(name: &'static str, ty: Constraint, v: Value) -> AttrSchema {
    AttrSchema {
        default: Some(v),
        ..base(name, ty)
    }
}
pub(super) fn ds(name: &'static str, v: &str) -> AttrSchema {
    def(name, s(), Value::string(v))
}
pub(super) fn dn(name: &'static str, v: f64) -> AttrSchema {
    def(name, n(), Value::Number(v))
}
pub(super) fn db(name: &'static str, v: bool) -> AttrSchema {
    def(name, b(), Value::Bool(v))
}
pub(super) fn empty_list(name: &'static str) -> AttrSchema {
    def(
        name,
        ls(),
        Value::List(crate::value::Type::String, Vec::new()),
    )
}
/// Optional + computed.
pub(super) fn oc(name: &'static str, ty: Constraint) -> AttrSchema {
    AttrSchema {
        computed: true,
        ..base(name, ty)
    }
}
/// Read-only computed.
pub(super) fn ro(name: &'static str, ty: Constraint) -> AttrSchema {
    AttrSchema {
        computed: true,
        read_only: true,
        ..base(name, ty)
    }
}
pub(super) fn fnew(a: AttrSchema) -> AttrSchema {
    AttrSchema {
        replace: Replace::Always,
        ..a
    }
}
pub(super) fn sens(a: AttrSchema) -> AttrSchema {
    AttrSchema {
        sensitive: true,
        ..a
    }
}

pub(super) fn block(
    name: &'static str,
    max: Option<usize>,
    attrs: Vec<AttrSchema>,
    blocks: Vec<BlockSchema>,
) -> BlockSchema {
    BlockSchema {
        name,
        max_items: max,
        replace_on_presence: false,
        default_when_absent: false,
        body: BodySchema { attrs, blocks },
    }
}
pub(super) fn defaulted(b: BlockSchema) -> BlockSchema {
    BlockSchema {
        default_when_absent: true,
        ..b
    }
}
pub(super) fn replacing(b: BlockSchema) -> BlockSchema {
    BlockSchema {
        replace_on_presence: true,
        ..b
    }
}
