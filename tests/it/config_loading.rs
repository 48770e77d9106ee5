//! Settings: defaults, YAML, `ATOLL_*` environment, `*_FILE` secrets, and error reporting.

use std::collections::BTreeSet;

use atoll::config::{self, ConfigError, GuestSelector, Loaded, ProxmoxAuth, UnlockRole};
use secrecy::ExposeSecret;

fn load(yaml: &str, env: &[(&str, &str)]) -> Result<Loaded, ConfigError> {
    config::from_sources(yaml, env.iter().copied())
}

fn ok(yaml: &str, env: &[(&str, &str)]) -> Loaded {
    load(yaml, env).unwrap_or_else(|e| panic!("expected a valid config, got:\n{e}"))
}

fn problems(yaml: &str, env: &[(&str, &str)]) -> Vec<String> {
    match load(yaml, env) {
        Ok(_) => panic!("expected problems, config was accepted"),
        Err(e) => e.problems.iter().map(ToString::to_string).collect(),
    }
}

const GITHUB_ON: &str = "github: {enabled: true, webhook_secret: s3cret-value}\nrepo_allowlist: ['github.com/acme/*']\n";

#[test]
fn empty_file_gives_documented_defaults() {
    let s = ok("", &[]).settings;
    assert_eq!(s.server.listen.to_string(), "127.0.0.1:4141");
    assert_eq!(s.data_dir.to_str(), Some("./data"));
    assert_eq!(s.store.url.expose_secret(), "sqlite://./data/atoll.db");
    assert!(!s.github.enabled && !s.gitea.enabled);
    assert!(s.repo_allowlist.is_empty());
    assert_eq!(s.commands.executable_name, "atoll");
    assert!(s.proxmox.is_none());
    assert!(s.protect.discover && !s.protect.allow_live_changes);
}

#[test]
fn env_overrides_yaml_with_double_underscore_nesting() {
    let env = [
        ("ATOLL_SERVER__LISTEN", "0.0.0.0:9000"),
        ("ATOLL_STORE__URL", "sqlite:///var/lib/atoll/x.db"),
        ("ATOLL_GITHUB__WEBHOOK_SECRET", "from-env"),
        ("ATOLL_GITEA__ENABLED", "true"),
        ("ATOLL_GITEA__WEBHOOK_SECRET", "gitea-env"),
        (
            "ATOLL_REPO_ALLOWLIST",
            "github.com/acme/*, !github.com/acme/sandbox",
        ),
        ("ATOLL_DATA_DIR", "/srv/atoll"),
        ("ATOLL_QUEUE__MAX_RUNNING", "8"),
    ];
    let s = ok(GITHUB_ON, &env).settings;
    assert_eq!(s.server.listen.to_string(), "0.0.0.0:9000");
    assert_eq!(s.store.url.expose_secret(), "sqlite:///var/lib/atoll/x.db");
    assert_eq!(
        s.github.webhook_secret.as_ref().map(|x| x.expose_secret()),
        Some("from-env")
    );
    assert!(s.gitea.enabled);
    assert_eq!(
        s.gitea.webhook_secret.as_ref().map(|x| x.expose_secret()),
        Some("gitea-env")
    );
    assert_eq!(
        s.repo_allowlist,
        ["github.com/acme/*", "!github.com/acme/sandbox"]
    );
    assert_eq!(s.data_dir.to_str(), Some("/srv/atoll"));
    assert_eq!(s.queue.max_running, 8);
}

#[test]
fn secret_is_read_from_its_file_variant() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("gh-secret");
    std::fs::write(&path, "file-secret\n").expect("write secret");
    let yaml = format!(
        "github: {{enabled: true, webhook_secret_file: {:?}}}\nrepo_allowlist: ['*']\n",
        path.display().to_string()
    );
    let s = ok(&yaml, &[]).settings;
    assert_eq!(
        s.github.webhook_secret.as_ref().map(|x| x.expose_secret()),
        Some("file-secret")
    );

    let env_path = path.display().to_string();
    let env = [("ATOLL_GITHUB__WEBHOOK_SECRET_FILE", env_path.as_str())];
    let s = ok("github: {enabled: true}\nrepo_allowlist: ['*']\n", &env).settings;
    assert_eq!(
        s.github.webhook_secret.as_ref().map(|x| x.expose_secret()),
        Some("file-secret")
    );
}

#[test]
fn enabled_forge_without_secret_is_refused() {
    let p = problems("github: {enabled: true}\nrepo_allowlist: ['*']\n", &[]);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with("github.webhook_secret: github is enabled but has no webhook secret"),
        "{p:?}"
    );
}

#[test]
fn empty_secret_and_unreadable_secret_file_are_refused() {
    let p = problems(
        "gitea: {enabled: true, webhook_secret: '  '}\nrepo_allowlist: ['*']\n",
        &[],
    );
    assert!(
        p.iter()
            .any(|m| m.starts_with("gitea.webhook_secret: is empty")),
        "{p:?}"
    );
    let p = problems(
        "gitea: {enabled: true, webhook_secret_file: /nonexistent/secret}\nrepo_allowlist: ['*']\n",
        &[],
    );
    assert!(
        p.iter()
            .any(|m| m.starts_with("gitea.webhook_secret_file: cannot read")),
        "{p:?}"
    );
}

#[test]
fn every_problem_is_reported_with_its_key_path() {
    let yaml = "
server: {listen: 'not an address', request_timeout_secs: 0}
github: {enabled: maybe, webhook_secret: x, webhook_secret_file: /tmp/y}
repo_allowlist: ['acme', 'github.com/[bad/x']
queue: {lease_secs: 10, heartbeat_secs: 9}
log: {format: xml}
protect:
  guests: [{vm_id: 5}, {name: ''}, {vm_id: 101, colour: red}]
  local_macs: ['zz:zz']
sevrer: {listen: x}
";
    let p = problems(yaml, &[("ATOLL_COMMANDS__EXECUTABLE_NAME", "rm -rf")]);
    let expect = [
        "server.listen: ",
        "server.request_timeout_secs: ",
        "github.enabled: expected true or false",
        "github.webhook_secret: set either",
        "repo_allowlist[0]: ",
        "repo_allowlist[1]: ",
        "queue.heartbeat_secs: must be at most half",
        "log.format: ",
        "protect.guests[0].vm_id: ",
        "protect.guests[1]: ",
        "protect.guests[2]: unknown key",
        "protect.local_macs[0]: ",
        "commands.executable_name (from ATOLL_COMMANDS__EXECUTABLE_NAME): ",
        "sevrer.listen: unknown key; did you mean server.listen?",
    ];
    for prefix in expect {
        assert!(
            p.iter().any(|m| m.starts_with(prefix)),
            "no problem starting {prefix:?} in {p:#?}"
        );
    }
}

#[test]
fn unknown_env_variables_warn_but_do_not_fail() {
    let loaded = ok(
        GITHUB_ON,
        &[
            ("ATOLL_TEST_DATABASE_URL", "postgres://x"),
            ("HOME", "/root"),
        ],
    );
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.starts_with("ATOLL_TEST_DATABASE_URL: ignored")),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn enabled_forge_with_empty_allowlist_is_refused() {
    let p = problems("github: {enabled: true, webhook_secret: x}\n", &[]);
    assert!(
        p.iter()
            .any(|m| m.starts_with("repo_allowlist: allows no repository")),
        "{p:?}"
    );
}

#[test]
fn proxmox_falls_back_to_bpg_variables_and_atoll_variables_win() {
    let env = [
        ("PROXMOX_VE_ENDPOINT", "https://pve.example:8006/api2/json"),
        (
            "PROXMOX_VE_API_TOKEN",
            "root@pam!atoll=0b6a9d1e-aaaa-bbbb-cccc-0123456789ab",
        ),
        ("PROXMOX_VE_INSECURE", "true"),
        ("ATOLL_PROXMOX__INSECURE", "false"),
    ];
    let s = ok("", &env).settings;
    let pve = s.proxmox.expect("proxmox configured from PROXMOX_VE_*");
    assert_eq!(pve.endpoint, "https://pve.example:8006/");
    assert!(
        !pve.insecure,
        "ATOLL_PROXMOX__INSECURE must win over PROXMOX_VE_INSECURE"
    );
    assert!(matches!(pve.auth, ProxmoxAuth::ApiToken(_)));
}

#[test]
fn proxmox_token_and_password_together_are_refused() {
    let yaml = "proxmox: {endpoint: 'https://pve:8006', api_token: 'a@pam!t=x', username: root@pam, password: pw}\n";
    let p = problems(yaml, &[]);
    assert!(
        p.iter()
            .any(|m| m.starts_with("proxmox.api_token: set either")),
        "{p:?}"
    );
    let p = problems(
        "proxmox: {endpoint: 'https://pve:8006', api_token: 'nonsense'}\n",
        &[],
    );
    assert!(
        p.iter()
            .any(|m| m.starts_with("proxmox.api_token: must look like")),
        "{p:?}"
    );
    assert!(
        !p.iter().any(|m| m.contains("nonsense")),
        "token value leaked: {p:?}"
    );
}

#[test]
fn protect_guests_accept_vm_id_or_name_with_node() {
    let yaml = "protect: {guests: [{vm_id: 2100}, {name: atoll, node: mk33}, {name: db}], local_macs: ['BC:24:11:00:AA:01']}\n";
    let s = ok(yaml, &[]).settings;
    assert_eq!(
        s.protect.guests,
        [
            GuestSelector::VmId(2100),
            GuestSelector::Name {
                name: "atoll".into(),
                node: Some("mk33".into())
            },
            GuestSelector::Name {
                name: "db".into(),
                node: None
            },
        ]
    );
    assert_eq!(s.protect.local_macs, ["bc:24:11:00:aa:01"]);
}

#[test]
fn secrets_never_appear_in_debug_output_or_errors() {
    let env = [
        ("ATOLL_STORE__URL", "postgres://atoll:db-pass-123@db/atoll"),
        ("PROXMOX_VE_ENDPOINT", "https://pve:8006"),
        ("PROXMOX_VE_USERNAME", "root@pam"),
        ("PROXMOX_VE_PASSWORD", "pve-pass-456"),
    ];
    let s = ok(GITHUB_ON, &env).settings;
    let debug = format!("{s:?}");
    for secret in ["s3cret-value", "db-pass-123", "pve-pass-456"] {
        assert!(!debug.contains(secret), "{secret} leaked in {debug}");
    }
    let p = problems("store: {url: 'mysql://u:hunter2@h/db'}\n", &[]);
    assert!(!p.iter().any(|m| m.contains("hunter2")), "{p:?}");
}

#[test]
fn invalid_yaml_is_reported_with_its_location() {
    let p = problems("server:\n  listen: [unclosed\n", &[]);
    assert!(
        p[0].contains("not valid YAML") && p[0].contains("line"),
        "{p:?}"
    );
}

/// The leaf key paths of a YAML document (lists count as leaves).
fn leaf_paths(value: &serde_yaml_ng::Value, prefix: &str, out: &mut BTreeSet<String>) {
    match value {
        serde_yaml_ng::Value::Mapping(m) => {
            for (k, v) in m {
                let k = k.as_str().expect("string keys");
                let path = if prefix.is_empty() {
                    k.to_owned()
                } else {
                    format!("{prefix}.{k}")
                };
                leaf_paths(v, &path, out);
            }
        }
        _ => {
            out.insert(prefix.to_owned());
        }
    }
}

const EXAMPLE: &str = include_str!("../../config.example.yaml");

#[test]
fn example_config_documents_every_key_and_nothing_else() {
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(EXAMPLE).expect("example is YAML");
    let mut documented = BTreeSet::new();
    leaf_paths(&doc, "", &mut documented);
    let known: BTreeSet<String> = config::known_keys().into_iter().collect();
    let missing: Vec<_> = known.difference(&documented).collect();
    let extra: Vec<_> = documented.difference(&known).collect();
    assert!(
        missing.is_empty(),
        "keys not documented in config.example.yaml: {missing:?}"
    );
    assert!(
        extra.is_empty(),
        "keys in config.example.yaml that atoll does not read: {extra:?}"
    );
}

#[test]
fn example_config_holds_the_defaults() {
    let example = ok(EXAMPLE, &[]).settings;
    let defaults = ok("", &[]).settings;
    assert_eq!(format!("{example:?}"), format!("{defaults:?}"));
}

#[test]
fn example_config_secret_fields_hold_only_placeholders() {
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(EXAMPLE).expect("example is YAML");
    let mut paths = BTreeSet::new();
    leaf_paths(&doc, "", &mut paths);
    let secret_keys = ["webhook_secret", "api_token", "password", "url", "token"];
    let mut checked = 0;
    for path in &paths {
        let last = path.rsplit('.').next().unwrap_or_default();
        let base = last.strip_suffix("_file").unwrap_or(last);
        if !secret_keys.contains(&base) {
            continue;
        }
        let mut node = &doc;
        for seg in path.split('.') {
            node = &node[seg];
        }
        assert!(
            node.is_null(),
            "secret field {path} must be null in the example, found {node:?}"
        );
        checked += 1;
    }
    assert!(
        checked >= 10,
        "expected to check all secret fields, checked {checked}"
    );
}

#[test]
fn command_and_queue_bounds_default_and_are_checked_by_key_path() {
    let s = ok("", &[]).settings;
    assert_eq!(
        s.commands.unlock_requires,
        vec![UnlockRole::Write, UnlockRole::Author]
    );
    assert_eq!(s.commands.max_reply_comments, 4);
    assert_eq!(s.queue.max_attempts, 3);
    let s = ok(
        "commands: {unlock_requires: [author, anyone], max_reply_comments: 1}\nqueue: {max_attempts: 1}\n",
        &[],
    )
    .settings;
    assert_eq!(
        s.commands.unlock_requires,
        vec![UnlockRole::Author, UnlockRole::Anyone]
    );
    let p = problems(
        "commands: {unlock_requires: [write, admins], max_reply_comments: 0}\nqueue: {max_attempts: 0}\n",
        &[],
    );
    assert!(
        p.iter()
            .any(|p| p.starts_with("commands.unlock_requires[1]:") && p.contains("\"admins\"")),
        "{p:?}"
    );
    assert!(
        p.iter()
            .any(|p| p.starts_with("commands.max_reply_comments:")),
        "{p:?}"
    );
    assert!(
        p.iter().any(|p| p.starts_with("queue.max_attempts:")),
        "{p:?}"
    );
    let p = problems("commands: {unlock_requires: []}\n", &[]);
    assert!(
        p.iter()
            .any(|p| p.starts_with("commands.unlock_requires:") && p.contains("nobody")),
        "{p:?}"
    );
}

#[test]
fn allow_commands_defaults_to_atlantis_list_takes_all_and_refuses_unknown_commands() {
    use atoll::commands::Verb;
    let s = ok("", &[]).settings;
    assert!(s.commands.allow_commands.allows(Verb::Plan));
    assert!(!s.commands.allow_commands.allows(Verb::Import));
    assert!(!s.commands.allow_commands.allows(Verb::StateRm));
    assert!(s.commands.allow_commands.allows(Verb::Cancel));
    let loaded = ok("commands: {allow_commands: [plan, import]}\n", &[]);
    let allowed = &loaded.settings.commands.allow_commands;
    assert_eq!(allowed.verbs(), [Verb::Plan, Verb::Help, Verb::Import]);
    let env = ok("", &[("ATOLL_COMMANDS__ALLOW_COMMANDS", "all")]).settings;
    assert!(env.commands.allow_commands.allows(Verb::StateRm));
    let p = problems("commands: {allow_commands: [plan, destroy]}\n", &[]);
    assert!(
        p.iter()
            .any(|p| p.starts_with("commands.allow_commands:") && p.contains("\"destroy\"")),
        "{p:?}"
    );
}

#[test]
fn policies_are_read_and_bad_policy_sets_are_refused_with_their_key() {
    let loaded = ok(
        "policies:\n  conftest_version: 0.46.0\n  policy_sets:\n    - {name: guests, path: /etc/atoll/p}\n",
        &[],
    );
    assert_eq!(loaded.settings.policies.sets.len(), 1);
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains("conftest_version is ignored")),
        "{:?}",
        loaded.warnings
    );
    let p = problems(
        "policies:\n  policy_sets:\n    - {name: guests, path: /p, source: github}\n",
        &[],
    );
    assert!(
        p.iter()
            .any(|p| p.contains("policies.policy_sets[0].source") && p.contains("local")),
        "{p:?}"
    );
    assert!(ok("", &[]).settings.policies.sets.is_empty());
}
