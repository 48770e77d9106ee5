use super::*;

fn parse(yaml: &str) -> Result<BTreeMap<String, Workflow>, RepoConfigError> {
    let value: Value = serde_yaml_ng::from_str(yaml).expect("yaml");
    parse_workflows(&value, "workflows")
}

fn error(yaml: &str) -> String {
    match parse(yaml) {
        Ok(w) => panic!("parsed: {w:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn every_step_form_atlantis_documents_is_read_with_its_path() {
    let workflows = parse(
        r#"
prod:
  plan:
    steps:
      - init
      - env: {name: TF_VAR_size, value: "8"}
      - plan: {extra_args: ["-var-file=prod.tfvars"]}
      - run: echo hi
      - multienv: {command: envs.sh, output: hide}
      - env: {name: X, command: date, shell: bash, shellArgs: [-c]}
  apply:
    steps: [apply]
empty: ~
"#,
    )
    .expect("parses");
    let prod = &workflows["prod"];
    let plan = prod.stage(StageKind::Plan).expect("plan stage");
    assert_eq!(plan.path, "workflows.prod.plan");
    let kinds: Vec<&StepKind> = plan.steps.iter().map(|s| &s.kind).collect();
    assert_eq!(
        kinds,
        [
            &StepKind::Builtin {
                step: Builtin::Init,
                extra_args: vec![]
            },
            &StepKind::Env {
                name: "TF_VAR_size".into(),
                value: "8".into()
            },
            &StepKind::Builtin {
                step: Builtin::Plan,
                extra_args: vec!["-var-file=prod.tfvars".into()]
            },
            &StepKind::Shell(ShellStep::Run),
            &StepKind::Shell(ShellStep::MultiEnv),
            &StepKind::Shell(ShellStep::EnvCommand { name: "X".into() }),
        ]
    );
    assert_eq!(plan.steps[2].path, "workflows.prod.plan.steps[2]");
    assert!(prod.stage(StageKind::PolicyCheck).is_none());
    assert!(workflows["empty"].stage(StageKind::Plan).is_none());
}

#[test]
fn a_stage_without_steps_is_the_default() {
    let workflows = parse("w:\n  plan:\n    steps:\n  apply: ~\n").expect("parses");
    assert!(workflows["w"].stage(StageKind::Plan).is_none());
    assert!(workflows["w"].stage(StageKind::Apply).is_none());
}

#[test]
fn malformed_steps_are_refused_with_atlantis_words_and_the_key_path() {
    let cases = [
        (
            "w: {plan: {steps: [bogus]}}",
            "`workflows.w.plan.steps[0]` \"bogus\" is not a valid step type, maybe you omitted the 'run' key",
        ),
        (
            "w: {plan: {steps: [{init: {}, plan: {}}]}}",
            "step element can only contain a single key, found 2: init,plan",
        ),
        (
            "w: {plan: {steps: [{plan: {args: [x]}}]}}",
            "`workflows.w.plan.steps[0].plan.args` built-in steps only support a single extra_args key, found \"args\" in step plan",
        ),
        (
            "w: {plan: {steps: [{env: {value: x}}]}}",
            "env steps must have a \"name\" key set",
        ),
        (
            "w: {plan: {steps: [{env: {name: A, value: x, command: y}}]}}",
            "only support one of the \"value\" or \"command\" keys, found both",
        ),
        (
            "w: {plan: {steps: [{run: {output: hide}}]}}",
            "\"run\" step must have a \"command\" key set",
        ),
        (
            "w: {deploy: {steps: [plan]}}",
            "unknown key `workflows.w.deploy`",
        ),
        (
            "w: {plan: {steps: [init], when: x}}",
            "unknown key `workflows.w.plan.when`",
        ),
        (
            "w: {plan: {steps: [{env: {name: 'A B', value: x}}]}}",
            "`workflows.w.plan.steps[0].env.name` `A B` is not an environment variable name",
        ),
    ];
    for (yaml, expected) in cases {
        let message = error(yaml);
        assert!(message.contains(expected), "{yaml}: {message}");
    }
}

#[test]
fn sizes_are_bounded() {
    let many: String = (0..=MAX_WORKFLOWS).map(|i| format!("w{i}: ~\n")).collect();
    assert!(error(&many).contains("more than 100 workflows"));
    let steps = vec!["init"; MAX_STEPS + 1].join(", ");
    assert!(error(&format!("w: {{plan: {{steps: [{steps}]}}}}")).contains("more than 32 steps"));
    let args = vec!["-var=a=b"; MAX_EXTRA_WORDS + 1].join(", ");
    assert!(
        error(&format!(
            "w: {{plan: {{steps: [{{plan: {{extra_args: [{args}]}}}}]}}}}"
        ))
        .contains("more than 32 arguments")
    );
    let long = "x".repeat(MAX_VALUE_LEN + 1);
    assert!(
        error(&format!(
            "w: {{plan: {{steps: [{{env: {{name: A, value: {long}}}}}]}}}}"
        ))
        .contains("longer than")
    );
    let name = "n".repeat(MAX_NAME_LEN + 1);
    assert!(error(&format!("{name}: ~")).contains("not a workflow name"));
}
