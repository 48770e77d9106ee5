//! The utility providers' resources whose values atoll generates and keeps in state
//! (hashicorp/random, hashicorp/tls, hashicorp/time, and Terraform's built-in
//! `terraform_data`): every argument forces a new value, as their `RequiresReplace` plan
//! modifiers do; `keepers` and `triggers` are maps whose change does the same. The one
//! arguments updated in place are `terraform_data.input`, `time_offset`'s offsets and base,
//! `time_rotating`'s rotation and `time_sleep`'s durations, as in their providers.

use super::builders::*;
use super::{
    AttrSchema, BodySchema, Check, MAX_GENERATED_LENGTH, MAX_SLEEP_SECS, RSA_BITS, ResourceSchema,
};

/// A length atoll generates: from 1 to [`MAX_GENERATED_LENGTH`].
fn length(a: super::AttrSchema) -> super::AttrSchema {
    checked(
        a,
        Check::Between {
            min: 1.0,
            max: MAX_GENERATED_LENGTH,
            why: Some("atoll's bound on a generated value"),
        },
    )
}

fn generated(type_name: &'static str, attrs: Vec<super::AttrSchema>) -> ResourceSchema {
    ResourceSchema {
        type_name,
        body: BodySchema {
            attrs,
            blocks: vec![],
        },
        generated: true,
    }
}

pub(super) fn random(password: bool) -> ResourceSchema {
    let mut attrs = vec![
        ro("id", s()),
        length(fnew(req("length", n()))),
        fnew(db("special", true)),
        fnew(db("upper", true)),
        fnew(db("lower", true)),
        fnew(db("numeric", true)),
        // Deprecated, the old name of `numeric`: when set, `numeric` takes its value
        // (`super::planned`, as the provider's `NumberNumericAttributePlanModifier` does).
        deprecated(
            fnew(opt("number", b())),
            super::Sdk::Framework,
            "**NOTE**: This is deprecated, use `numeric` instead.",
        ),
        fnew(dn("min_lower", 0.0)),
        fnew(dn("min_upper", 0.0)),
        fnew(dn("min_numeric", 0.0)),
        fnew(dn("min_special", 0.0)),
        fnew(opt("override_special", s())),
        fnew(opt("keepers", ms())),
    ];
    if password {
        attrs.push(sens(ro("result", s())));
        attrs.push(sens(ro("bcrypt_hash", s())));
    } else {
        attrs.push(ro("result", s()));
    }
    let type_name = if password {
        "random_password"
    } else {
        "random_string"
    };
    generated(type_name, attrs)
}

pub(super) fn tls_private_key() -> ResourceSchema {
    let attrs = vec![
        ro("id", s()),
        checked(
            fnew(req("algorithm", s())),
            Check::OneOf(&["RSA", "ECDSA", "ED25519"]),
        ),
        checked(
            fnew(dn("rsa_bits", 2048.0)),
            Check::Between {
                min: RSA_BITS.0,
                max: RSA_BITS.1,
                why: Some(
                    "atoll's bound: larger keys take minutes to generate; 4096 is the usual strong choice",
                ),
            },
        ),
        checked(
            fnew(ds("ecdsa_curve", "P224")),
            Check::OneOf(&["P224", "P256", "P384", "P521"]),
        ),
        sens(ro("private_key_pem", s())),
        sens(ro("private_key_openssh", s())),
        sens(ro("private_key_pem_pkcs8", s())),
        ro("public_key_pem", s()),
        ro("public_key_openssh", s()),
        ro("public_key_fingerprint_md5", s()),
        ro("public_key_fingerprint_sha256", s()),
    ];
    generated("tls_private_key", attrs)
}

pub(super) fn random_id() -> ResourceSchema {
    generated(
        "random_id",
        vec![
            fnew(opt("keepers", ms())),
            length(fnew(req("byte_length", n()))),
            fnew(opt("prefix", s())),
            ro("id", s()),
            ro("b64_url", s()),
            ro("b64_std", s()),
            ro("hex", s()),
            ro("dec", s()),
        ],
    )
}

pub(super) fn random_integer() -> ResourceSchema {
    generated(
        "random_integer",
        vec![
            fnew(opt("keepers", ms())),
            fnew(req("min", n())),
            fnew(req("max", n())),
            fnew(opt("seed", s())),
            ro("id", s()),
            ro("result", n()),
        ],
    )
}

pub(super) fn random_uuid() -> ResourceSchema {
    generated(
        "random_uuid",
        vec![fnew(opt("keepers", ms())), ro("id", s()), ro("result", s())],
    )
}

pub(super) fn random_bytes() -> ResourceSchema {
    generated(
        "random_bytes",
        vec![
            fnew(opt("keepers", ms())),
            length(fnew(req("length", n()))),
            sens(ro("base64", s())),
            sens(ro("hex", s())),
        ],
    )
}

pub(super) fn time_static() -> ResourceSchema {
    generated(
        "time_static",
        vec![
            fnew(opt("triggers", ms())),
            fnew(oc("rfc3339", s())),
            ro("id", s()),
            ro("year", n()),
            ro("month", n()),
            ro("day", n()),
            ro("hour", n()),
            ro("minute", n()),
            ro("second", n()),
            ro("unix", n()),
        ],
    )
}

/// `null_resource` (hashicorp/null): an id, made anew when a `triggers` value changes. Its
/// provisioners never run in atoll (they are warned about where written).
pub(super) fn null_resource() -> ResourceSchema {
    generated(
        "null_resource",
        vec![fnew(opt("triggers", ms())), ro("id", s())],
    )
}

/// `terraform_data` (Terraform's built-in provider, `internal/builtin/providers/terraform/
/// resource_data.go`): `input` and `triggers_replace` of any type. `output` is `input` as it
/// was applied (a changed `input` is an update in place, and the evaluator plans `output` as
/// Terraform does: see [`super::planned`]); a changed `triggers_replace` replaces it; `id` is a
/// random UUID.
pub(super) fn terraform_data() -> ResourceSchema {
    generated(
        "terraform_data",
        vec![
            opt("input", dy()),
            fnew(opt("triggers_replace", dy())),
            ro("output", dy()),
            ro("id", s()),
        ],
    )
}

/// `random_shuffle` (hashicorp/random, `internal/provider/resource_shuffle.go`): `input`
/// permuted, `result_count` items long (repeating whole permutations when longer); `seed` is
/// refused by the engine, as `random_integer.seed` is.
pub(super) fn random_shuffle() -> ResourceSchema {
    generated(
        "random_shuffle",
        vec![
            fnew(opt("keepers", ms())),
            fnew(opt("seed", s())),
            fnew(req("input", ls())),
            checked(
                fnew(opt("result_count", n())),
                Check::Between {
                    min: 0.0,
                    max: MAX_GENERATED_LENGTH,
                    why: Some("atoll's bound on a generated value"),
                },
            ),
            ro("result", ls()),
            ro("id", s()),
        ],
    )
}

/// The parts of a timestamp the time provider computes (`year` ... `unix`), and `id`.
fn time_parts(mut attrs: Vec<AttrSchema>) -> Vec<AttrSchema> {
    attrs.extend(
        ["year", "month", "day", "hour", "minute", "second", "unix"].map(|name| ro(name, n())),
    );
    attrs.push(ro("id", s()));
    attrs
}

/// `time_offset` (hashicorp/time, `internal/provider/resource_time_offset.go`): `base_rfc3339`
/// (now when not given) offset by the `offset_*` arguments; a changed offset or base is an
/// update in place, a changed `triggers` replaces it.
pub(super) fn time_offset() -> ResourceSchema {
    let mut attrs = vec![fnew(opt("triggers", ms())), oc("base_rfc3339", s())];
    for name in [
        "offset_years",
        "offset_months",
        "offset_days",
        "offset_hours",
        "offset_minutes",
        "offset_seconds",
    ] {
        attrs.push(opt(name, n()));
    }
    attrs.push(ro("rfc3339", s()));
    generated("time_offset", time_parts(attrs))
}

/// `time_rotating` (hashicorp/time, `internal/provider/resource_time_rotating.go`): a base
/// timestamp `rfc3339` (now when not given) and the time it rotates, `rotation_rfc3339`; the
/// parts are of the rotation time. A changed rotation is an update in place; a changed `rfc3339`
/// or `triggers` replaces it, and so does the rotation time once it has passed (the engine).
pub(super) fn time_rotating() -> ResourceSchema {
    let at_least_one = |name| checked(opt(name, n()), Check::AtLeast(1.0));
    let attrs = vec![
        fnew(opt("triggers", ms())),
        fnew(oc("rfc3339", s())),
        at_least_one("rotation_years"),
        at_least_one("rotation_months"),
        at_least_one("rotation_days"),
        at_least_one("rotation_hours"),
        at_least_one("rotation_minutes"),
        oc("rotation_rfc3339", s()),
    ];
    generated("time_rotating", time_parts(attrs))
}

/// `time_sleep` (hashicorp/time, `internal/provider/resource_time_sleep.go`): the apply waits
/// `create_duration` after creating it and `destroy_duration` before destroying it; changing
/// a duration alone waits for nothing (an update in place), a changed `triggers` replaces it.
pub(super) fn time_sleep() -> ResourceSchema {
    let duration = |name| {
        checked(
            opt(name, s()),
            Check::Duration {
                max_secs: MAX_SLEEP_SECS,
            },
        )
    };
    generated(
        "time_sleep",
        vec![
            duration("create_duration"),
            duration("destroy_duration"),
            fnew(opt("triggers", ms())),
            ro("id", s()),
        ],
    )
}

/// `random_pet` (hashicorp/random, `internal/provider/resource_pet.go`): `length` words from
/// golang-petname's lists joined by `separator`, after `prefix` when given.
pub(super) fn random_pet() -> ResourceSchema {
    generated(
        "random_pet",
        vec![
            fnew(opt("keepers", ms())),
            fnew(dn("length", 2.0)),
            fnew(opt("prefix", s())),
            fnew(ds("separator", "-")),
            ro("id", s()),
        ],
    )
}
