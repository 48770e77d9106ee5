//! The hashicorp/random provider's resources (its `internal/provider/resource_*.go`), from the
//! operating system's random source: `random_password` and `random_string` with its
//! character-class rules, `random_id`, `random_integer`, `random_uuid` and `random_bytes`; and
//! the null provider's `null_resource`, whose id is random too.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use rand::rngs::OsRng;
use rand::seq::SliceRandom;
use rand::{Rng, RngCore};

use super::Generated;

const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const NUMERIC: &str = "0123456789";
const SPECIAL: &str = "!@#$%&*()-_=+[]{}<>:?";

/// Generates the values (`result`, `id`, and a password's `bcrypt_hash`) with the provider's
/// character-class rules, from the operating system's random source. `numeric` holds
/// `number`'s value when the configuration sets that (`tfconfig::schema::planned`).
fn password_values(resource: &Generated) -> Result<BTreeMap<String, String>, String> {
    let arg = |name: &str| resource.arguments.get(name).map(String::as_str);
    let on = |name: &str| arg(name) != Some("false");
    let count = |name: &str| {
        arg(name)
            .and_then(|n| n.parse::<f64>().ok())
            .map_or(0, |n| n.max(0.0) as usize)
    };
    let special = arg("override_special").unwrap_or(SPECIAL);
    let classes = [
        (on("lower"), LOWER, count("min_lower")),
        (on("upper"), UPPER, count("min_upper")),
        (on("numeric"), NUMERIC, count("min_numeric")),
        (on("special"), special, count("min_special")),
    ];
    let length = count("length").clamp(1, MAX_LENGTH);
    let mut rng = OsRng;
    let mut chars: Vec<char> = Vec::with_capacity(length);
    let mut pool: Vec<char> = Vec::new();
    for (enabled, set, min) in classes {
        if !enabled || set.is_empty() {
            continue;
        }
        let set: Vec<char> = set.chars().collect();
        for _ in 0..min {
            chars.push(set[rng.gen_range(0..set.len())]);
        }
        pool.extend(set);
    }
    if pool.is_empty() {
        pool = LOWER.chars().collect();
    }
    while chars.len() < length {
        chars.push(pool[rng.gen_range(0..pool.len())]);
    }
    chars.shuffle(&mut rng);
    let result: String = chars.into_iter().collect();
    if resource.resource_type == "random_password" {
        let hash = bcrypt_hash(&result)?;
        return Ok(BTreeMap::from([
            ("result".to_owned(), result),
            ("id".to_owned(), "none".to_owned()),
            ("bcrypt_hash".to_owned(), hash),
        ]));
    }
    Ok(BTreeMap::from([
        ("id".to_owned(), result.clone()),
        ("result".to_owned(), result),
    ]))
}

/// The provider's `generateHash`: bcrypt at Go's `DefaultCost` (10) of the password's first 72
/// bytes, in the `$2a$` form Go's x/crypto writes.
fn bcrypt_hash(password: &str) -> Result<String, String> {
    let bytes = password.as_bytes();
    let salt: [u8; 16] = OsRng.r#gen();
    bcrypt::hash_with_salt(&bytes[..bytes.len().min(72)], 10, salt)
        .map(|parts| parts.format_for_version(bcrypt::Version::TwoA))
        .map_err(|e| format!("hashing the password with bcrypt failed: {e}"))
}

/// The most characters or bytes atoll generates for one value (the schema checks lengths
/// against it on their line; generation clamps as a second line).
const MAX_LENGTH: usize = tfconfig::schema::MAX_GENERATED_LENGTH as usize;

/// The attributes each type computes.
pub(super) fn computed(resource_type: &str) -> &'static [&'static str] {
    match resource_type {
        "random_id" => &["b64_std", "b64_url", "dec", "hex", "id"],
        "random_password" => &["bcrypt_hash", "id", "result"],
        "random_integer" | "random_uuid" | "random_string" => &["id", "result"],
        "random_bytes" => &["base64", "hex"],
        "null_resource" => &["id"],
        "random_shuffle" => &["id", "result"],
        _ => &[],
    }
}

fn number(resource: &Generated, name: &str) -> Option<f64> {
    resource
        .arguments
        .get(name)
        .and_then(|n| n.trim().parse().ok())
}

/// What the schema's per-argument validators cannot say: `random_integer`'s range and seed.
pub(super) fn check(resource: &Generated) -> Result<(), String> {
    if !matches!(
        resource.resource_type.as_str(),
        "random_integer" | "random_shuffle"
    ) {
        return Ok(());
    }
    if resource.arguments.contains_key("seed") {
        return Err(
            "seed is not supported: Terraform derives the value from the seed with \
                    Go's math/rand, which atoll does not reproduce; remove seed (the value is \
                    kept in state either way)"
                .to_owned(),
        );
    }
    if resource.resource_type == "random_shuffle" {
        return Ok(());
    }
    match (number(resource, "min"), number(resource, "max")) {
        (Some(min), Some(max)) if min > max => Err(format!(
            "minimum value needs to be smaller than or equal to maximum value ({min} > {max})"
        )),
        (Some(min), Some(max)) if min.fract() != 0.0 || max.fract() != 0.0 => {
            Err("min and max must be whole numbers".to_owned())
        }
        _ => Ok(()),
    }
}

/// Generates the values of one resource.
pub(super) fn generate(resource: &Generated) -> Result<BTreeMap<String, String>, String> {
    let pairs = |pairs: Vec<(&str, String)>| {
        pairs
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<BTreeMap<_, _>>()
    };
    let bytes = |name: &str| {
        let n = number(resource, name).map_or(1, |n| n.clamp(1.0, MAX_LENGTH as f64) as usize);
        let mut buf = vec![0u8; n];
        OsRng.fill_bytes(&mut buf);
        buf
    };
    Ok(match resource.resource_type.as_str() {
        "random_password" | "random_string" => password_values(resource)?,
        "random_id" => {
            let raw = bytes("byte_length");
            let prefix = resource
                .arguments
                .get("prefix")
                .cloned()
                .unwrap_or_default();
            let id = URL_SAFE_NO_PAD.encode(&raw);
            pairs(vec![
                ("b64_url", format!("{prefix}{id}")),
                ("b64_std", format!("{prefix}{}", STANDARD.encode(&raw))),
                ("hex", format!("{prefix}{}", hex::encode(&raw))),
                ("dec", format!("{prefix}{}", decimal(&raw))),
                ("id", id),
            ])
        }
        "random_integer" => {
            let (min, max) = (
                number(resource, "min").unwrap_or(0.0) as i64,
                number(resource, "max").unwrap_or(0.0) as i64,
            );
            let value = OsRng.gen_range(min..=max.max(min));
            pairs(vec![
                ("result", value.to_string()),
                ("id", value.to_string()),
            ])
        }
        "random_uuid" => {
            let uuid = uuid::Uuid::new_v4().to_string();
            pairs(vec![("result", uuid.clone()), ("id", uuid)])
        }
        "random_bytes" => {
            let raw = bytes("length");
            pairs(vec![
                ("base64", STANDARD.encode(&raw)),
                ("hex", hex::encode(&raw)),
            ])
        }
        "random_shuffle" => shuffle(resource)?,
        // The null provider's id: a random non-negative 63-bit integer, in decimal.
        "null_resource" => pairs(vec![("id", (OsRng.next_u64() >> 1).to_string())]),
        other => return Err(format!("atoll does not generate {other}")),
    })
}

/// `random_shuffle`: whole permutations of `input` one after another until `result_count`
/// items (default: as many as `input` has), as the provider fills its result; `id` is `-`. A
/// sensitive `input` makes the result sensitive.
fn shuffle(resource: &Generated) -> Result<BTreeMap<String, String>, String> {
    use tfconfig::{Type, Value};
    let input = resource
        .arguments
        .get("input")
        .map(|text| Value::from_stored(text))
        .transpose()?
        .unwrap_or(Value::List(Type::String, Vec::new()));
    let sensitive = input.contains_sensitive();
    let items = input.as_seq().unwrap_or_default().to_vec();
    let count = number(resource, "result_count")
        .filter(|n| *n > 0.0)
        .map_or(items.len(), |n| n.min(MAX_LENGTH as f64) as usize);
    let mut result = Vec::with_capacity(count);
    while !items.is_empty() && result.len() < count {
        let mut order: Vec<&Value> = items.iter().collect();
        order.shuffle(&mut OsRng);
        result.extend(order.into_iter().take(count - result.len()).cloned());
    }
    let result = Value::List(Type::String, result).mark(sensitive);
    let stored = result
        .to_stored()
        .ok_or("the shuffled list cannot be stored")?;
    Ok(BTreeMap::from([
        ("id".to_owned(), "-".to_owned()),
        ("result".to_owned(), stored),
    ]))
}

/// The bytes as one big-endian unsigned integer, in decimal (Go's `big.Int.SetBytes`).
fn decimal(bytes: &[u8]) -> String {
    // Little-endian base-10^9 limbs.
    let mut limbs: Vec<u32> = vec![0];
    for &byte in bytes {
        let mut carry = u64::from(byte);
        for limb in &mut limbs {
            let v = u64::from(*limb) * 256 + carry;
            *limb = (v % 1_000_000_000) as u32;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push((carry % 1_000_000_000) as u32);
            carry /= 1_000_000_000;
        }
    }
    let mut out = limbs.last().map(|l| l.to_string()).unwrap_or_default();
    for limb in limbs.iter().rev().skip(1) {
        out.push_str(&format!("{limb:09}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn password(args: &[(&str, &str)]) -> Generated {
        Generated {
            address: "random_password.pw".to_owned(),
            resource_type: "random_password".to_owned(),
            arguments: args
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            pending: Vec::new(),
        }
    }

    #[test]
    fn generated_password_has_the_length_and_classes_asked_for() {
        let values = password_values(&password(&[
            ("length", "24"),
            ("special", "false"),
            ("min_numeric", "3"),
        ]))
        .expect("generated");
        let result = &values["result"];
        assert_eq!(result.chars().count(), 24);
        assert!(
            result.chars().all(char::is_alphanumeric),
            "{}",
            result.len()
        );
        assert!(result.chars().filter(char::is_ascii_digit).count() >= 3);
        assert_eq!(values["id"], "none");
        assert!(values["bcrypt_hash"].starts_with("$2a$10$"));
        assert!(bcrypt::verify(result, &values["bcrypt_hash"]).expect("a bcrypt hash"));
    }

    #[test]
    fn two_generations_differ() {
        let spec = password(&[("length", "32")]);
        let once = || generate(&spec).expect("generated")["result"].clone();
        assert_ne!(once(), once());
    }

    fn of(resource_type: &str, args: &[(&str, &str)]) -> Generated {
        Generated {
            resource_type: resource_type.to_owned(),
            ..password(args)
        }
    }

    #[test]
    fn random_id_gives_every_encoding_of_the_same_bytes() {
        let v = generate(&of("random_id", &[("byte_length", "8"), ("prefix", "p-")])).expect("id");
        let raw = URL_SAFE_NO_PAD.decode(&v["id"]).expect("base64url");
        assert_eq!(raw.len(), 8);
        assert_eq!(v["b64_url"], format!("p-{}", v["id"]));
        assert_eq!(v["b64_std"], format!("p-{}", STANDARD.encode(&raw)));
        assert_eq!(v["hex"], format!("p-{}", hex::encode(&raw)));
        let big = raw.iter().fold(0u128, |n, b| n * 256 + u128::from(*b));
        assert_eq!(v["dec"], format!("p-{big}"));
        assert_eq!(decimal(&[0x01, 0x00, 0x00, 0x00, 0x00]), "4294967296");
        assert_eq!(decimal(&[0xff; 16]), u128::MAX.to_string());
        assert_eq!(decimal(&[0]), "0");
    }

    #[test]
    fn integers_stay_in_their_range_and_bad_ranges_are_refused() {
        for _ in 0..50 {
            let v = generate(&of("random_integer", &[("min", "-3"), ("max", "3")])).expect("int");
            let n: i64 = v["result"].parse().expect("number");
            assert!((-3..=3).contains(&n));
            assert_eq!(v["id"], v["result"]);
        }
        assert!(check(&of("random_integer", &[("min", "4"), ("max", "3")])).is_err());
        assert!(
            check(&of(
                "random_integer",
                &[("min", "1"), ("max", "3"), ("seed", "x")]
            ))
            .is_err()
        );
        let uuid = generate(&of("random_uuid", &[])).expect("uuid");
        assert_eq!(
            uuid::Uuid::parse_str(&uuid["result"]).map(|u| u.get_version_num()),
            Ok(4)
        );
    }
}

#[cfg(test)]
mod shuffle_tests {
    use super::*;
    use tfconfig::{Type, Value};

    #[test]
    fn a_shuffle_repeats_whole_permutations_up_to_the_count() {
        let input = Value::List(Type::String, ["a", "b", "c"].map(Value::string).to_vec());
        let resource = Generated {
            address: "random_shuffle.s".to_owned(),
            resource_type: "random_shuffle".to_owned(),
            arguments: BTreeMap::from([
                ("input".to_owned(), input.to_stored().expect("stored")),
                ("result_count".to_owned(), "5".to_owned()),
            ]),
            pending: Vec::new(),
        };
        let values = generate(&resource).expect("shuffled");
        let result = Value::from_stored(&values["result"]).expect("stored");
        assert_eq!(
            result.ty(),
            Type::List(Box::new(Type::String)),
            "{result:?}"
        );
        let items = result.as_seq().expect("a list");
        assert_eq!(items.len(), 5);
        let mut head: Vec<String> = items[..3].iter().map(ToString::to_string).collect();
        head.sort();
        assert_eq!(head, ["\"a\"", "\"b\"", "\"c\""]);
        assert_eq!(values["id"], "-");
    }
}
