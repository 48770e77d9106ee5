//! Every file the evaluator reads from a checkout goes through one reader: no link out of the
//! checkout, regular files only (a FIFO is refused before it is opened, so it cannot block),
//! a byte cap per file and a total, files and module directories counted.

use crate::bombs;

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

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

/// Loads `root` on another thread; a load that blocks (on a FIFO) fails the test at the
/// deadline instead of hanging it.
fn load_within_deadline(root: &Path) -> String {
    let (tx, rx) = mpsc::channel();
    let root = root.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(load_with(&root, Limits::default()).render_diagnostics());
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the load finished instead of blocking on the FIFO")
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("running mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

fn write(root: &Path, name: &str, text: &str) {
    std::fs::write(root.join(name), text).expect("write");
}

#[test]
fn configuration_file_linked_to_dev_zero_is_refused_unread() {
    let dir = tempfile::tempdir().expect("tempdir");
    bombs::tf_file_to_dev_zero().write(dir.path());
    let text = load_with(dir.path(), Limits::default()).render_diagnostics();
    assert!(text.contains("\"zero.tf\" could not be read"), "{text}");
    assert!(text.contains("symbolic link"), "{text}");
}

#[test]
fn variables_file_that_is_a_fifo_is_refused_without_blocking() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "main.tf",
        "variable \"x\" {\n  default = 1\n}\n",
    );
    mkfifo(&dir.path().join("terraform.tfvars"));
    let text = load_within_deadline(dir.path());
    assert!(
        text.contains("terraform.tfvars could not be read"),
        "{text}"
    );
    assert!(text.contains("not a regular"), "{text}");
}

#[test]
fn file_function_on_a_fifo_is_refused_without_blocking() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "main.tf", "locals {\n  x = file(\"pipe\")\n}\n");
    mkfifo(&dir.path().join("pipe"));
    let text = load_within_deadline(dir.path());
    assert!(text.contains("not a regular"), "{text}");
}

#[test]
fn configuration_file_over_the_byte_cap_is_refused_naming_the_setting() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "main.tf", &format!("# {}\n", "x".repeat(2000)));
    let limits = Limits {
        file_bytes: 1024,
        ..Limits::default()
    };
    let text = load_with(dir.path(), limits).render_diagnostics();
    assert!(text.contains("larger than 1 KiB"), "{text}");
    assert!(text.contains("limits.tf_file_bytes"), "{text}");
}

#[test]
fn reads_past_the_project_total_are_refused_naming_the_setting() {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in ["a.tf", "b.tf", "c.tf"] {
        write(dir.path(), name, &format!("# {}\n", "x".repeat(1500)));
    }
    let limits = Limits {
        project_bytes: 4096,
        ..Limits::default()
    };
    let text = load_with(dir.path(), limits).render_diagnostics();
    assert!(text.contains("\"c.tf\" could not be read"), "{text}");
    assert!(text.contains("limits.project_bytes"), "{text}");
}

#[test]
fn files_past_the_loaded_files_limit_are_refused_naming_the_setting() {
    let dir = tempfile::tempdir().expect("tempdir");
    for i in 0..5 {
        write(dir.path(), &format!("f{i}.tf"), "\n");
    }
    let limits = Limits {
        loaded_files: 4,
        ..Limits::default()
    };
    let text = load_with(dir.path(), limits).render_diagnostics();
    assert!(text.contains("limits.loaded_files"), "{text}");
}

#[test]
fn a_file_read_by_every_instance_is_read_and_charged_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "key.pub", &"k".repeat(3000));
    write(
        dir.path(),
        "main.tf",
        "locals {\n  keys = [for i in range(20) : file(\"key.pub\")]\n  tpl  = [for i in range(20) : templatefile(\"t.tpl\", { i = i })]\n}\n",
    );
    write(dir.path(), "t.tpl", "n=${i}\n");
    let limits = Limits {
        project_bytes: 4096,
        ..Limits::default()
    };
    let loaded = load_with(dir.path(), limits);
    assert!(!loaded.has_errors(), "{}", loaded.render_diagnostics());
    let files = (0..)
        .take_while(|i| loaded.sources.get(*i).is_some())
        .count();
    assert_eq!(files, 2, "main.tf and the template, each once");
}
