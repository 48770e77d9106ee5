//! `random_pet` (hashicorp/random, `internal/provider/resource_pet.go`): a name of `length`
//! words from golang-petname's lists (`petname.txt`, the version the provider pins), adverbs
//! then an adjective then an animal, joined by `separator`, after `prefix` when given.

use std::collections::BTreeMap;

use rand::rngs::OsRng;
use rand::seq::SliceRandom;

const WORDS: &str = include_str!("petname.txt");

/// The most words atoll puts in one name: a pull request chooses `length`.
pub(super) const MAX_WORDS: i64 = 1024;

/// One of the word lists (`adjectives`, `adverbs`, `names`).
fn list(name: &str) -> Vec<&'static str> {
    WORDS
        .lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(": "))
        .map(|words| words.split(' ').collect())
        .unwrap_or_default()
}

/// `length` beyond atoll's bound is refused with the reason (the provider has none).
pub(super) fn check(arguments: &BTreeMap<String, String>) -> Result<(), String> {
    match words(arguments) {
        n if n > MAX_WORDS => Err(format!(
            "length {n} is more words than the {MAX_WORDS} atoll puts in one name (a pull \
             request chooses it)"
        )),
        _ => Ok(()),
    }
}

fn words(arguments: &BTreeMap<String, String>) -> i64 {
    arguments
        .get("length")
        .and_then(|n| n.trim().parse::<f64>().ok())
        .map_or(2, |n| n as i64)
}

/// golang-petname's `Generate(words, separator)`: one word is an animal, two an adjective and
/// an animal, more put `words - 2` adverbs first (fewer than one word gives two, as there).
pub(super) fn generate(
    arguments: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, String> {
    let count = words(arguments).min(MAX_WORDS);
    let separator = arguments.get("separator").map_or("-", String::as_str);
    let pick = |name: &str| {
        list(name)
            .choose(&mut OsRng)
            .copied()
            .ok_or_else(|| format!("the {name} word list is empty"))
    };
    let mut words = Vec::new();
    if count == 1 {
        words.push(pick("names")?);
    } else {
        for _ in 2..count {
            words.push(pick("adverbs")?);
        }
        words.extend([pick("adjectives")?, pick("names")?]);
    }
    let pet = words.join(separator).to_lowercase();
    let id = match arguments.get("prefix").filter(|p| !p.is_empty()) {
        Some(prefix) => format!("{prefix}{separator}{pet}"),
        None => pet,
    };
    Ok(BTreeMap::from([("id".to_owned(), id)]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxmox::desired::generated::test_args as args;

    #[test]
    fn a_pet_name_is_adverbs_an_adjective_and_an_animal() {
        assert_eq!(
            (
                list("adjectives").len(),
                list("adverbs").len(),
                list("names").len()
            ),
            (449, 261, 452)
        );
        let id = generate(&args(&[
            ("length", "4"),
            ("separator", "_"),
            ("prefix", "ct"),
        ]))
        .expect("pet")["id"]
            .clone();
        let parts: Vec<&str> = id.split('_').collect();
        assert_eq!(parts.len(), 5, "{id}");
        assert_eq!(parts[0], "ct");
        assert!(list("adverbs").contains(&parts[1]) && list("adverbs").contains(&parts[2]));
        assert!(list("adjectives").contains(&parts[3]), "{id}");
        assert!(list("names").contains(&parts[4]), "{id}");
        let one = generate(&args(&[("length", "1")])).expect("pet")["id"].clone();
        assert!(list("names").contains(&one.as_str()), "{one}");
        let zero = generate(&args(&[("length", "0")])).expect("pet")["id"].clone();
        assert_eq!(zero.split('-').count(), 2, "{zero}");
        assert!(check(&args(&[("length", "5000")])).is_err());
    }
}
