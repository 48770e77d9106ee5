//! The evaluator against real Terraform: every case of the `tests/oracle/*.jsonl` files (at the
//! workspace root) is evaluated by atoll and compared with the answer Terraform 1.15 gave
//! (`tests/oracle/answers.json`, recorded by `tests/oracle/record.py`, which the test command
//! re-runs to check the recording). A case atoll answers differently must be listed in `divergences.txt` with
//! its reason, and a listed case that agrees fails the test too, so the list stays true.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use atoll_tfconfig::{Value, evaluate_expression};
use serde_json::Value as Json;

fn oracle_file(name: &str) -> String {
    let path = oracle_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn oracle_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/oracle")
}

/// One case: the file it comes from (its family), its name and its expression. A case marked
/// `"compare": "shape"` has a random answer (`bcrypt`'s salt): it agrees when both answer or both
/// refuse, and two strings agree when they have one length and the same text up to their last
/// `$` (a salted hash's algorithm and cost).
struct Case {
    file: String,
    name: String,
    expr: String,
    shape: bool,
}

/// Every case of every `*.jsonl` file, in file order.
fn cases() -> Vec<Case> {
    let mut files: Vec<String> = std::fs::read_dir(oracle_dir())
        .expect("tests/oracle")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        for l in oracle_file(&file).lines() {
            if l.trim().is_empty() || l.trim_start().starts_with("//") {
                continue;
            }
            let case: Json = serde_json::from_str(l).unwrap_or_else(|e| panic!("{file}: {l}: {e}"));
            let field = |k: &str| case[k].as_str().expect(k).to_owned();
            out.push(Case {
                file: file.trim_end_matches(".jsonl").to_owned(),
                name: field("name"),
                expr: field("expr"),
                shape: case["compare"] == "shape",
            });
        }
    }
    out
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

/// JSON equality with numbers compared by value (`1` and `1.0` are one number). `b` is the
/// recording's: a number no f64 holds is `{"$number": "<Terraform's text>"}` there, and agrees
/// only with a number atoll prints as exactly that text.
fn same(a: &Json, b: &Json) -> bool {
    if let Some(text) = exact_number(b) {
        return a.as_f64().is_some_and(|n| format!("{n}") == text);
    }
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

/// Two random answers of one shape: strings of one length with the same text up to their last
/// `$`, other values equal.
fn same_shape(a: &Json, b: &Json) -> bool {
    match (a.as_str(), b.as_str()) {
        (Some(x), Some(y)) => {
            let head = |s: &str| s.rfind('$').map(|i| s[..i].to_owned());
            x.len() == y.len() && head(x) == head(y)
        }
        _ => same(a, b),
    }
}

/// The text of a recorded `{"$number": "..."}`.
fn exact_number(v: &Json) -> Option<&str> {
    match v.as_object() {
        Some(o) if o.len() == 1 => o.get("$number")?.as_str(),
        _ => None,
    }
}

/// What atoll answers, in the recording's terms: `None` when it agrees with `answer`, else a
/// description of the difference.
fn disagreement(expr: &str, answer: &Json, shape: bool) -> Option<String> {
    let ours = evaluate_expression(expr);
    let same = if shape { same_shape } else { same };
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
    // Per file: (cases, agreeing).
    let mut families: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for Case {
        file,
        name,
        expr,
        shape,
    } in &cases
    {
        let answer = answers
            .get(name)
            .unwrap_or_else(|| panic!("no recorded answer for {name}: run tests/oracle/record.py"));
        let family = families.entry(file).or_default();
        family.0 += 1;
        match (disagreement(expr, answer, *shape), known.contains_key(name)) {
            (None, false) => {
                agree += 1;
                family.1 += 1;
            }
            (None, true) => unexplained.push(format!(
                "{name}: agrees now; remove it from divergences.txt"
            )),
            (Some(_), true) => {}
            (Some(diff), false) => unexplained.push(format!("{name} `{expr}`: {diff}")),
        }
    }
    for name in known.keys() {
        assert!(
            cases.iter().any(|c| &c.name == name),
            "divergences.txt lists {name}, which is not a case"
        );
    }
    for (family, (all, agreeing)) in &families {
        eprintln!("oracle: {family}: {agreeing} of {all} agree");
    }
    eprintln!(
        "oracle: atoll agrees with Terraform on {agree} of {} cases; {} known divergences",
        cases.len(),
        known.len()
    );
    assert!(unexplained.is_empty(), "{}", unexplained.join("\n"));
}
