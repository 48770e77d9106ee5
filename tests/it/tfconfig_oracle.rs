//! The evaluator against real Terraform: every case of `tests/oracle/expressions.jsonl` is
//! evaluated by atoll and compared with the answer Terraform 1.15 gave (`tests/oracle/
//! answers.json`, recorded by `tests/oracle/record.py`, which the test command re-runs to check
//! the recording). A case atoll answers differently must be listed in `divergences.txt` with
//! its reason, and a listed case that agrees fails the test too, so the list stays true.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value as Json;
use tfconfig::{Value, evaluate_expression};

fn oracle_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/oracle")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn cases() -> Vec<(String, String)> {
    oracle_file("expressions.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("//"))
        .map(|l| {
            let case: Json = serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}"));
            let field = |k: &str| case[k].as_str().expect(k).to_owned();
            (field("name"), field("expr"))
        })
        .collect()
}

/// `name: reason` per line; `#` starts a comment.
fn divergences() -> BTreeMap<String, String> {
    oracle_file("divergences.txt")
        .lines()
        .map(|l| l.split('#').next().unwrap_or_default().trim())
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (name, reason) = l.split_once(':').unwrap_or((l, ""));
            (name.trim().to_owned(), reason.trim().to_owned())
        })
        .collect()
}

/// The value as Terraform's `output -json` shows it: sensitive values unwrapped.
fn plain(v: &Value) -> Json {
    match v {
        Value::Sensitive(inner) => plain(inner),
        Value::List(_, items) | Value::Set(_, items) | Value::Tuple(items) => {
            Json::Array(items.iter().map(plain).collect())
        }
        Value::Map(_, m) | Value::Object(m) => {
            Json::Object(m.iter().map(|(k, v)| (k.clone(), plain(v))).collect())
        }
        other => other.to_json("(sensitive)", "(unknown)"),
    }
}

/// JSON equality with numbers compared by value (`1` and `1.0` are one number).
fn same(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// What atoll answers, in the recording's terms: `None` when it agrees with `answer`, else a
/// description of the difference.
fn disagreement(expr: &str, answer: &Json) -> Option<String> {
    let ours = evaluate_expression(expr);
    match (answer.get("error").is_some(), ours) {
        (true, Err(_)) => None,
        (true, Ok(v)) => Some(format!("Terraform refuses it; atoll answers {}", plain(&v))),
        (false, Err(e)) => Some(format!(
            "Terraform answers {}; atoll refuses it: {}",
            answer["value"],
            e.lines().next().unwrap_or_default()
        )),
        (false, Ok(v)) => {
            let v = plain(&v);
            (!same(&v, &answer["value"]))
                .then(|| format!("Terraform answers {}; atoll answers {v}", answer["value"]))
        }
    }
}

#[test]
fn the_evaluator_agrees_with_terraform_on_every_case_but_the_listed_divergences() {
    let answers: BTreeMap<String, Json> =
        serde_json::from_str(&oracle_file("answers.json")).expect("answers.json");
    let known = divergences();
    let cases = cases();
    let mut unexplained = Vec::new();
    let mut agree = 0;
    for (name, expr) in &cases {
        let answer = answers
            .get(name)
            .unwrap_or_else(|| panic!("no recorded answer for {name}: run tests/oracle/record.py"));
        match (disagreement(expr, answer), known.contains_key(name)) {
            (None, false) => agree += 1,
            (None, true) => unexplained.push(format!(
                "{name}: agrees now; remove it from divergences.txt"
            )),
            (Some(_), true) => {}
            (Some(diff), false) => unexplained.push(format!("{name} `{expr}`: {diff}")),
        }
    }
    for name in known.keys() {
        assert!(
            cases.iter().any(|(n, _)| n == name),
            "divergences.txt lists {name}, which is not a case"
        );
    }
    eprintln!(
        "oracle: atoll agrees with Terraform on {agree} of {} cases; {} known divergences",
        cases.len(),
        known.len()
    );
    assert!(unexplained.is_empty(), "{}", unexplained.join("\n"));
}
