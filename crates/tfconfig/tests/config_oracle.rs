//! Whole configurations against real Terraform: each directory under `tests/oracle/configs/`
//! (at the workspace root) is loaded by atoll and compared with what Terraform 1.15 made of it,
//! recorded by `tests/oracle/configs.py` (which the test command re-runs to check the recording).
//!
//! `invalid/<name>`: atoll's errors, as (severity, summary, file, line), must be Terraform's.
//! `valid/<name>`: atoll must load it without error, with the resource instance addresses, each
//! `terraform_data` instance's `input` and the root outputs Terraform applied (values compared
//! with numbers by value and sensitive values unwrapped).
//!
//! A configuration atoll answers differently must be listed in `configs/divergences.txt` with
//! its reason, and a listed one that agrees fails the test too, so the list stays true.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use atoll_tfconfig::{Input, Limits, Loaded, Severity, load};
use serde_json::Value as Json;

mod common;
use common::{plain, same};

fn configs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/oracle/configs")
}

fn read(name: &str) -> String {
    let path = configs_dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The recording of one kind: configuration name to Terraform's answer.
fn recording(kind: &str) -> BTreeMap<String, Json> {
    serde_json::from_str(&read(&format!("{kind}.json"))).expect("a recording of configs.py")
}

/// The configurations of one kind, by directory name.
fn configurations(kind: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(configs_dir().join(kind)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            e.path()
                .is_dir()
                .then(|| e.file_name().into_string().ok())?
        })
        .collect();
    names.sort();
    names
}

fn load_config(kind: &str, name: &str) -> Loaded {
    load(&Input {
        checkout: configs_dir().join(kind).join(name),
        project_dir: PathBuf::new(),
        workspace: "default".to_owned(),
        vars: Vec::new(),
        limits: Limits::default(),
        modules: Default::default(),
    })
}

/// One diagnostic as the recording keeps it.
type Seen = (String, String, Option<String>, Option<u64>);

fn cycle_sorted(summary: &str) -> String {
    match summary.strip_prefix("Cycle: ") {
        Some(nodes) => {
            let mut nodes: Vec<&str> = nodes.split(", ").collect();
            nodes.sort_unstable();
            format!("Cycle: {}", nodes.join(", "))
        }
        None => summary.to_owned(),
    }
}

/// atoll's errors for a configuration.
fn atoll_errors(loaded: &Loaded) -> BTreeSet<Seen> {
    loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| {
            let at = d.subject.as_ref().and_then(|s| loaded.sources.locate(s));
            (
                "error".to_owned(),
                cycle_sorted(&d.summary),
                at.map(|(file, _, _)| file.to_owned()),
                at.map(|(_, line, _)| line as u64),
            )
        })
        .collect()
}

/// Terraform's errors for a configuration, from the recording.
fn terraform_errors(answer: &Json) -> BTreeSet<Seen> {
    answer["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| {
            (
                "error".to_owned(),
                d["summary"].as_str().expect("summary").to_owned(),
                d["file"].as_str().map(str::to_owned),
                d["line"].as_u64(),
            )
        })
        .collect()
}

fn show(set: &BTreeSet<Seen>) -> String {
    if set.is_empty() {
        return "none".to_owned();
    }
    set.iter()
        .map(|(_, summary, file, line)| match (file, line) {
            (Some(f), Some(l)) => format!("\"{summary}\" at {f}:{l}"),
            _ => format!("\"{summary}\""),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// How atoll's errors differ from Terraform's for an invalid configuration, if they do.
fn invalid_disagreement(name: &str, answer: &Json) -> Option<String> {
    let ours = atoll_errors(&load_config("invalid", name));
    let theirs = terraform_errors(answer);
    (ours != theirs).then(|| {
        format!(
            "Terraform ({}): {}; atoll: {}",
            answer["stage"].as_str().unwrap_or_default(),
            show(&theirs),
            show(&ours)
        )
    })
}

/// Tallies one kind's configurations against the recording; returns (agreeing, total) and
/// pushes every unexplained difference.
fn compare(
    kind: &str,
    differ: impl Fn(&str, &Json) -> Option<String>,
    known: &BTreeMap<String, String>,
    unexplained: &mut Vec<String>,
) -> (usize, usize) {
    let answers = recording(kind);
    let names = configurations(kind);
    let mut agree = 0;
    for name in &names {
        let answer = answers.get(name).unwrap_or_else(|| {
            panic!("no recorded answer for {kind}/{name}: run tests/oracle/configs.py")
        });
        let listed = known.contains_key(&format!("{kind}/{name}"));
        match (differ(name, answer), listed) {
            (None, false) => agree += 1,
            (None, true) => unexplained.push(format!(
                "{kind}/{name}: agrees now; remove it from configs/divergences.txt"
            )),
            (Some(_), true) => {}
            (Some(diff), false) => unexplained.push(format!("{kind}/{name}: {diff}")),
        }
    }
    (agree, names.len())
}

#[test]
fn atoll_reports_terraforms_errors_for_every_invalid_configuration_but_the_listed_divergences() {
    let known = common::divergences(&read("divergences.txt"));
    let mut unexplained = Vec::new();
    let (agree, all) = compare("invalid", invalid_disagreement, &known, &mut unexplained);
    eprintln!(
        "config oracle: atoll reports Terraform's errors for {agree} of {all} invalid configurations"
    );
    assert!(
        all > 0,
        "no configuration under tests/oracle/configs/invalid"
    );
    for name in known.keys() {
        let (kind, config) = name.split_once('/').unwrap_or(("", name));
        assert!(
            configurations(kind).iter().any(|c| c == config),
            "configs/divergences.txt lists {name}, which is not a configuration"
        );
    }
    assert!(unexplained.is_empty(), "{}", unexplained.join("\n"));
}

#[test]
fn atoll_computes_terraforms_instances_and_outputs_for_every_valid_configuration_but_the_listed_divergences()
 {
    let known = common::divergences(&read("divergences.txt"));
    let mut unexplained = Vec::new();
    let (agree, all) = compare("valid", valid_disagreement, &known, &mut unexplained);
    eprintln!(
        "config oracle: atoll computes Terraform's values for {agree} of {all} valid configurations"
    );
    assert!(all > 0, "no configuration under tests/oracle/configs/valid");
    assert!(unexplained.is_empty(), "{}", unexplained.join("\n"));
}

/// How atoll's instances and outputs differ from what Terraform applied, if they do.
fn valid_disagreement(name: &str, answer: &Json) -> Option<String> {
    if let Some(error) = answer.get("error") {
        panic!("Terraform refused valid/{name}: {error}");
    }
    let loaded = load_config("valid", name);
    let errors = atoll_errors(&loaded);
    if !errors.is_empty() {
        return Some(format!("atoll refuses it: {}", show(&errors)));
    }
    let ours: BTreeSet<&str> = loaded
        .resources
        .iter()
        .map(|r| r.address.as_str())
        .collect();
    let theirs: BTreeSet<&str> = answer["instances"]
        .as_object()
        .expect("instances")
        .keys()
        .map(String::as_str)
        .collect();
    if ours != theirs {
        return Some(format!(
            "Terraform's instances {theirs:?}; atoll's {ours:?}"
        ));
    }
    for r in &loaded.resources {
        let input = r.attributes.get_attr("input").map_or(Json::Null, plain);
        let recorded = &answer["instances"][&r.address];
        if !same(&input, recorded) {
            return Some(format!(
                "{}: Terraform's input {recorded}; atoll's {input}",
                r.address
            ));
        }
    }
    let outputs: serde_json::Map<String, Json> = loaded
        .outputs
        .iter()
        .filter(|(_, o)| !o.value.is_null())
        .map(|(k, o)| (k.clone(), plain(&o.value)))
        .collect();
    let outputs = Json::Object(outputs);
    let recorded = &answer["outputs"];
    (!same(&outputs, recorded))
        .then(|| format!("Terraform's outputs {recorded}; atoll's {outputs}"))
}
