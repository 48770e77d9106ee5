use super::*;
use crate::repocfg::workflow::parse_workflows;
use model::VarArg;

fn workflow(yaml: &str) -> Workflow {
    let value: serde_yaml_ng::Value = serde_yaml_ng::from_str(yaml).expect("yaml");
    let mut all = parse_workflows(&value, "workflows").expect("parses");
    all.remove("w").expect("workflow w")
}

fn refusal(yaml: &str) -> String {
    match workflow(yaml).for_project() {
        Ok(w) => panic!("accepted: {w:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn plan_extra_args_and_tf_var_env_steps_become_plan_options_in_order() {
    let w = workflow(
        r#"
w:
  plan:
    steps:
      - env: {name: TF_VAR_size, value: "8"}
      - init
      - plan: {extra_args: ["-var-file=envs/prod.tfvars", "-var", "name=web", "-target=a.b"]}
"#,
    )
    .for_project()
    .expect("accepted");
    assert_eq!(
        w.options.vars,
        [
            VarArg::env("size", "8").expect("env"),
            VarArg::file("envs/prod.tfvars").expect("file"),
            VarArg::var("name=web").expect("var"),
        ]
    );
    assert_eq!(w.options.targets[0].as_str(), "a.b");
    assert!(w.warnings.is_empty(), "{:?}", w.warnings);
}

#[test]
fn a_shell_step_in_any_stage_refuses_with_the_step_named_and_the_alternatives() {
    for (yaml, step) in [
        (
            "w: {plan: {steps: [{run: terraform plan}]}}",
            "workflows.w.plan.steps[0]",
        ),
        (
            "w: {state_rm: {steps: [{multienv: x.sh}]}}",
            "workflows.w.state_rm.steps[0]",
        ),
        (
            "w: {apply: {steps: [{env: {name: A, command: date}}, apply]}}",
            "workflows.w.apply.steps[0]",
        ),
    ] {
        let message = refusal(yaml);
        assert!(message.contains(&format!("`{step}`")), "{message}");
        assert!(message.contains("atoll never runs a shell"), "{message}");
        assert!(message.contains("-var-file"), "{message}");
        assert!(message.contains("static `value`"), "{message}");
    }
}

#[test]
fn an_unsupported_plan_flag_refuses_by_name_with_the_accepted_list() {
    let message = refusal("w: {plan: {steps: [{plan: {extra_args: [-parallelism=2]}}]}}");
    assert!(
        message
            .contains("`-parallelism` in `workflows.w.plan.steps[0].extra_args` is not supported"),
        "{message}"
    );
    assert!(
        message.contains(crate::commands::ACCEPTED_EXTRA),
        "{message}"
    );
    let escape = refusal("w: {plan: {steps: [{plan: {extra_args: [-var-file=../x.tfvars]}}]}}");
    assert!(escape.contains("inside the project"), "{escape}");
}

#[test]
fn harmless_init_and_apply_flags_warn_and_others_refuse() {
    let w = workflow(
        r#"
w:
  plan:
    steps:
      - init: {extra_args: [-upgrade, -backend-config, backend.hcl, -input=false]}
      - plan
  apply:
    steps:
      - apply: {extra_args: [-auto-approve]}
"#,
    )
    .for_project()
    .expect("accepted");
    let paths: Vec<&str> = w.warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "workflows.w.plan.steps[0].extra_args[0]",
            "workflows.w.plan.steps[0].extra_args[1]",
            "workflows.w.plan.steps[0].extra_args[3]",
            "workflows.w.apply.steps[0].extra_args[0]",
        ]
    );
    assert!(
        w.warnings[1].message.contains("own store"),
        "{:?}",
        w.warnings
    );
    let from_module = refusal("w: {plan: {steps: [{init: {extra_args: [-from-module=x]}}, plan]}}");
    assert!(
        from_module.contains("`-from-module` is not supported on `init`"),
        "{from_module}"
    );
    let target = refusal("w: {apply: {steps: [{apply: {extra_args: [-target=a.b]}}]}}");
    assert!(target.contains("put it in the plan step"), "{target}");
}

#[test]
fn env_names_are_honoured_warned_about_or_refused_by_meaning() {
    let w = workflow(
        "w: {plan: {steps: [{env: {name: TF_LOG, value: DEBUG}}, {env: {name: FOO, value: x}}, plan, {env: {name: TF_VAR_late, value: x}}]}}",
    )
    .for_project()
    .expect("accepted");
    let messages: Vec<String> = w.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(
        messages[0].contains("`TF_LOG`, which has no effect"),
        "{messages:?}"
    );
    assert!(
        messages[2].contains("after the `plan` step"),
        "{messages:?}"
    );
    assert!(w.options.vars.is_empty());
    for (name, says) in [
        ("TF_CLI_ARGS_plan", "extra_args"),
        ("TF_WORKSPACE", "workspace:"),
        ("PROXMOX_VE_ENDPOINT", "cannot choose them"),
    ] {
        let message = refusal(&format!(
            "w: {{plan: {{steps: [{{env: {{name: {name}, value: x}}}}, plan]}}}}"
        ));
        assert!(message.contains(says), "{name}: {message}");
    }
}

#[test]
fn stages_without_their_step_or_with_foreign_steps_refuse() {
    assert!(refusal("w: {plan: {steps: [init]}}").contains("has no `plan` step"));
    assert!(refusal("w: {apply: {steps: [init]}}").contains("has no `apply` step"));
    assert!(refusal("w: {plan: {steps: [plan, apply]}}").contains("only as its own command"));
    assert!(refusal("w: {apply: {steps: [plan, apply]}}").contains("as it was reviewed"));
    assert!(refusal("w: {plan: {steps: [plan, plan]}}").contains("second `plan` step"));
}

#[test]
fn policy_check_is_accepted_only_with_its_warning() {
    let w =
        workflow("w: {plan: {steps: [plan, policy_check]}, policy_check: {steps: [policy_check]}}")
            .for_project()
            .expect("accepted");
    let messages: Vec<&str> = w.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(messages, [POLICY_CHECK_WARNING, POLICY_CHECK_WARNING]);
}
