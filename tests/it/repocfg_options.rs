//! The run options of `atlantis.yaml` (issue 17 item 8): how each key is read, merged with the
//! server rules (`allowed_overrides`), and refused with a message naming the key.

use atoll::repocfg::{
    Inputs, LockMode, MergeMethod, RepoConfig, RepoConfigError, Requirement, ServerRules, resolve,
};

const REPO: &str = "github.com/acme/infra";

fn parse_err(yaml: &str) -> String {
    RepoConfig::parse(yaml)
        .expect_err("must be refused")
        .to_string()
}

fn resolved(yaml: &str, rules: &str) -> Result<atoll::repocfg::Resolution, RepoConfigError> {
    let tree: Vec<String> = ["a/main.tf", "b/main.tf", "c/main.tf"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let rules = ServerRules::from_yaml(rules).expect("rules parse");
    resolve(
        Inputs {
            atlantis_yaml: Some(yaml),
            tree: &tree,
            changed: &tree,
            module_uses: &[],
        },
        &rules.policy_for(REPO),
    )
}

#[test]
fn depends_on_must_name_projects_of_the_file_without_a_cycle() {
    let unknown = parse_err(
        "version: 3\nprojects:\n- name: app\n  dir: a\n  depends_on: [db]\n- name: net\n  dir: b\n",
    );
    assert!(
        unknown.contains("projects[0].depends_on[0]")
            && unknown.contains("`db` is not the name of a project")
            && unknown.contains("`app`, `net`"),
        "{unknown}"
    );
    let itself = parse_err("version: 3\nprojects:\n- name: app\n  dir: a\n  depends_on: [app]\n");
    assert!(itself.contains("names the project itself"), "{itself}");
    let cycle = parse_err(
        "version: 3\nprojects:\n- name: a\n  dir: a\n  depends_on: [b]\n- name: b\n  dir: b\n  \
         depends_on: [c]\n- name: c\n  dir: c\n  depends_on: [a]\n",
    );
    assert!(
        cycle.contains("makes a cycle (a -> b -> c -> a)"),
        "{cycle}"
    );
    let fine = RepoConfig::parse(
        "version: 3\nprojects:\n- name: a\n  dir: a\n  depends_on: [b, c]\n- name: b\n  dir: b\n  \
         depends_on: [c]\n- name: c\n  dir: c\n",
    )
    .expect("a diamond is no cycle");
    assert_eq!(fine.projects[0].options.depends_on.len(), 2);
}

#[test]
fn values_atlantis_refuses_are_refused_with_the_accepted_ones() {
    let emoji = parse_err("version: 3\nemoji_reaction: thumbsup\n");
    assert!(
        emoji.contains("`thumbsup` is not a reaction")
            && emoji
                .contains("`+1`, `-1`, `laugh`, `confused`, `heart`, `hooray`, `rocket`, `eyes`"),
        "{emoji}"
    );
    let silence = parse_err("version: 3\nsilence_pr_comments: [plan, import]\n");
    assert!(
        silence.contains("silence_pr_comments[1]") && silence.contains("use `plan` or `apply`"),
        "{silence}"
    );
    let mode = parse_err("version: 3\nrepo_locks: {mode: sometimes}\n");
    assert!(
        mode.contains("repo_locks.mode") && mode.contains("`on_plan`, `on_apply` or `disabled`"),
        "{mode}"
    );
    let group = parse_err("version: 3\nprojects:\n- dir: a\n  execution_order_group: first\n");
    assert!(group.contains("must be a whole number"), "{group}");
    let plan = parse_err("version: 3\nprojects:\n- dir: a\n  plan_requirements: [unsupported]\n");
    assert!(plan.contains("projects[0].plan_requirements[0]"), "{plan}");
    // `emoji_reaction: ""` is absent, as in Atlantis.
    let empty = RepoConfig::parse("version: 3\nemoji_reaction: \"\"\n").expect("parses");
    assert_eq!(empty.options.emoji_reaction, None);
}

#[test]
fn project_keys_need_allowed_overrides_and_top_level_ones_are_ignored_with_a_warning() {
    let yaml = "version: 3\nrepo_locks: {mode: on_apply}\nsilence_pr_comments: [plan]\n\
                projects:\n- dir: a\n";
    let ignored = resolved(yaml, "repos:\n- id: /.*/\n").expect("resolves");
    assert_eq!(ignored.modified[0].options.repo_locks, LockMode::OnPlan);
    assert!(!ignored.modified[0].options.silence.plan);
    let warned: Vec<String> = ignored.warnings.iter().map(ToString::to_string).collect();
    assert!(
        warned
            .iter()
            .any(|w| w.starts_with("repo_locks: is ignored") && w.contains("allowed_overrides")),
        "{warned:?}"
    );
    let allowed = resolved(
        yaml,
        "repos:\n- id: /.*/\n  allowed_overrides: [repo_locks, silence_pr_comments]\n",
    )
    .expect("resolves");
    assert_eq!(allowed.modified[0].options.repo_locks, LockMode::OnApply);
    assert!(allowed.modified[0].options.silence.plan);
    assert!(allowed.warnings.is_empty(), "{:?}", allowed.warnings);

    for key in [
        "plan_requirements: [approved]",
        "import_requirements: [approved]",
        "silence_pr_comments: [apply]",
        "repo_locks: {mode: disabled}",
        "repo_locking: false",
        "delete_source_branch_on_merge: true",
    ] {
        let yaml = format!("version: 3\nprojects:\n- dir: a\n  {key}\n");
        let err = resolved(&yaml, "repos:\n- id: /.*/\n").expect_err(key);
        assert!(
            matches!(err, RepoConfigError::OverrideRefused { .. }),
            "{key}: {err}"
        );
    }
    let own = resolved(
        "version: 3\nprojects:\n- dir: a\n  plan_requirements: [mergeable]\n  repo_locking: false\n",
        "repos:\n- id: /.*/\n  plan_requirements: [approved]\n  \
         allowed_overrides: [plan_requirements, repo_locking]\n",
    )
    .expect("allowed");
    assert_eq!(
        own.modified[0].options.plan_requirements,
        [Requirement::Mergeable]
    );
    assert_eq!(own.modified[0].options.repo_locks, LockMode::Disabled);
}

#[test]
fn server_rules_set_the_defaults_and_atlantis_yaml_the_repository_wide_keys() {
    let rules = "repos:\n- id: /.*/\n  plan_requirements: [approved]\n  \
                 silence_pr_comments: [apply]\n  repo_locks: {mode: disabled}\n  \
                 automerge: true\n  automerge_method: squash\n  \
                 delete_source_branch_on_merge: true\n";
    let server = resolved("version: 3\nprojects:\n- dir: a\n", rules).expect("resolves");
    let a = &server.modified[0].options;
    assert_eq!(a.plan_requirements, [Requirement::Approved]);
    assert!(a.silence.apply && !a.silence.plan);
    assert_eq!(a.repo_locks, LockMode::Disabled);
    assert!(a.delete_source_branch_on_merge);
    assert!(server.run.automerge);
    assert_eq!(server.run.merge_method, MergeMethod::Squash);
    let repo = resolved(
        "version: 3\nautomerge: false\nemoji_reaction: rocket\n\
         abort_on_execution_order_fail: true\nprojects:\n- dir: a\n  execution_order_group: 2\n",
        rules,
    )
    .expect("resolves");
    assert!(!repo.run.automerge);
    assert_eq!(
        repo.run.emoji_reaction.as_ref().map(|e| e.as_str()),
        Some("rocket")
    );
    assert!(repo.run.abort_on_execution_order_fail);
    assert_eq!(repo.modified[0].options.execution_order_group, 2);
    assert!(ServerRules::from_yaml("repos:\n- id: x\n  automerge_method: fast-forward\n").is_err());
}
