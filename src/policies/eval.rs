//! One plan document against the policy sets, with regorus: conftest's conventions (`package
//! main`; `deny` and `violation` fail, `warn` only warns; a rule's value is a set of messages,
//! each a string or an object with a `msg`), in Rego v1 (`deny contains msg if`) or v0
//! (`deny[msg] { ... }`) syntax, file by file.
//!
//! Bounds: a set reads at most [`MAX_FILES`] `.rego` files directly under its directory
//! (`*_test.rego`, conftest's unit tests, are skipped), each at most [`MAX_FILE_BYTES`] and
//! [`MAX_SET_BYTES`] together; evaluating one set stops after [`TIME_LIMIT`] (regorus's
//! cooperative execution timer, checked while it evaluates). A set over a bound fails with the
//! reason; it is never skipped. regorus is built without its network, time, regex and glob
//! built-ins, so a policy calling one fails to load with the name of the built-in.

use std::num::NonZeroU32;
use std::path::Path;
use std::time::Duration;

use regorus::utils::limits::ExecutionTimerConfig;

use super::{PolicyCheck, PolicySet, PolicySettings, SetOutcome};

/// Most `.rego` files read from one set's directory.
pub const MAX_FILES: usize = 64;
/// Largest `.rego` file read.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// Most bytes of Rego read for one set.
pub const MAX_SET_BYTES: u64 = 1024 * 1024;
/// Longest evaluation of one set over one plan.
pub const TIME_LIMIT: Duration = Duration::from_secs(5);
/// Most messages kept per rule, and the longest message kept.
const MAX_MESSAGES: usize = 100;
const MAX_MESSAGE_CHARS: usize = 1000;
/// conftest's default namespace.
const NAMESPACE: &str = "main";

/// Checks `document` (the JSON plan) against every set in `settings`.
pub fn check(settings: &PolicySettings, document: &serde_json::Value) -> PolicyCheck {
    let input = document.to_string();
    PolicyCheck {
        sets: settings
            .sets
            .iter()
            .map(|set| check_set(set, &input))
            .collect(),
    }
}

/// Checks the JSON text `input` against one set.
pub fn check_set(set: &PolicySet, input: &str) -> SetOutcome {
    let mut outcome = SetOutcome {
        name: set.name.clone(),
        failures: Vec::new(),
        warnings: Vec::new(),
        error: None,
        approve_count: set.approve_count,
        approvals: Vec::new(),
    };
    match evaluate(&set.path, input, TIME_LIMIT) {
        Ok((failures, warnings)) => {
            outcome.failures = failures;
            outcome.warnings = warnings;
        }
        Err(error) => outcome.error = Some(error),
    }
    outcome
}

type Messages = (Vec<String>, Vec<String>);

fn evaluate(dir: &Path, input: &str, limit: Duration) -> Result<Messages, String> {
    let files = read_set(dir)?;
    let mut engine = regorus::Engine::new();
    engine.set_execution_timer_config(ExecutionTimerConfig {
        limit,
        check_interval: NonZeroU32::MIN.saturating_add(63),
    });
    for (name, text) in files {
        add_policy(&mut engine, &name, text)?;
    }
    let has_main = engine
        .get_packages()
        .map_err(|e| format!("reading the packages: {e}"))?
        .iter()
        .any(|p| p == &format!("data.{NAMESPACE}"));
    if !has_main {
        return Err(format!(
            "no policy file declares `package {NAMESPACE}` (conftest's namespace, whose `deny`, \
             `violation` and `warn` rules atoll evaluates)"
        ));
    }
    engine
        .set_input_json(input)
        .map_err(|e| format!("reading the plan as input: {e}"))?;
    let mut failures = messages(&mut engine, "deny")?;
    failures.extend(messages(&mut engine, "violation")?);
    failures.truncate(MAX_MESSAGES);
    let warnings = messages(&mut engine, "warn")?;
    Ok((failures, warnings))
}

/// `file` parsed as Rego v1, else as v0 (conftest's older policies); neither: v1's error.
fn add_policy(engine: &mut regorus::Engine, name: &str, text: String) -> Result<(), String> {
    engine.set_rego_v0(false);
    let Err(v1) = engine.add_policy(name.to_owned(), text.clone()) else {
        return Ok(());
    };
    engine.set_rego_v0(true);
    let v0 = engine.add_policy(name.to_owned(), text);
    engine.set_rego_v0(false);
    v0.map(drop)
        .map_err(|_| format!("{name} is not valid Rego: {}", first_lines(&v1.to_string())))
}

fn first_lines(text: &str) -> String {
    text.lines().take(6).collect::<Vec<_>>().join("\n")
}

/// The `.rego` files of one set, sorted by name, within the bounds.
fn read_set(dir: &Path) -> Result<Vec<(String, String)>, String> {
    let shown = dir.display();
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read the policy directory {shown}: {e}"))?;
    let mut paths = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| format!("cannot read the policy directory {shown}: {e}"))?
            .path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".rego") && !name.ends_with("_test.rego") && path.is_file() {
            paths.push(path);
        }
        if paths.len() > MAX_FILES {
            return Err(format!(
                "{shown} holds more than {MAX_FILES} .rego files; split the set"
            ));
        }
    }
    if paths.is_empty() {
        return Err(format!("{shown} holds no .rego file"));
    }
    paths.sort();
    let mut total = 0;
    let mut files = Vec::new();
    for path in paths {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_owned();
        let len = std::fs::metadata(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?
            .len();
        total += len;
        if len > MAX_FILE_BYTES || total > MAX_SET_BYTES {
            return Err(format!(
                "{name} is too large: a file may hold {MAX_FILE_BYTES} bytes and a set \
                 {MAX_SET_BYTES}"
            ));
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        files.push((name, text));
    }
    Ok(files)
}

/// The messages of `data.main.RULE` (none when the rule is not defined).
fn messages(engine: &mut regorus::Engine, rule: &str) -> Result<Vec<String>, String> {
    let results = engine
        .eval_query(format!("data.{NAMESPACE}.{rule}"), false)
        .map_err(|e| format!("evaluating `{rule}`: {}", first_lines(&e.to_string())))?;
    let mut out = Vec::new();
    for result in results.result {
        for expression in result.expressions {
            let json = serde_json::to_value(&expression.value)
                .map_err(|e| format!("reading the value of `{rule}`: {e}"))?;
            collect(&json, &mut out);
        }
    }
    out.sort();
    out.dedup();
    out.truncate(MAX_MESSAGES);
    Ok(out)
}

/// A rule's value as messages: a set (an array in JSON) of strings or `{msg: ...}` objects; a
/// `deny = true` style boolean counts as one message.
fn collect(value: &serde_json::Value, out: &mut Vec<String>) {
    use serde_json::Value as J;
    match value {
        J::Array(items) => {
            for item in items {
                out.push(message(item));
            }
        }
        J::Bool(false) | J::Null => {}
        J::Bool(true) => out.push("(a rule without a message matched)".to_owned()),
        other => out.push(message(other)),
    }
}

fn message(value: &serde_json::Value) -> String {
    let text = match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(o) => match o.get("msg") {
            Some(serde_json::Value::String(s)) => s.clone(),
            _ => value.to_string(),
        },
        other => other.to_string(),
    };
    if text.chars().count() > MAX_MESSAGE_CHARS {
        let cut: String = text.chars().take(MAX_MESSAGE_CHARS).collect();
        format!("{cut}…")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = r#"{"resource_changes":[
        {"address":"a","type":"proxmox_virtual_environment_container","actions":["create"],
         "attributes":[{"path":"unprivileged","after":false}]},
        {"address":"b","type":"proxmox_virtual_environment_container","actions":["create"],
         "attributes":[{"path":"unprivileged","after":true}]}]}"#;

    fn set_with(files: &[(&str, &str)]) -> (tempfile::TempDir, PolicySet) {
        let dir = tempfile::tempdir().expect("dir");
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).expect("write");
        }
        let set = PolicySet {
            name: "s".to_owned(),
            path: dir.path().to_owned(),
            owners: super::super::Owners::default(),
            approve_count: 1,
            prevent_self_approve: false,
        };
        (dir, set)
    }

    const V1: &str = r#"package main
deny contains msg if {
    some c in input.resource_changes
    some a in c.attributes
    a.path == "unprivileged"
    a.after == false
    msg := sprintf("%s is privileged", [c.address])
}
warn contains {"msg": "checked"} if { true }
"#;

    const V0: &str = r#"package main
violation[msg] {
    c := input.resource_changes[_]
    c.address == "b"
    msg := "b is listed"
}
"#;

    #[test]
    fn deny_and_violation_fail_and_warn_warns_in_either_rego_syntax() {
        let (_dir, set) = set_with(&[
            ("v1.rego", V1),
            ("v0.rego", V0),
            ("v1_test.rego", "nonsense"),
        ]);
        let outcome = check_set(&set, PLAN);
        assert_eq!(outcome.error, None);
        assert_eq!(outcome.failures, ["a is privileged", "b is listed"]);
        assert_eq!(outcome.warnings, ["checked"]);
        assert!(!outcome.passed());
    }

    #[test]
    fn a_plan_the_rules_do_not_match_passes() {
        let (_dir, set) = set_with(&[("v1.rego", V1)]);
        let outcome = check_set(&set, r#"{"resource_changes":[]}"#);
        assert!(outcome.passed(), "{outcome:?}");
        assert_eq!(outcome.warnings, ["checked"]);
    }

    #[test]
    fn sets_that_cannot_be_evaluated_fail_with_the_reason() {
        let (_dir, bad) = set_with(&[("bad.rego", "package main\ndeny contains msg if {")]);
        let error = check_set(&bad, PLAN).error.expect("parse error");
        assert!(error.contains("bad.rego is not valid Rego"), "{error}");

        let (_dir, other) = set_with(&[("x.rego", "package other\nallow := true\n")]);
        let error = check_set(&other, PLAN).error.expect("no main");
        assert!(error.contains("package main"), "{error}");

        let (_dir, empty) = set_with(&[("README.md", "x")]);
        let error = check_set(&empty, PLAN).error.expect("no files");
        assert!(error.contains("no .rego file"), "{error}");

        let big = format!("package main\n# {}\n", "x".repeat(MAX_FILE_BYTES as usize));
        let (_dir, large) = set_with(&[("big.rego", &big)]);
        let error = check_set(&large, PLAN).error.expect("too large");
        assert!(error.contains("too large"), "{error}");

        let missing = PolicySet {
            path: "/nonexistent/atoll-policies".into(),
            ..large
        };
        let error = check_set(&missing, PLAN).error.expect("missing dir");
        assert!(
            error.contains("cannot read the policy directory"),
            "{error}"
        );
    }

    #[test]
    fn the_shipped_datastore_policy_covers_vm_disks_and_ignores_deletes() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/policies/datastores");
        let set = PolicySet {
            name: "datastores".to_owned(),
            path: dir.into(),
            owners: super::super::Owners::default(),
            approve_count: 1,
            prevent_self_approve: false,
        };
        let plan = r#"{"resource_changes":[
            {"address":"vm","actions":["update"],"attributes":[
                {"path":"disk[scsi1].datastore_id","before":"local-lvm","after":"nfs"},
                {"path":"efi_disk.datastore_id","before":null,"after":"local-zfs"}]},
            {"address":"gone","actions":["delete"],"attributes":[
                {"path":"disk.datastore_id","before":"nfs","after":null}]}]}"#;
        let outcome = check_set(&set, plan);
        assert_eq!(outcome.error, None);
        assert_eq!(
            outcome.failures,
            [
                "vm: disk[scsi1].datastore_id is on datastore nfs, which is not allowed; use one \
              of: local-lvm, local-zfs"
            ]
        );
    }

    #[test]
    fn too_many_files_are_refused() {
        let names: Vec<String> = (0..=MAX_FILES).map(|i| format!("p{i}.rego")).collect();
        let files: Vec<(&str, &str)> = names
            .iter()
            .map(|n| (n.as_str(), "package main\n"))
            .collect();
        let (_dir, set) = set_with(&files);
        let error = check_set(&set, PLAN).error.expect("too many");
        assert!(error.contains("more than 64"), "{error}");
    }

    #[test]
    fn evaluation_stops_at_the_time_limit() {
        let slow = "package main\nn := numbers.range(1, 2000)\n\
                    deny contains x if { some i in n; some j in n; some k in n; x := i * j * k; x < 0 }\n";
        let (_dir, set) = set_with(&[("slow.rego", slow)]);
        let started = std::time::Instant::now();
        let result = evaluate(&set.path, PLAN, Duration::from_millis(200));
        let error = result.expect_err("time limit");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert!(error.contains("evaluating `deny`"), "{error}");
    }
}
