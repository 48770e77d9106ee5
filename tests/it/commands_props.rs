//! Property tests: the comment parser never panics and its results keep their invariants, on
//! arbitrary strings and on token soups built from the grammar's own words.

use atoll::commands::{
    AllowedCommands, Command, Grammar, Parsed, Reply, RepoDir, Workspace, parse,
};
use proptest::prelude::*;

fn grammar() -> Grammar {
    Grammar::new("atoll", Some("atoll-bot")).allowing(AllowedCommands::all())
}

/// A command that was run satisfies every rule the parser promises.
fn check_invariants(command: &Command) {
    assert!(!(command.project.is_some() && (command.dir.is_some() || command.workspace.is_some())));
    if let Some(dir) = &command.dir {
        let raw = dir.as_str();
        assert!(!raw.starts_with('/'), "{raw}");
        assert!(
            raw == "."
                || raw
                    .split('/')
                    .all(|p| !p.is_empty() && p != "." && p != ".."),
            "{raw}"
        );
        assert_eq!(RepoDir::parse(raw).as_ref(), Ok(dir));
    }
    if let Some(ws) = &command.workspace {
        assert_eq!(Workspace::parse(ws.as_str()).as_ref(), Ok(ws));
    }
}

fn check(text: &str) {
    match parse(text, &grammar()) {
        Parsed::Run(command) => {
            check_invariants(&command);
            let again = command.to_comment("atoll");
            assert_eq!(parse(&again, &grammar()), Parsed::Run(command), "{again}");
        }
        Parsed::Reply(Reply::Error { message, .. }) => {
            assert!(!message.is_empty());
            assert!(!message.chars().any(char::is_control), "{message:?}");
        }
        Parsed::Reply(_) | Parsed::Ignore => {}
    }
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("atlantis".to_owned()),
        Just("atoll".to_owned()),
        Just("@atoll-bot".to_owned()),
        Just("terraform".to_owned()),
        Just("atlantos".to_owned()),
        Just("plan".to_owned()),
        Just("apply".to_owned()),
        Just("unlock".to_owned()),
        Just("help".to_owned()),
        Just("version".to_owned()),
        Just("import".to_owned()),
        Just("state".to_owned()),
        Just("rm".to_owned()),
        Just("a.b".to_owned()),
        Just("module.m.a.b[\"k\"]".to_owned()),
        Just("pve/100".to_owned()),
        Just("-p".to_owned()),
        Just("-d".to_owned()),
        Just("-w".to_owned()),
        Just("--dir=".to_owned()),
        Just("--verbose".to_owned()),
        Just("-h".to_owned()),
        Just("--".to_owned()),
        Just("..".to_owned()),
        Just("/".to_owned()),
        Just("'".to_owned()),
        Just("\"".to_owned()),
        Just("\\".to_owned()),
        Just("`".to_owned()),
        Just("\n".to_owned()),
        "[a-z./-]{0,6}",
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parser_never_panics_on_arbitrary_text(text in any::<String>()) {
        check(&text);
    }

    #[test]
    fn parser_never_panics_on_token_soup(
        words in prop::collection::vec(word(), 0..10),
        seps in prop::collection::vec(prop_oneof![Just(" "), Just(""), Just("\t"), Just("=")], 10),
    ) {
        let mut text = String::new();
        for (word, sep) in words.iter().zip(seps.iter().cycle()) {
            text.push_str(word);
            text.push_str(sep);
        }
        check(&text);
        check(&format!("atlantis {text}"));
        check(&format!("atlantis plan {text}"));
    }

    #[test]
    fn valid_dir_and_workspace_always_parse_back(
        parts in prop::collection::vec("[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,8}", 1..5),
        ws in "[a-zA-Z0-9][a-zA-Z0-9_.-]{0,20}",
    ) {
        // `..` is refused in a workspace name, as in Atlantis.
        prop_assume!(!ws.contains(".."));
        let dir = parts.join("/");
        let text = format!("atlantis plan -d '{dir}' -w {ws}");
        match parse(&text, &grammar()) {
            Parsed::Run(command) => {
                let expected = RepoDir::parse(&dir).ok();
                prop_assert_eq!(command.dir, expected);
                prop_assert_eq!(command.workspace.map(String::from), Some(ws));
            }
            other => prop_assert!(false, "{text:?} gave {other:?}"),
        }
    }
}
