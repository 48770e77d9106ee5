//! Any text as a project's `main.tf`: loading and evaluating it, then rendering its diagnostics,
//! never panics.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tfconfig::Input;

/// One directory for every run: the file is rewritten each time.
fn dir() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("a temporary directory"))
}

fuzz_target!(|data: &[u8]| {
    let root = dir().path();
    if std::fs::write(root.join("main.tf"), data).is_err() {
        return;
    }
    let loaded = tfconfig::load(&Input {
        checkout: root.to_path_buf(),
        project_dir: ".".into(),
        workspace: "default".into(),
        vars: Vec::new(),
        limits: Default::default(),
        modules: Default::default(),
    });
    let _ = loaded.render_diagnostics();
});
