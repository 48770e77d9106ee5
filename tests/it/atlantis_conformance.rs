//! Atlantis's own parser test tables, run against atoll's parsers. The cases are facts
//! transcribed from runatlantis/atlantis at the commit each data file names
//! (`tests/conformance/atlantis/*.json`): a comment or an `atlantis.yaml` and what Atlantis
//! makes of it. Each case either agrees with atoll, or carries a marker naming its row in the
//! one table of differences, `docs/atlantis-differences.md`: `difference:ID` (deliberate, with
//! the reason) or `not_yet:ID` (a missing feature, with its issue item). A marked case that
//! starts agreeing fails too, so the table cannot go stale.

use atoll::commands::{AllowedCommands, Grammar, Parsed, Reply, Usage, parse};
use atoll::repocfg::{
    Inputs, Project, RepoConfig, RepoConfigError, Resolution, ServerRules, resolve, select,
};
use serde_json::Value;

const COMMENTS: &str = include_str!("../conformance/atlantis/comments.json");
const REPO_CFG: &str = include_str!("../conformance/atlantis/repo_cfg.json");
const DIFFERENCES: &str = include_str!("../../docs/atlantis-differences.md");

/// How the cases of one table came out.
#[derive(Debug, Default)]
struct Tally {
    cases: usize,
    /// Cases where atoll answers as Atlantis does, marked or not.
    agreeing: usize,
    agreed: usize,
    differences: usize,
    not_yet: usize,
    /// Cases whose outcome contradicts their marker (or lack of one), with atoll's answer.
    wrong: Vec<String>,
}

impl Tally {
    fn record(&mut self, case: &Value, agrees: bool, got: String) {
        self.cases += 1;
        self.agreeing += usize::from(agrees);
        let marker = case["atoll"].as_str();
        match (marker, agrees) {
            (None, true) => self.agreed += 1,
            (Some(m), false) if m.starts_with("difference:") && documented(m) => {
                self.differences += 1;
            }
            (Some(m), false) if m.starts_with("not_yet:") && documented(m) => self.not_yet += 1,
            _ => self.wrong.push(format!("{case}\n    atoll: {got}")),
        }
    }

    fn check(self, table: &str) {
        println!(
            "{table}: {} cases, {} agreed, {} deliberate differences, {} not yet ({} agree in all)",
            self.cases, self.agreed, self.differences, self.not_yet, self.agreeing
        );
        assert!(
            self.wrong.is_empty(),
            "{} {table} cases contradict their marker:\n{}",
            self.wrong.len(),
            self.wrong.join("\n")
        );
    }
}

/// A marker's ID (`difference:ID`) must be a row of the differences table.
fn documented(marker: &str) -> bool {
    let id = marker.split_once(':').map_or(marker, |(_, id)| id);
    DIFFERENCES.contains(&format!("| `{id}` |"))
}

fn optional<'a>(expect: &'a Value, key: &str) -> Option<Option<&'a str>> {
    expect.get(key).map(Value::as_str)
}

fn comment_agrees(expect: &Value, parsed: &Parsed) -> bool {
    let kind = expect["kind"].as_str().unwrap_or_default();
    match (kind, parsed) {
        ("ignore", Parsed::Ignore) => true,
        ("help", Parsed::Run(command)) => command.verb.as_str() == "help",
        ("usage", Parsed::Reply(Reply::Help { verb })) => {
            Some(verb.as_str()) == expect["verb"].as_str()
        }
        ("did_you_mean", Parsed::Reply(Reply::DidYouMean { .. })) => true,
        ("error", Parsed::Reply(Reply::Error { message, usage })) => {
            let mentions = expect["mentions"].as_array().into_iter().flatten();
            let usage_ok = match (expect["usage"].as_str(), usage) {
                (None, _) => true,
                (Some(want), Usage::Verb(verb)) => verb.as_str() == want,
                (Some(_), Usage::Commands) => false,
            };
            // Refusing an unknown verb is not agreeing on why a known one is refused.
            let reason_ok = expect["unknown_command"].as_bool().unwrap_or(false)
                || !message.starts_with("unknown command");
            reason_ok
                && usage_ok
                && mentions
                    .filter_map(Value::as_str)
                    .all(|m| message.contains(m))
        }
        ("run", Parsed::Run(command)) => {
            let same =
                |key: &str, got: Option<&str>| optional(expect, key).is_none_or(|want| want == got);
            Some(command.verb.as_str()) == expect["verb"].as_str()
                && same(
                    "dir",
                    command
                        .dir_glob
                        .as_deref()
                        .or(command.dir.as_ref().map(|d| d.as_str())),
                )
                && same("workspace", command.workspace.as_ref().map(|w| w.as_str()))
                && same("project", command.project.as_ref().map(|p| p.as_str()))
                && expect["verbose"]
                    .as_bool()
                    .is_none_or(|v| v == command.verbose)
                && expect.get("extra_args").is_none()
        }
        _ => false,
    }
}

#[test]
fn atlantis_comment_parser_cases_agree_or_are_documented_differences() {
    let data: Value = serde_json::from_str(COMMENTS).expect("comments.json");
    let grammar = &data["grammar"];
    let mut tally = Tally::default();
    for case in data["cases"].as_array().expect("cases") {
        let executable = case["executable"]
            .as_str()
            .or(grammar["executable"].as_str())
            .unwrap_or_default();
        // Atlantis's parser tests allow every command.
        let grammar =
            Grammar::new(executable, grammar["bot_user"].as_str()).allowing(AllowedCommands::all());
        let text = case["comment"].as_str().expect("comment");
        let parsed = parse(text, &grammar);
        tally.record(
            case,
            comment_agrees(&case["expect"], &parsed),
            format!("{parsed:?}"),
        );
    }
    tally.check("comment parser");
}

fn repo_cfg_agrees(expect: &Value, parsed: &Result<RepoConfig, RepoConfigError>) -> bool {
    match (expect["kind"].as_str(), parsed) {
        (Some("error"), Err(error)) => expect["mentions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .all(|m| error.to_string().contains(m)),
        (Some("ok"), Ok(config)) => repo_cfg_matches(expect, config),
        _ => false,
    }
}

/// The fields a case states; the others are not compared.
fn repo_cfg_matches(expect: &Value, config: &RepoConfig) -> bool {
    let Some(projects) = expect.get("projects").and_then(Value::as_array) else {
        return true;
    };
    projects.len() == config.projects.len()
        && projects.iter().zip(&config.projects).all(|(want, got)| {
            let same =
                |key: &str, value: Option<&str>| optional(want, key).is_none_or(|w| w == value);
            same("dir", Some(got.dir.as_str()))
                && same("workspace", Some(got.workspace.as_str()))
                && same("name", got.name.as_ref().map(|n| n.as_str()))
                && want["autoplan"].as_bool().is_none_or(|a| a == got.autoplan)
                && want["apply_requirements"].as_array().is_none_or(|reqs| {
                    let got: Vec<&str> = got
                        .apply_requirements
                        .iter()
                        .flatten()
                        .map(|r| r.as_str())
                        .collect();
                    let want: Vec<&str> = reqs.iter().filter_map(Value::as_str).collect();
                    got == want
                })
        })
}

/// Atlantis's `AllowAllRepoSettings`, as far as atoll has the settings.
const ALLOW_ALL_REPO_SETTINGS: &str = "repos:\n  - id: /.*/\n    allowed_overrides: \
    [apply_requirements, workflow]\n    allow_custom_workflows: true\n";

#[test]
fn atlantis_repo_config_cases_agree_or_are_documented_differences() {
    let data: Value = serde_json::from_str(REPO_CFG).expect("repo_cfg.json");
    let mut tally = Tally::default();
    // Atlantis's TestParseRepoCfg validates each file under a server that allows every
    // repository setting (`AllowAllRepoSettings`), which defines only the `default` workflow.
    let policy = ServerRules::from_yaml(ALLOW_ALL_REPO_SETTINGS)
        .expect("rules")
        .policy_for("example.com/acme/infra");
    for case in data["cases"].as_array().expect("cases") {
        let yaml = case["yaml"].as_str().expect("yaml");
        let parsed = RepoConfig::parse(yaml).and_then(|c| c.check_against(&policy).map(|()| c));
        let got = match &parsed {
            Ok(config) => format!("ok: {:?}", config.projects),
            Err(e) => format!("error: {e}"),
        };
        tally.record(case, repo_cfg_agrees(&case["expect"], &parsed), got);
    }
    tally.check("atlantis.yaml parser");
}

const SELECT: &str = include_str!("../conformance/atlantis/select.json");

/// The server allows every repository setting, as the Atlantis cases assume.
const ALLOW_ALL: &str = "repos:\n  - id: /.*/\n    allowed_overrides: [apply_requirements]\n";
/// A case's `server` turns on the server's own defaults (Atlantis's `--parallel-plan`,
/// `--parallel-apply`, `--automerge`), as a repo rule.
const SERVER_DEFAULTS: &str =
    "    parallel_plan: true\n    parallel_apply: true\n    automerge: true\n";

fn selection(case: &Value) -> Result<(Vec<Project>, Resolution), String> {
    let text = case["comment"].as_str().expect("comment");
    let command = match parse(text, &Grammar::new("atlantis", None)) {
        Parsed::Run(command) => command,
        other => return Err(format!("{other:?}")),
    };
    let rules = match case["server"].as_str() {
        Some(_) => format!("{ALLOW_ALL}{SERVER_DEFAULTS}"),
        None => ALLOW_ALL.to_owned(),
    };
    let policy = ServerRules::from_yaml(&rules)
        .expect("rules")
        .policy_for("example.com/acme/infra");
    let tree = ["main.tf".to_owned()];
    let inputs = Inputs {
        atlantis_yaml: case["yaml"].as_str(),
        tree: &tree,
        changed: &tree,
        module_uses: &[],
    };
    let resolution = resolve(inputs, &policy).map_err(|e| e.to_string())?;
    let projects = select(&command, &resolution).map_err(|e| e.to_string())?;
    Ok((projects, resolution))
}

fn select_agrees(expect: &Value, got: &Result<(Vec<Project>, Resolution), String>) -> bool {
    match (expect["kind"].as_str(), got) {
        (Some("error"), Err(message)) => expect["mentions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .all(|m| message.contains(m)),
        (Some("ok"), Ok((projects, resolution))) => {
            let want = expect["projects"].as_array().map_or(&[][..], Vec::as_slice);
            let flag = |key: &str, got: bool| expect[key].as_bool().is_none_or(|w| w == got);
            flag("parallel_plan", resolution.parallel_plan)
                && flag("parallel_apply", resolution.parallel_apply)
                && want.len() == projects.len()
                && want.iter().zip(projects).all(|(w, p)| {
                    let reqs: Vec<&str> = p.apply_requirements.iter().map(|r| r.as_str()).collect();
                    w["dir"].as_str() == Some(p.dir.as_str())
                        && w["workspace"].as_str() == Some(p.workspace.as_str())
                        && w["name"].as_str() == p.name.as_ref().map(|n| n.as_str())
                        && w["apply_requirements"]
                            .as_array()
                            .is_none_or(|r| r.iter().filter_map(Value::as_str).eq(reqs))
                })
        }
        _ => false,
    }
}

#[test]
fn atlantis_project_selection_cases_agree_or_are_documented_differences() {
    let data: Value = serde_json::from_str(SELECT).expect("select.json");
    let mut tally = Tally::default();
    for case in data["cases"].as_array().expect("cases") {
        let got = selection(case);
        let shown = match &got {
            Ok((projects, _)) => format!(
                "ok: {}",
                projects
                    .iter()
                    .map(Project::label)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Err(e) => format!("error: {e}"),
        };
        tally.record(case, select_agrees(&case["expect"], &got), shown);
    }
    tally.check("project selection");
}
