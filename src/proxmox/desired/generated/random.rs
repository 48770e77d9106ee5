//! `random_password` and `random_string`: the hashicorp/random provider's character-class
//! rules, from the operating system's random source.

use std::collections::BTreeMap;

use rand::Rng;
use rand::rngs::OsRng;
use rand::seq::SliceRandom;

use super::Generated;

const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const NUMERIC: &str = "0123456789";
const SPECIAL: &str = "!@#$%&*()-_=+[]{}<>:?";

/// Generates the values (`result`, `id`) with the provider's character-class rules, from the
/// operating system's random source.
pub(super) fn generate(resource: &Generated) -> BTreeMap<String, String> {
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
    let length = count("length").clamp(1, 1024);
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
    let id = if resource.resource_type == "random_password" {
        "none".to_owned()
    } else {
        result.clone()
    };
    BTreeMap::from([("result".to_owned(), result), ("id".to_owned(), id)])
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
        }
    }

    #[test]
    fn generated_password_has_the_length_and_classes_asked_for() {
        let values = generate(&password(&[
            ("length", "24"),
            ("special", "false"),
            ("min_numeric", "3"),
        ]));
        let result = &values["result"];
        assert_eq!(result.chars().count(), 24);
        assert!(
            result.chars().all(char::is_alphanumeric),
            "{}",
            result.len()
        );
        assert!(result.chars().filter(char::is_ascii_digit).count() >= 3);
        assert_eq!(values["id"], "none");
    }

    #[test]
    fn two_generations_differ() {
        let spec = password(&[("length", "32")]);
        assert_ne!(generate(&spec)["result"], generate(&spec)["result"]);
    }
}
