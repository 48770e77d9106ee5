//! Issue 11's resource bombs against the evaluator: each ends in a precise Terraform-style
//! diagnostic naming the limit and its setting, quickly (memory is measured in
//! `tfconfig_bomb_memory`).

use crate::bombs;

use std::path::Path;

use tfconfig::{Input, Limits, Loaded};

fn load_with(root: &Path, limits: Limits) -> Loaded {
    tfconfig::load(&Input {
        checkout: root.to_path_buf(),
        project_dir: ".".into(),
        workspace: "default".into(),
        vars: Vec::new(),
        limits,
        modules: Default::default(),
    })
}

fn load_bomb(bomb: &bombs::Bomb) -> (tempfile::TempDir, Loaded) {
    let dir = tempfile::tempdir().expect("tempdir");
    bomb.write(dir.path());
    let loaded = load_with(dir.path(), Limits::default());
    (dir, loaded)
}

fn source_files(loaded: &Loaded) -> usize {
    (0..)
        .take_while(|i| loaded.sources.get(*i).is_some())
        .count()
}

#[test]
fn module_fan_out_is_refused_with_too_many_module_calls_after_reading_each_directory_once() {
    let (_dir, loaded) = load_bomb(&bombs::module_fan_out());
    let text = loaded.render_diagnostics();
    assert!(text.contains("Error: Too many module calls"), "{text}");
    assert!(text.contains("limits.module_instances"), "{text}");
    assert_eq!(
        text.matches("Too many module calls").count(),
        1,
        "reported once: {text}"
    );
    assert_eq!(source_files(&loaded), 15, "each of the 15 files read once");
}

#[test]
fn nested_module_for_each_is_refused_for_the_whole_project_not_per_block() {
    let (_dir, loaded) = load_bomb(&bombs::nested_module_for_each());
    let text = loaded.render_diagnostics();
    assert!(text.contains("Error: Too many module calls"), "{text}");
    assert!(text.contains("more than 2000 module instances"), "{text}");
    assert!(loaded.resources.len() <= 2000, "{}", loaded.resources.len());
}

#[test]
fn resource_instances_are_capped_across_module_instances() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("main.tf"),
        "module \"m\" {\n  source = \"./m\"\n  count  = 40\n}\n",
    )
    .expect("write main.tf");
    std::fs::create_dir(dir.path().join("m")).expect("mkdir");
    std::fs::write(
        dir.path().join("m/main.tf"),
        "resource \"random_string\" \"r\" {\n  count  = 40\n  length = 4\n}\n",
    )
    .expect("write module");
    let limits = Limits {
        resource_instances: 1000,
        ..Limits::default()
    };
    let loaded = load_with(dir.path(), limits);
    let text = loaded.render_diagnostics();
    assert!(
        text.contains("Error: Too many resource instances"),
        "{text}"
    );
    assert!(text.contains("limits.resource_instances"), "{text}");
    assert!(loaded.resources.len() <= 1000);
}

#[test]
fn formatlist_of_a_million_padded_strings_stops_at_the_memory_budget() {
    let (_dir, loaded) = load_bomb(&bombs::formatlist_of_padded_strings());
    let text = loaded.render_diagnostics();
    assert!(text.contains("Error: Evaluation limit reached"), "{text}");
    assert!(text.contains("limits.eval_memory_mb"), "{text}");
    assert!(text.contains("128 MiB"), "{text}");
}

#[test]
fn functions_that_multiply_their_input_stop_at_the_memory_budget() {
    let small = Limits {
        eval_memory_bytes: 8 * 1024 * 1024,
        ..Limits::default()
    };
    // YAML aliases repeat what they name: 500 aliases of a 500-element list.
    let yaml = format!(
        "a: &a [{}]\\nb: [{}]\\n",
        vec!["x"; 500].join(", "),
        vec!["*a"; 500].join(", ")
    );
    for expr in [
        "format(join(\"\", [for i in flatten([for a in range(4) : [for b in range(1000) : a * 1000 + b]]) : \"%4096s\"]), local.l...)",
        "join(\"\", formatlist(\"%4096s\", flatten([for a in range(4) : [for b in range(1000) : a * 1000 + b]])))",
        "[for i in flatten([for a in range(100) : [for b in range(1000) : a * 1000 + b]]) : \"${local.k}${local.k}\"]",
        "setproduct(local.l, local.l, local.l)",
        "split(\"\", join(\"\", formatlist(\"%4096s\", flatten([for a in range(2) : [for b in range(1000) : a * 1000 + b]]))))",
        "yamldecode(local.yaml)",
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("main.tf"),
            format!(
                "locals {{\n  l    = [for i in flatten([for a in range(4) : [for b in range(1000) : a * 1000 + b]]) : tostring(i)]\n  k    = \"{}\"\n  yaml = \"{yaml}\"\n  out  = {expr}\n}}\n",
                "k".repeat(1000)
            ),
        )
        .expect("write main.tf");
        let loaded = load_with(dir.path(), small.clone());
        let text = loaded.render_diagnostics();
        assert!(text.contains("Evaluation limit reached"), "{expr}: {text}");
    }
}

#[test]
fn a_failing_line_of_megabytes_is_quoted_as_a_short_window() {
    let (_dir, loaded) = load_bomb(&bombs::long_failing_line());
    let text = loaded.render_diagnostics();
    assert!(
        text.contains("Call to unknown function"),
        "{}",
        &text[..200]
    );
    assert!(text.len() < 2_000, "{} bytes of diagnostics", text.len());
    assert!(text.contains("no_such_function()"), "{text}");
}
