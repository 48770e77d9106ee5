//! Atlantis's project selectors from issue 17: `autodiscover` (`mode`, `ignore_paths`), the
//! project `branch` filter on the PR's base branch and glob patterns in a project's `dir` and in
//! `-d`. Expected results restate runatlantis/atlantis at commit 078d0a82
//! (`server/events/project_command_builder.go` and its tests, `server/core/config`).

use atoll::commands::{Command, Grammar, Parsed, parse};
use atoll::repocfg::{
    Inputs, Project, RepoConfig, RepoPolicy, Resolution, SelectError, resolve_on_base, select,
};

fn files(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

fn tree() -> Vec<String> {
    files(&[
        "envs/dev/main.tf",
        "envs/prod/main.tf",
        "envs/dev/sub/main.tf",
        "lab/main.tf",
        "modules/lxc/main.tf",
        "sandbox/try/main.tf",
        "README.md",
    ])
}

fn resolution_on(yaml: &str, base: &str, changed: &[&str]) -> Resolution {
    let tree = tree();
    let changed = files(changed);
    resolve_on_base(
        Inputs {
            atlantis_yaml: Some(yaml),
            tree: &tree,
            changed: &changed,
            module_uses: &[],
        },
        Some(base),
        &RepoPolicy::default(),
    )
    .expect("resolves")
}

fn dirs<'a>(projects: impl IntoIterator<Item = &'a Project>) -> Vec<String> {
    projects
        .into_iter()
        .map(|p| format!("{}@{}", p.dir, p.workspace))
        .collect()
}

fn command(text: &str) -> Command {
    match parse(text, &Grammar::default()) {
        Parsed::Run(command) => command,
        other => panic!("{text:?} did not parse: {other:?}"),
    }
}

const BRANCHES: &str = "version: 3
projects:
  - name: dev
    dir: envs/dev
    branch: /^main$/
  - name: prod-release
    dir: envs/prod
    branch: /^release\\//
";

#[test]
fn a_project_whose_branch_regex_does_not_match_the_base_branch_is_not_planned() {
    let changed = ["envs/dev/main.tf", "envs/prod/main.tf"];
    let main = resolution_on(BRANCHES, "main", &changed);
    assert_eq!(dirs(main.autoplan()), ["envs/dev@default"]);
    assert!(
        main.warnings
            .iter()
            .any(|w| w.path == "projects[1]" && w.message.contains("`main`")),
        "{:?}",
        main.warnings
    );
    let release = resolution_on(BRANCHES, "release/2.0", &changed);
    assert_eq!(dirs(release.autoplan()), ["envs/prod@default"]);
}

#[test]
fn a_comment_naming_a_project_of_another_branch_is_refused_and_told_why() {
    let r = resolution_on(BRANCHES, "main", &[]);
    for text in [
        "atlantis plan -p prod-release",
        "atlantis plan -d envs/prod",
    ] {
        let err = select(&command(text), &r).expect_err(text);
        assert!(
            matches!(err, SelectError::OffBranch { .. }),
            "{text}: {err:?}"
        );
        let message = err.to_string();
        assert!(message.contains("/^release\\//"), "{message}");
        assert!(message.contains("base branch is `main`"), "{message}");
    }
    let dev = select(&command("atlantis plan -p dev"), &r).expect("dev is on main");
    assert_eq!(dirs(&dev), ["envs/dev@default"]);
}

#[test]
fn branch_values_without_slashes_or_with_bad_regexes_are_refused() {
    for bad in ["main", "/(/", "/main"] {
        let yaml = format!("version: 3\nprojects:\n  - dir: lab\n    branch: '{bad}'\n");
        let err = RepoConfig::parse(&yaml).expect_err(bad).to_string();
        assert!(err.contains("projects[0].branch"), "{err}");
    }
}

#[test]
fn autodiscover_enabled_adds_unlisted_directories_after_the_listed_projects() {
    let yaml = "version: 3
autodiscover:
  mode: enabled
  ignore_paths: [sandbox/**]
projects:
  - dir: lab
    autoplan:
      when_modified: [main.tf]
";
    let changed = ["envs/dev/main.tf", "lab/main.tf", "sandbox/try/main.tf"];
    let r = resolution_on(yaml, "main", &changed);
    assert_eq!(dirs(&r.modified), ["lab@default", "envs/dev@default"]);
}

#[test]
fn a_listed_directory_is_never_discovered_again_even_when_its_when_modified_skips_the_change() {
    let yaml = "version: 3
autodiscover: {mode: enabled}
projects:
  - dir: lab
    autoplan:
      when_modified: ['*.tfvars']
";
    let r = resolution_on(yaml, "main", &["lab/main.tf"]);
    assert!(r.modified.is_empty(), "{:?}", dirs(&r.modified));
}

#[test]
fn autodiscover_auto_discovers_only_when_no_project_is_listed() {
    let changed = ["envs/dev/main.tf"];
    let none = resolution_on("version: 3\nautodiscover: {mode: auto}\n", "main", &changed);
    assert_eq!(dirs(&none.modified), ["envs/dev@default"]);
    let listed = resolution_on("version: 3\nprojects:\n  - dir: lab\n", "main", &changed);
    assert!(listed.modified.is_empty());
    let disabled = resolution_on(
        "version: 3\nautodiscover: {mode: disabled}\n",
        "main",
        &changed,
    );
    assert!(disabled.modified.is_empty());
}

#[test]
fn projects_all_meant_for_another_branch_do_not_turn_discovery_on() {
    let yaml = "version: 3\nprojects:\n  - dir: envs/dev\n    branch: /^release/\n";
    let r = resolution_on(yaml, "main", &["envs/dev/main.tf", "lab/main.tf"]);
    assert!(r.modified.is_empty(), "{:?}", dirs(&r.modified));
}

#[test]
fn an_ignored_directory_targeted_by_dir_is_refused_naming_the_pattern() {
    let yaml = "version: 3\nautodiscover:\n  ignore_paths: ['sandbox/*']\n";
    let r = resolution_on(yaml, "main", &[]);
    let err = select(&command("atlantis plan -d sandbox/try"), &r).expect_err("ignored");
    assert!(matches!(err, SelectError::Ignored { .. }), "{err:?}");
    assert!(err.to_string().contains("`sandbox/*`"), "{err}");
}

#[test]
fn autodiscover_values_are_checked() {
    for (yaml, path) in [
        ("autodiscover: {mode: sometimes}", "autodiscover.mode"),
        (
            "autodiscover: {ignore_paths: ['/abs']}",
            "autodiscover.ignore_paths",
        ),
        (
            "autodiscover: {ignore_paths: ['a[']}",
            "autodiscover.ignore_paths",
        ),
        ("autodiscover: {other: 1}", "autodiscover.other"),
    ] {
        let err = RepoConfig::parse(&format!("version: 3\n{yaml}\n"))
            .expect_err(yaml)
            .to_string();
        assert!(err.contains(path), "{yaml}: {err}");
    }
    let config = RepoConfig::parse("version: 3\nautodiscover: {mode: enabled}\n").expect("valid");
    assert!(config.warnings.is_empty(), "{:?}", config.warnings);
}

#[test]
fn a_glob_dir_stands_for_each_matching_terraform_directory() {
    let yaml = "version: 3
projects:
  - dir: envs/*
    workspace: staging
";
    let r = resolution_on(yaml, "main", &["envs/prod/main.tf", "lab/main.tf"]);
    assert_eq!(dirs(&r.modified), ["envs/prod@staging"]);
    let one = select(&command("atlantis plan -w staging -d envs/dev"), &r).expect("listed");
    assert_eq!(dirs(&one), ["envs/dev@staging"]);
    // `*` stays inside one directory name: envs/dev/sub is not one of the projects.
    let all = select(&command("atlantis plan -d 'envs/**'"), &r).expect("listed");
    assert_eq!(dirs(&all), ["envs/dev@staging", "envs/prod@staging"]);
}

#[test]
fn a_glob_dir_with_a_name_is_refused() {
    let yaml = "version: 3\nprojects:\n  - name: envs\n    dir: envs/*\n";
    let err = RepoConfig::parse(yaml)
        .expect_err("name with glob")
        .to_string();
    assert!(err.contains("projects[0].name"), "{err}");
}

#[test]
fn dir_glob_in_a_comment_selects_every_matching_project() {
    let r = resolution_on(BRANCHES, "main", &[]);
    let listed = select(&command("atlantis plan -d 'envs/*'"), &r).expect("listed");
    assert_eq!(dirs(&listed), ["envs/dev@default"]);
    let without = resolution_on("version: 3\n", "main", &[]);
    let found = select(&command("atlantis plan -d 'envs/**'"), &without).expect("found");
    assert_eq!(
        dirs(&found),
        [
            "envs/dev@default",
            "envs/dev/sub@default",
            "envs/prod@default"
        ]
    );
    let err = select(&command("atlantis plan -d 'nothing/*'"), &without).expect_err("none");
    assert!(matches!(err, SelectError::NoMatch { .. }), "{err:?}");
}

#[test]
fn dir_globs_in_comments_are_checked_and_kept_to_plan_and_apply() {
    for bad in [
        "atlantis plan -d '../*'",
        "atlantis plan -d 'a['",
        "atlantis unlock -d 'envs/*'",
        "atlantis plan -p x -d 'envs/*'",
    ] {
        let parsed = parse(bad, &Grammar::default());
        assert!(matches!(parsed, Parsed::Reply(_)), "{bad}: {parsed:?}");
    }
    assert_eq!(
        command("atlantis apply -d './envs/*'").to_comment("atlantis"),
        "atlantis apply -d 'envs/*'"
    );
}

/// A glob `dir` is written by the PR: what it expands to counts against the same 500 projects
/// a file may list, and the expansion stops there instead of making a project per directory
/// for every glob (500 globs over thousands of directories).
#[test]
fn glob_dirs_that_would_make_more_than_500_projects_are_refused() {
    let tree: Vec<String> = (0..600).map(|i| format!("stacks/s{i}/main.tf")).collect();
    let resolve = |yaml: &str| {
        resolve_on_base(
            Inputs {
                atlantis_yaml: Some(yaml),
                tree: &tree,
                changed: &tree,
                module_uses: &[],
            },
            Some("main"),
            &RepoPolicy::default(),
        )
    };
    let error = resolve("version: 3\nprojects:\n- dir: \"stacks/*\"\n")
        .expect_err("600 directories are more than 500 projects");
    assert!(
        error.to_string().contains("projects[0].dir")
            && error.to_string().contains("more than 500 projects"),
        "{error}"
    );
    let narrowed = resolve("version: 3\nprojects:\n- dir: \"stacks/s1*\"\n").expect("111 projects");
    assert_eq!(narrowed.modified.len(), 111, "s1 and s10..s199");
}
