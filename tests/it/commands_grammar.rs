//! The comment grammar, black-box through `atoll::commands::parse`.

use atoll::commands::{
    Command, Grammar, Parsed, ProjectName, Reply, RepoDir, Usage, Verb, Workspace, parse,
};

fn grammar() -> Grammar {
    Grammar::new("atoll", Some("atoll-bot"))
}

fn run(text: &str) -> Command {
    match parse(text, &grammar()) {
        Parsed::Run(command) => command,
        other => panic!("{text:?} should run, got {other:?}"),
    }
}

fn reply(text: &str) -> Reply {
    match parse(text, &grammar()) {
        Parsed::Reply(reply) => reply,
        other => panic!("{text:?} should get a reply, got {other:?}"),
    }
}

fn error_message(text: &str) -> (String, Usage) {
    match reply(text) {
        Reply::Error { message, usage } => (message, usage),
        other => panic!("{text:?} should be an error, got {other:?}"),
    }
}

fn dir(raw: &str) -> Option<RepoDir> {
    Some(RepoDir::parse(raw).expect("valid dir"))
}

#[test]
fn plan_with_dir_is_parsed_for_every_executable_name() {
    for text in [
        "atlantis plan -d envs/dev",
        "atoll plan -d envs/dev",
        "@atoll-bot plan -d envs/dev",
    ] {
        let command = run(text);
        assert_eq!(command.verb, Verb::Plan);
        assert_eq!(command.dir, dir("envs/dev"));
        assert_eq!(command.workspace, None);
        assert_eq!(command.project, None);
        assert!(!command.verbose);
    }
}

#[test]
fn executable_and_verb_are_case_insensitive_and_backticks_are_stripped() {
    assert_eq!(run("Atlantis PLAN").verb, Verb::Plan);
    assert_eq!(run("@Atoll-Bot apply").verb, Verb::Apply);
    assert_eq!(
        run("`atlantis apply -p web`").project,
        ProjectName::parse("web").ok()
    );
    assert_eq!(run("  atlantis unlock  \n\n").verb, Verb::Unlock);
}

#[test]
fn every_flag_spelling_is_understood() {
    for text in [
        "atlantis plan -d a/b -w staging --verbose",
        "atlantis plan --dir a/b --workspace staging --verbose",
        "atlantis plan --dir=a/b --workspace=staging --verbose",
        "atlantis plan -d=a/b -w=staging --verbose",
        "atlantis plan -da/b -wstaging --verbose",
        "atlantis plan '-d' 'a/b' \"-w\" staging --verbose",
    ] {
        let command = run(text);
        assert_eq!(command.dir, dir("a/b"), "{text}");
        assert_eq!(
            command.workspace,
            Workspace::parse("staging").ok(),
            "{text}"
        );
        assert!(command.verbose, "{text}");
    }
}

#[test]
fn quoted_directory_with_spaces_is_one_value() {
    assert_eq!(
        run("atlantis plan -d 'my stacks/dev'").dir,
        dir("my stacks/dev")
    );
    assert_eq!(
        run(r"atlantis plan -d my\ stacks/dev").dir,
        dir("my stacks/dev")
    );
}

#[test]
fn directory_is_normalised() {
    assert_eq!(run("atlantis plan -d ./envs//dev/").dir, dir("envs/dev"));
    assert_eq!(run("atlantis plan -d envs/x/../dev").dir, dir("envs/dev"));
    assert_eq!(run("atlantis plan -d .").dir, Some(RepoDir::root()));
}

#[test]
fn bare_executable_help_and_help_flags_ask_for_help() {
    for text in [
        "atlantis",
        "atlantis help",
        "atlantis --help",
        "atlantis -h",
        "atoll HELP",
    ] {
        assert_eq!(run(text), Command::new(Verb::Help), "{text}");
    }
}

#[test]
fn help_for_one_command_is_a_reply() {
    assert_eq!(
        reply("atlantis plan --help"),
        Reply::Help { verb: Verb::Plan }
    );
    assert_eq!(
        reply("atlantis apply -d x -h"),
        Reply::Help { verb: Verb::Apply }
    );
    assert_eq!(
        reply("atlantis help unlock"),
        Reply::Help { verb: Verb::Unlock }
    );
}

#[test]
fn version_and_unlock_run() {
    assert_eq!(run("atlantis version"), Command::new(Verb::Version));
    let unlock = run("atlantis unlock -d x -w prod");
    assert_eq!(unlock.verb, Verb::Unlock);
    assert_eq!(unlock.dir, dir("x"));
    assert_eq!(unlock.workspace, Workspace::parse("prod").ok());
    assert_eq!(
        run("atlantis unlock -p web").project,
        ProjectName::parse("web").ok()
    );
}

#[test]
fn unlock_refuses_verbose() {
    let (message, usage) = error_message("atlantis unlock --verbose");
    assert!(
        message.contains("unknown flag `--verbose` for `unlock`"),
        "{message}"
    );
    assert_eq!(usage, Usage::Verb(Verb::Unlock));
}

#[test]
fn multi_line_comments_are_not_commands() {
    for text in [
        "atlantis plan\nplease",
        "looks good\natlantis apply",
        "```\natlantis plan\n```",
        "atlantis plan\r\n-d x",
        "atlantis plan\n\nthanks",
    ] {
        assert_eq!(parse(text, &grammar()), Parsed::Ignore, "{text:?}");
    }
}

#[test]
fn ordinary_comments_are_ignored() {
    for text in [
        "",
        "   ",
        "LGTM",
        "I don't know why 'this fails",
        "all good",
        "atlas plan",
        "terraform is great",
        "please run atlantis plan",
        "atollx",
    ] {
        assert_eq!(parse(text, &grammar()), Parsed::Ignore, "{text:?}");
    }
}

#[test]
fn terraform_command_gets_did_you_mean_atlantis() {
    assert_eq!(
        reply("terraform plan -d envs/dev"),
        Reply::DidYouMean {
            typed: "terraform".to_owned(),
            suggestion: "atlantis plan".to_owned()
        }
    );
    assert_eq!(
        reply("Terraform APPLY"),
        Reply::DidYouMean {
            typed: "terraform".to_owned(),
            suggestion: "atlantis apply".to_owned()
        }
    );
}

#[test]
fn near_miss_of_an_executable_name_gets_did_you_mean() {
    let cases = [
        ("atlantos plan", "atlantos", "atlantis plan"),
        ("atlnts apply", "atlnts", "atlantis apply"),
        ("atol plan", "atol", "atoll plan"),
        ("@atoll-bto unlock", "@atoll-bto", "@atoll-bot unlock"),
    ];
    for (text, typed, suggestion) in cases {
        assert_eq!(
            reply(text),
            Reply::DidYouMean {
                typed: typed.to_owned(),
                suggestion: suggestion.to_owned()
            },
            "{text}"
        );
    }
}

#[test]
fn unknown_command_gets_usage_of_all_commands() {
    let (message, usage) = error_message("atlantis destroy");
    assert_eq!(message, "unknown command `destroy`");
    assert_eq!(usage, Usage::Commands);
    let (message, _) = error_message("atlantis -d x plan");
    assert!(message.starts_with("unknown flag `-d`"), "{message}");
}

#[test]
fn unknown_flag_gets_usage_of_the_command() {
    for (text, flag) in [
        ("atlantis plan --foo", "--foo"),
        (
            "atlantis plan --auto-merge-disabled",
            "--auto-merge-disabled",
        ),
        ("atlantis plan -x", "-x"),
        ("atlantis plan -verbose", "-verbose"),
    ] {
        let (message, usage) = error_message(text);
        assert!(
            message.contains(&format!("unknown flag `{flag}`")),
            "{text}: {message}"
        );
        assert_eq!(
            usage,
            Usage::Verb(
                text.split(' ')
                    .nth(1)
                    .and_then(Verb::from_word)
                    .expect("verb")
            )
        );
    }
}

#[test]
fn positional_arguments_are_refused() {
    let (message, usage) = error_message("atlantis plan envs/dev");
    assert_eq!(
        message,
        "unexpected argument `envs/dev`; `plan` takes only flags"
    );
    assert_eq!(usage, Usage::Verb(Verb::Plan));
    let (message, _) = error_message("atlantis help plan apply");
    assert!(message.contains("unexpected argument `apply`"), "{message}");
    assert!(matches!(reply("atlantis version now"), Reply::Error { .. }));
}

#[test]
fn project_is_exclusive_with_dir_and_workspace() {
    for text in [
        "atlantis plan -p web -d envs/dev",
        "atlantis plan -p web -w prod",
        "atlantis apply -d . -w default -p web",
        "atlantis unlock -p web -d x",
    ] {
        let (message, _) = error_message(text);
        assert!(
            message.contains("`-p` cannot be combined with `-d` or `-w`"),
            "{text}: {message}"
        );
    }
}

#[test]
fn double_dash_flags_atoll_does_not_honour_are_refused_by_name() {
    for (text, needle) in [
        (
            "atlantis plan -- -parallelism=3",
            "`-parallelism` after `--` is not supported",
        ),
        (
            "atlantis apply -d x -- -auto-approve",
            "`apply` takes nothing after `--`",
        ),
        ("atlantis plan '--' x", "`x` after `--` is not a flag"),
    ] {
        let (message, usage) = error_message(text);
        assert!(message.contains(needle), "{text}: {message}");
        assert!(matches!(usage, Usage::Verb(_)));
    }
    assert_eq!(run("atlantis plan -d x --").dir, dir("x"));
}

#[test]
fn directory_escaping_the_repository_is_refused() {
    for (text, needle) in [
        (
            "atlantis plan -d ../../etc",
            "points outside the repository",
        ),
        (
            "atlantis plan -d a/../../etc",
            "points outside the repository",
        ),
        ("atlantis plan -d /etc", "is absolute"),
        ("atlantis plan -d 'envs/../*'", "may not use `..`"),
        ("atlantis plan -d ~/x", "`~`"),
        // The comment fuzzer's find: normalised, this was `--pvatlas`, which printed back as
        // `-d --pvatlas` did not parse again (and reads as an option).
        ("atlantis plan -d ennv/./../--pvatlas", "`-`"),
    ] {
        let (message, usage) = error_message(text);
        assert!(message.contains(needle), "{text}: {message}");
        assert_eq!(usage, Usage::Verb(Verb::Plan));
    }
}

#[test]
fn workspace_with_shell_characters_is_refused() {
    for text in [
        "atlantis plan -w 'a;id'",
        "atlantis plan -w '$(id)'",
        "atlantis plan -w ../x",
        "atlantis plan -w 'a b'",
        "atlantis apply -w=`id`",
    ] {
        let (message, _) = error_message(text);
        assert!(message.contains("is not a valid name"), "{text}: {message}");
    }
}

#[test]
fn flag_without_value_repeated_or_with_bad_value_is_refused() {
    let (message, _) = error_message("atlantis plan -d");
    assert_eq!(message, "flag `-d` needs a value: `-d DIR`");
    let (message, _) = error_message("atlantis plan -d --verbose");
    assert!(message.contains("needs a value"), "{message}");
    let (message, _) = error_message("atlantis plan -d a -d b");
    assert!(message.contains("given more than once"), "{message}");
    let (message, _) = error_message("atlantis plan --verbose=true");
    assert_eq!(message, "flag `--verbose` takes no value");
    let (message, _) = error_message("atlantis plan -d ''");
    assert!(message.contains("empty"), "{message}");
}

#[test]
fn unterminated_quote_after_executable_is_an_error() {
    let (message, usage) = error_message("atlantis plan -d 'envs");
    assert!(message.contains("single quote"), "{message}");
    assert_eq!(usage, Usage::Commands);
}

#[test]
fn echoed_words_are_printable_and_short() {
    let long = "x".repeat(500);
    let (message, _) = error_message(&format!("atlantis {long}"));
    assert!(message.len() < 120, "{message}");
    let (message, _) = error_message("atlantis plan --fo\u{7}o");
    assert!(!message.chars().any(char::is_control), "{message:?}");
}

#[test]
fn parsed_values_round_trip_through_json() {
    for text in [
        "atlantis plan -d envs/dev -w prod --verbose",
        "atlantis destroy",
        "terraform plan",
    ] {
        let parsed = parse(text, &grammar());
        let json = serde_json::to_string(&parsed).expect("serialise");
        let back: Parsed = serde_json::from_str(&json).expect("deserialise");
        assert_eq!(back, parsed, "{json}");
    }
    let tampered =
        r#"{"verb":"plan","project":null,"dir":"../etc","workspace":null,"verbose":false}"#;
    assert!(serde_json::from_str::<Command>(tampered).is_err());
}

#[test]
fn configured_name_replaces_atoll() {
    let grammar = Grammar::new("infra-bot", None);
    assert!(matches!(parse("infra-bot plan", &grammar), Parsed::Run(_)));
    assert!(matches!(parse("atlantis plan", &grammar), Parsed::Run(_)));
    assert_eq!(parse("atoll plan", &grammar), Parsed::Ignore);
}

#[test]
fn a_command_written_back_as_a_comment_parses_to_itself() {
    for text in [
        "atlantis plan -d 'my stacks/dev' -w staging --verbose",
        "atlantis apply -p prod/network",
        "atlantis unlock -d \"it's here\"",
        "atlantis plan",
        "atlantis version -d a,b",
    ] {
        let command = run(text);
        let again = command.to_comment("atoll");
        assert_eq!(run(&again), command, "{text} -> {again}");
    }
    let command = run("atlantis plan -d 'my dir' -w staging");
    assert_eq!(
        command.to_comment("atlantis"),
        "atlantis plan -d 'my dir' -w staging"
    );
}

#[test]
fn approve_policies_takes_project_flags_a_policy_set_and_the_clear_switch() {
    let all = run("atlantis approve_policies");
    assert_eq!(all.verb, Verb::ApprovePolicies);
    assert!(all.policy_set.is_none() && !all.clear_policy_approval);
    let one =
        run("atlantis approve_policies -d envs/dev --policy-set guests --clear-policy-approval");
    assert_eq!(one.dir, dir("envs/dev"));
    assert_eq!(one.policy_set.as_deref(), Some("guests"));
    assert!(one.clear_policy_approval);
    assert_eq!(
        one.to_comment("atoll"),
        "atoll approve_policies -d envs/dev --policy-set guests --clear-policy-approval"
    );
    let (message, usage) = error_message("atlantis approve_policies --policy-set 'a b'");
    assert!(message.contains("not a policy set name"), "{message}");
    assert_eq!(usage, Usage::Verb(Verb::ApprovePolicies));
    let (message, _) = error_message("atlantis plan --policy-set guests");
    assert!(message.contains("unknown flag"), "{message}");
    let (message, _) = error_message("atlantis approve_policies -p web -d envs/dev");
    assert!(message.contains("cannot be combined"), "{message}");
}
