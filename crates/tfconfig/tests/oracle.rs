//! The evaluator against real Terraform: every case of the `tests/oracle/*.jsonl` files (at the
//! workspace root) is evaluated by atoll and compared with the answer Terraform 1.15 gave
//! (`tests/oracle/answers.json`, recorded by `tests/oracle/record.py`, which the test command
//! re-runs to check the recording). A case atoll answers differently must be listed in `divergences.txt` with
//! its reason, and a listed case that agrees fails the test too, so the list stays true.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use atoll_tfconfig::evaluate_expression;
use serde_json::Value as Json;

mod common;
use common::{plain, same};

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
    let known = common::divergences(&oracle_file("divergences.txt"));
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
