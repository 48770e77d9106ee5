//! The Terraform flags after `--` in a plan comment, black-box through `atoll::commands::parse`.

use atoll::commands::{
    Command, Grammar, Parsed, PlanOptions, Reply, ResourceAddress, Usage, VarArg, Verb, parse,
};

fn run(text: &str) -> Command {
    match parse(text, &Grammar::default()) {
        Parsed::Run(command) => command,
        other => panic!("{text:?} should run, got {other:?}"),
    }
}

fn refusal(text: &str) -> String {
    match parse(text, &Grammar::default()) {
        Parsed::Reply(Reply::Error { message, usage }) => {
            assert_eq!(usage, Usage::Verb(Verb::Plan), "{text}");
            message
        }
        other => panic!("{text:?} should be refused, got {other:?}"),
    }
}

fn address(raw: &str) -> ResourceAddress {
    ResourceAddress::parse(raw).expect("address")
}

#[test]
fn atlantis_help_example_targets_one_resource() {
    let command = run("atlantis plan -d . -- -target=proxmox_virtual_environment_container.web");
    assert_eq!(
        command.options.targets,
        [address("proxmox_virtual_environment_container.web")]
    );
    assert!(!command.options.destroy);
}

#[test]
fn every_honoured_flag_is_parsed_in_both_terraform_spellings() {
    let command = run(
        r#"atlantis plan -- -target module.dev -replace='a_b.c["x"]' --destroy -var 'size=8' -var-file=env/dev.tfvars -var=name=web -refresh=true -lock-timeout=0s"#,
    );
    let expected = PlanOptions {
        targets: vec![address("module.dev")],
        replace: vec![address(r#"a_b.c["x"]"#)],
        destroy: true,
        vars: vec![
            VarArg::var("size=8").expect("var"),
            VarArg::file("env/dev.tfvars").expect("file"),
            VarArg::var("name=web").expect("var"),
        ],
    };
    assert_eq!(command.options, expected);
}

#[test]
fn destroy_false_is_an_ordinary_plan() {
    assert!(run("atlantis plan -- -destroy=false").options.is_empty());
}

#[test]
fn options_survive_the_job_payload_and_are_absent_when_empty() {
    let command = run("atlantis plan -- -target=a.b -var x=1");
    let json = serde_json::to_value(&command).expect("json");
    let back: Command = serde_json::from_value(json).expect("back");
    assert_eq!(back, command);
    let plain = serde_json::to_value(run("atlantis plan")).expect("json");
    assert!(plain.get("options").is_none(), "{plain}");
}

#[test]
fn unsafe_or_unsupported_values_are_refused_with_the_reason() {
    for (text, needle) in [
        (
            "atlantis plan -- -var-file=../secrets.tfvars",
            "without `..`",
        ),
        ("atlantis plan -- -var-file=/etc/passwd", "not absolute"),
        (
            "atlantis plan -- -target='$(rm -rf /)'",
            "is not a resource address",
        ),
        ("atlantis plan -- -target", "`-target` needs a value"),
        ("atlantis plan -- -var novalue", "NAME=VALUE"),
        (
            "atlantis plan -- -refresh=false",
            "cannot plan without reading",
        ),
        (
            "atlantis plan -- -lock-timeout=5m",
            "never waits for a project lock",
        ),
        ("atlantis plan -- -destroy=maybe", "true or false"),
        (
            "atlantis plan -- -out=x",
            "-target=ADDRESS, -replace=ADDRESS, -destroy",
        ),
    ] {
        let message = refusal(text);
        assert!(message.contains(needle), "{text}: {message}");
    }
}

#[test]
fn extra_words_are_bounded_in_count_and_length() {
    let many = "-destroy ".repeat(atoll::commands::MAX_EXTRA_WORDS + 1);
    assert!(refusal(&format!("atlantis plan -- {many}")).contains("too many words"));
    let long = "x".repeat(atoll::commands::MAX_EXTRA_WORD_LEN + 1);
    assert!(refusal(&format!("atlantis plan -- -var a={long}")).contains("longer than"));
}
