//! Property tests over the parser and evaluator: arbitrary input never panics or hangs, because
//! recursion, expansion and the number of values produced are all bounded.

use std::fmt::Write as _;

use proptest::prelude::*;
use tfconfig::Input;

fn leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i32>().prop_map(|n| n.to_string()),
        "[a-z]{0,6}".prop_map(|s| format!("\"{s}\"")),
        Just("true".to_owned()),
        Just("null".to_owned()),
        Just("\"${1 + 1}\"".to_owned()),
        Just("[]".to_owned()),
        Just("{}".to_owned()),
        (0u32..100_000_000).prop_map(|n| format!("range({n})")),
    ]
}

const FUNCS: &[&str] = &[
    "length",
    "concat",
    "merge",
    "flatten",
    "keys",
    "values",
    "tostring",
    "tonumber",
    "jsonencode",
    "yamlencode",
    "format",
    "join",
    "split",
    "upper",
    "range",
    "setproduct",
    "distinct",
    "sort",
    "cidrsubnet",
    "cidrhost",
    "try",
    "can",
    "lookup",
    "element",
    "zipmap",
    "toset",
    "tomap",
    "tolist",
    "coalesce",
    "sum",
    "max",
    "abs",
    "indent",
    "replace",
    "substr",
    "formatlist",
    "transpose",
    "one",
    "sensitive",
    "nonsensitive",
    "file",
    "regex",
    "regexall",
    "templatefile",
];

fn expr() -> impl Strategy<Value = String> {
    leaf().prop_recursive(6, 64, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
            prop::collection::vec(("[a-z]{1,3}", inner.clone()), 0..4).prop_map(|v| {
                let body: Vec<String> = v.into_iter().map(|(k, e)| format!("{k} = {e}")).collect();
                format!("{{ {} }}", body.join(", "))
            }),
            (
                prop::sample::select(FUNCS),
                prop::collection::vec(inner.clone(), 0..3)
            )
                .prop_map(|(f, a)| format!("{f}({})", a.join(", "))),
            (
                inner.clone(),
                prop::sample::select(&["+", "-", "*", "/", "%", "==", "<", "&&", "||"][..]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            (inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(c, a, b)| format!("({c} ? {a} : {b})")),
            (inner.clone(), inner.clone()).prop_map(|(c, v)| format!("[for x in {c} : {v}]")),
            (inner.clone(), inner.clone())
                .prop_map(|(c, v)| format!("{{for k, x in {c} : k => {v}...}}")),
            inner.clone().prop_map(|e| format!("{e}[*]")),
            inner.clone().prop_map(|e| format!("{e}[0]")),
            inner.prop_map(|e| format!("\"a${{{e}}}%{{ for x in {e} }}b%{{ endfor }}\"")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics_the_expression_evaluator(src in "\\PC{0,200}") {
        let _ = tfconfig::evaluate_expression(&src);
    }

    #[test]
    fn generated_expressions_evaluate_or_fail_cleanly(src in expr()) {
        let _ = tfconfig::evaluate_expression(&src);
    }

    #[test]
    fn numeric_edge_cases_in_functions_never_panic(
        a in prop_oneof![any::<i64>().prop_map(|n| n.to_string()), Just("-0".to_owned()), Just("1e308".to_owned()), Just("0.5".to_owned())],
        b in prop_oneof![any::<i32>().prop_map(|n| n.to_string()), Just("128".to_owned()), Just("0".to_owned()), Just("-1".to_owned())],
        prefix in prop_oneof![Just("10.0.0.0/8"), Just("::/0"), Just("0.0.0.0/0"), Just("ffff::/1"), Just("1.2.3.4/32"), Just("fd00::/127")],
    ) {
        for src in [
            format!("cidrsubnet(\"{prefix}\", {b}, {a})"),
            format!("cidrhost(\"{prefix}\", {a})"),
            format!("cidrsubnets(\"{prefix}\", {b}, {b})"),
            format!("cidrnetmask(\"{prefix}\")"),
            format!("substr(\"héllo\", {a}, {b})"),
            format!("slice([1, 2, 3], {b}, {a})"),
            format!("element([1, 2], {a})"),
            format!("range({b}, {a}, {b})"),
            format!("format(\"%{b}.{b}f|%x|%o|%b|%e\", {a}, {a}, {a}, {a}, {a})"),
            format!("indent({b}, \"a\\nb\")"),
            format!("parseint(\"{a}\", {b})"),
            format!("[1, 2][{a}]"),
            format!("{a} % {b} + {a} / {b}"),
        ] {
            let _ = tfconfig::evaluate_expression(&src);
        }
    }

    #[test]
    fn arbitrary_configuration_files_load_without_panicking(body in "(resource|locals|variable|output|module|\\{|\\}|\"x\"|=|\\[|\\]|count|for_each|each\\.key|var\\.x|local\\.y|\n| |[a-z_]{1,8}|[0-9]{1,3}){0,60}") {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("main.tf"), &body).expect("write main.tf");
        let loaded = tfconfig::load(&Input { checkout: dir.path().to_path_buf(), project_dir: ".".into(), workspace: "default".into(), vars: Vec::new(), limits: Default::default(), modules: Default::default() });
        let _ = loaded.render_diagnostics();
    }
}

fn load_text(main_tf: &str) -> tfconfig::Loaded {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("main.tf"), main_tf).expect("write main.tf");
    tfconfig::load(&Input {
        checkout: dir.path().to_path_buf(),
        project_dir: ".".into(),
        workspace: "default".into(),
        vars: Vec::new(),
        limits: Default::default(),
        modules: Default::default(),
    })
}

#[test]
fn values_that_double_at_every_step_stop_at_the_evaluation_budget() {
    let mut src = String::from("locals {\n  l0 = [1, 2, 3, 4, 5, 6, 7, 8]\n");
    for i in 1..40 {
        let p = i - 1;
        let _ = writeln!(
            src,
            "  l{i} = [local.l{p}, local.l{p}, local.l{p}, local.l{p}]"
        );
    }
    src.push_str("}\n");
    let loaded = load_text(&src);
    assert!(
        loaded
            .render_diagnostics()
            .contains("Evaluation limit reached"),
        "{}",
        loaded.render_diagnostics()
    );
}

#[test]
fn strings_that_double_at_every_step_stop_at_the_evaluation_budget() {
    let mut src = String::from(
        "locals {\n  s0 = \"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\"\n",
    );
    for i in 1..40 {
        let p = i - 1;
        let _ = writeln!(src, "  s{i} = \"${{local.s{p}}}${{local.s{p}}}\"");
    }
    src.push_str("}\n");
    let loaded = load_text(&src);
    assert!(
        loaded
            .render_diagnostics()
            .contains("Evaluation limit reached"),
        "{}",
        loaded.render_diagnostics()
    );
}

#[test]
fn huge_range_and_for_each_are_refused_with_a_diagnostic() {
    let loaded = load_text(
        "resource \"random_string\" \"r\" {\n  for_each = toset([for i in flatten([for a in range(50) : [for b in range(1000) : a * 1000 + b]]) : tostring(i)])\n  length = 4\n}\n",
    );
    let text = loaded.render_diagnostics();
    assert!(text.contains("at most 10000 instances"), "{text}");
    assert!(tfconfig::evaluate_expression("range(4000000000)").is_err());
}

#[test]
fn deeply_nested_input_is_a_parse_error_not_a_stack_overflow() {
    let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
    assert!(tfconfig::evaluate_expression(&deep).is_err());
    let loaded = load_text(&format!("locals {{\n  x = {deep}\n}}\n"));
    assert!(loaded.has_errors());
}

#[test]
fn long_reference_chains_evaluate_without_recursion_limits() {
    let mut src = String::from("locals {\n  v0 = 0\n");
    for i in 1..2000 {
        let _ = writeln!(src, "  v{i} = local.v{} + 1", i - 1);
    }
    src.push_str("}\noutput \"last\" {\n  value = local.v1999\n}\n");
    let loaded = load_text(&src);
    assert!(!loaded.has_errors(), "{}", loaded.render_diagnostics());
    assert_eq!(
        loaded.outputs.get("last").map(|o| o.value.clone()),
        Some(tfconfig::Value::Number(1999.0))
    );
}

#[test]
fn values_nested_deeply_through_references_are_refused_before_they_can_overflow_a_stack() {
    let mut src = String::from("locals {\n  v0 = 0\n");
    for i in 1..400 {
        let _ = writeln!(src, "  v{i} = [[[[[[[[local.v{}]]]]]]]]", i - 1);
    }
    src.push_str("}\n");
    let loaded = load_text(&src);
    let text = loaded.render_diagnostics();
    assert!(text.contains("Value nested too deeply"), "{text}");
    assert!(loaded.diagnostics.len() < 20, "{text}");
}
