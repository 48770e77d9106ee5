//! Property tests: `atlantis.yaml` parsing, project resolution and selection never panic on
//! hostile input, and what they return keeps its invariants.

use atoll::commands::{Grammar, Parsed, parse};
use atoll::repocfg::{Inputs, RepoConfig, RepoPolicy, ServerRules, resolve, select};
use proptest::prelude::*;

const RULES: &str = "repos:\n  - id: /.*/\n    manage: {exclude: [infra/atoll]}\n";

fn yaml_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("version: 3\n".to_owned()),
        Just("version: 2\n".to_owned()),
        Just("projects:\n".to_owned()),
        Just("- dir: ".to_owned()),
        Just("  name: ".to_owned()),
        Just("  workspace: ".to_owned()),
        Just("  autoplan:\n    when_modified: [".to_owned()),
        Just("  apply_requirements: [approved]\n".to_owned()),
        Just("  restart: never\n".to_owned()),
        Just("parallel_plan: true\n".to_owned()),
        Just("automerge: true\n".to_owned()),
        Just("&a [*a, *a]\n".to_owned()),
        Just("../".to_owned()),
        Just("infra/atoll".to_owned()),
        Just("'**/*.tf'".to_owned()),
        Just("]\n".to_owned()),
        Just("{".to_owned()),
        Just("\n".to_owned()),
        "[a-z./*{}!-]{0,8}",
        any::<String>(),
    ]
}

fn path() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("..".to_owned()),
            Just("modules".to_owned()),
            Just("env".to_owned()),
            "[a-z.]{1,5}",
            any::<String>()
        ],
        1..5,
    )
    .prop_map(|parts| {
        let mut path = parts.join("/");
        path.push_str(".tf");
        path
    })
}

fn check_resolution(yaml: Option<&str>, tree: &[String], changed: &[String], comment: &str) {
    let policy = ServerRules::from_yaml(RULES)
        .map(|r| r.policy_for("h/o/r"))
        .unwrap_or_default();
    let Ok(resolution) = resolve(
        Inputs {
            atlantis_yaml: yaml,
            tree,
            changed,
            module_uses: &[],
        },
        &policy,
    ) else {
        return;
    };
    for project in resolution.modified.iter() {
        assert!(
            policy.excluded_by(&project.dir).is_none(),
            "excluded project planned: {}",
            project.dir
        );
        assert!(!project.dir.as_str().starts_with('/'));
    }
    if let Parsed::Run(command) = parse(comment, &Grammar::default())
        && let Ok(projects) = select(&command, &resolution)
    {
        for project in projects {
            assert!(
                policy.excluded_by(&project.dir).is_none(),
                "excluded project selected"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn atlantis_yaml_parser_never_panics_on_arbitrary_text(text in any::<String>()) {
        let _ = RepoConfig::parse(&text);
    }

    #[test]
    fn atlantis_yaml_parser_never_panics_on_yaml_soup(pieces in prop::collection::vec(yaml_piece(), 0..16)) {
        let text = pieces.concat();
        if let Ok(config) = RepoConfig::parse(&text) {
            for project in &config.projects {
                prop_assert!(!project.dir.as_str().contains(".."));
            }
        }
    }

    #[test]
    fn resolution_and_selection_never_panic_or_pick_excluded_dirs(
        pieces in prop::collection::vec(yaml_piece(), 0..12),
        tree in prop::collection::vec(path(), 0..12),
        changed in prop::collection::vec(path(), 0..12),
        flags in prop_oneof![
            Just(String::new()),
            Just("-d infra/atoll".to_owned()),
            Just("-d infra".to_owned()),
            Just("-p x".to_owned()),
            Just("-w staging".to_owned()),
            Just("-d .".to_owned()),
            "[-a-z ./]{0,12}",
        ],
    ) {
        let yaml = pieces.concat();
        let comment = format!("atlantis plan {flags}");
        let with_self: Vec<String> = tree.iter().cloned().chain(["infra/atoll/main.tf".to_owned()]).collect();
        check_resolution(Some(&yaml), &with_self, &changed, &comment);
        check_resolution(None, &with_self, &changed, &comment);
    }

    #[test]
    fn server_rules_parser_never_panics(text in any::<String>(), id in any::<String>()) {
        let _ = ServerRules::from_yaml(&text);
        let quoted = serde_json::to_string(&id).unwrap_or_default();
        if let Ok(rules) = ServerRules::from_yaml(&format!("repos:\n  - id: {quoted}\n")) {
            let _ = rules.policy_for(&id);
        }
        let _ = RepoPolicy::default();
    }
}
