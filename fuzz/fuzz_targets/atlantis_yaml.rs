//! Any text as a repository's `atlantis.yaml`: parsed and resolved against a small tree, never
//! a panic.
#![no_main]

use atoll::repocfg::{Inputs, ServerRules, resolve};
use libfuzzer_sys::fuzz_target;

const RULES: &str = "repos:\n  - id: /.*/\n    manage: {exclude: [infra/atoll]}\n";

fuzz_target!(|data: &[u8]| {
    let Ok(yaml) = std::str::from_utf8(data) else {
        return;
    };
    let policy = ServerRules::from_yaml(RULES)
        .map(|r| r.policy_for("h/o/r"))
        .unwrap_or_default();
    let tree: Vec<String> = ["envs/dev/main.tf", "modules/lxc/main.tf", "infra/atoll/main.tf"]
        .map(str::to_owned)
        .to_vec();
    let changed = vec!["envs/dev/main.tf".to_owned()];
    let _ = resolve(
        Inputs {
            atlantis_yaml: Some(yaml),
            tree: &tree,
            changed: &changed,
            module_uses: &[],
        },
        &policy,
    );
});
