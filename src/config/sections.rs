//! Reads each section of the settings tree with its defaults and checks.

use std::path::PathBuf;
use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};

use super::tree::Reader;
use super::{
    CommandSettings, ForgeSettings, GithubAppSettings, LogFormat, LogSettings, QueueSettings,
    Settings, StoreSettings, UnlockRole, WebhookSettings, proxmox,
};

pub(super) const DEFAULT_DATA_DIR: &str = "./data";

pub(super) fn read(r: &mut Reader<'_>) -> Settings {
    let data_dir = PathBuf::from(r.string("data_dir", DEFAULT_DATA_DIR));
    let github = forge(r, "github");
    let gitea = forge(r, "gitea");
    let repo_allowlist = allowlist(r, github.enabled || gitea.enabled);
    if !github.enabled && !gitea.enabled {
        r.warn("no forge is enabled (github.enabled, gitea.enabled): no webhook will be accepted");
    }
    let modules = modules(r, &data_dir);
    Settings {
        server: super::server::server(r),
        store: store(r, &data_dir),
        data_dir,
        github,
        gitea,
        repo_allowlist,
        repo_rules: repo_rules(r),
        policies: policies(r),
        webhook: WebhookSettings {
            allow_draft_prs: r.bool("webhook.allow_draft_prs", false),
            allow_fork_prs: r.bool("webhook.allow_fork_prs", false),
        },
        webhook_body: super::server::webhook_body(r),
        commands: commands(r),
        proxmox: proxmox::read_proxmox(r),
        protect: proxmox::read_protect(r),
        queue: queue(r),
        log: log(r),
        web: super::web::read_web(r),
        api: super::web::read_api(r),
        limits: super::limits::read_limits(r),
        modules,
        terraform_state: super::terraform_state::read_terraform_state(r),
    }
}

/// `modules:`: where remote module sources may come from, and how much may be fetched.
fn modules(
    r: &mut Reader<'_>,
    data_dir: &std::path::Path,
) -> crate::workdir::modules::ModuleSettings {
    let d = crate::workdir::modules::ModuleSettings::defaults(data_dir);
    let hosts = |r: &mut Reader<'_>, path: &str| {
        let list: Vec<String> = r
            .strings(path)
            .into_iter()
            .map(|h| h.trim().to_ascii_lowercase())
            .collect();
        for (i, h) in list.iter().enumerate() {
            if !crate::workdir::modules::valid_host(h) {
                r.problem(
                    &format!("{path}[{i}]"),
                    format!("{h:?} is not a host name with an optional :port (no scheme, no path)"),
                );
            }
        }
        list
    };
    crate::workdir::modules::ModuleSettings {
        allowed_hosts: hosts(r, "modules.allowed_hosts"),
        registries: hosts(r, "modules.registries"),
        allow_plaintext: r.bool("modules.allow_plaintext", d.allow_plaintext),
        fetch_timeout: Duration::from_secs(r.uint(
            "modules.fetch_timeout_secs",
            d.fetch_timeout.as_secs(),
            1,
            3600,
        )),
        max_bytes: r.uint("modules.max_bytes", d.max_bytes, 1024, 4096 * 1024 * 1024),
        max_files: usize::try_from(r.uint("modules.max_files", d.max_files as u64, 1, 1_000_000))
            .unwrap_or(d.max_files),
        max_modules: usize::try_from(r.uint("modules.max_modules", d.max_modules as u64, 1, 1000))
            .unwrap_or(d.max_modules),
        install_timeout: Duration::from_secs(r.uint(
            "modules.install_timeout_secs",
            d.install_timeout.as_secs(),
            1,
            86_400,
        )),
        cache_dir: d.cache_dir,
    }
}

fn store(r: &mut Reader<'_>, data_dir: &std::path::Path) -> StoreSettings {
    let default = format!("sqlite://{}", data_dir.join("atoll.db").display());
    let url = r
        .secret("store.url")
        .unwrap_or_else(|| SecretString::from(default));
    let scheme_ok = {
        let u = url.expose_secret();
        u.starts_with("sqlite:") || u.starts_with("postgres://") || u.starts_with("postgresql://")
    };
    if !scheme_ok {
        // Never echo the URL: it may carry a password.
        r.problem("store.url", "must start with sqlite:// or postgres://");
    }
    StoreSettings { url }
}

fn forge(r: &mut Reader<'_>, name: &str) -> ForgeSettings {
    let enabled = r.bool(&format!("{name}.enabled"), false);
    let secret_key = format!("{name}.webhook_secret");
    let webhook_secret = r.secret(&secret_key);
    if enabled && webhook_secret.is_none() && !r.has_problem_at(&secret_key) {
        r.problem(
            &secret_key,
            format!(
                "{name} is enabled but has no webhook secret; set {secret_key} or {secret_key}_file"
            ),
        );
    }
    let bot_user = r
        .opt_string(&format!("{name}.bot_user"))
        .map(|u| u.trim().to_owned());
    let bad_user =
        |u: &String| u.is_empty() || u.contains(char::is_whitespace) || u.starts_with('@');
    if bot_user.as_ref().is_some_and(bad_user) {
        r.problem(
            &format!("{name}.bot_user"),
            "must be a login name without @ or spaces",
        );
    }
    let api_url = r
        .opt_string(&format!("{name}.api_url"))
        .map(|u| u.trim().trim_end_matches('/').to_owned());
    if api_url
        .as_ref()
        .is_some_and(|u| !(u.starts_with("https://") || u.starts_with("http://")))
    {
        r.problem(
            &format!("{name}.api_url"),
            "must start with https:// (or http:// for a local test forge)",
        );
    }
    let token = r.secret(&format!("{name}.token"));
    let max_comment_chars = if name == "gitea" {
        let max = r.uint(
            "gitea.max_comment_chars",
            crate::forge::DEFAULT_MAX_COMMENT_CHARS as u64,
            1_000,
            16_777_216,
        );
        usize::try_from(max).unwrap_or(crate::forge::DEFAULT_MAX_COMMENT_CHARS)
    } else {
        crate::forge::DEFAULT_MAX_COMMENT_CHARS
    };
    let app = if name == "github" {
        github_app(r)
    } else {
        None
    };
    if app.is_some() && token.is_some() {
        r.problem(
            "github.token",
            "set github.token or the GitHub App keys (github.app_id, github.app_private_key, \
             github.installation_id), not both",
        );
    }
    ForgeSettings {
        enabled,
        webhook_secret,
        bot_user,
        api_url,
        token,
        app,
        max_comment_chars,
    }
}

/// The GitHub App keys: all three or none.
fn github_app(r: &mut Reader<'_>) -> Option<GithubAppSettings> {
    fn id(r: &mut Reader<'_>, path: &str) -> Option<u64> {
        r.raw(path).is_some().then(|| r.uint(path, 0, 1, u64::MAX))
    }
    let app_id = id(r, "github.app_id");
    let installation_id = id(r, "github.installation_id");
    let key = r.secret("github.app_private_key");
    if r.has_problem_at("github.app_private_key") || r.has_problem_at("github.app_private_key_file")
    {
        return None;
    }
    match (app_id, key, installation_id) {
        (None, None, None) => None,
        (Some(app_id), Some(private_key), Some(installation_id)) => {
            if !private_key
                .expose_secret()
                .trim_start()
                .starts_with("-----BEGIN")
            {
                // Never echo the value: it is a secret.
                r.problem(
                    "github.app_private_key",
                    "is not a PEM private key (-----BEGIN RSA PRIVATE KEY-----); download the \
                     App's key from its GitHub settings page",
                );
                return None;
            }
            Some(GithubAppSettings {
                app_id,
                private_key,
                installation_id,
            })
        }
        _ => {
            r.problem(
                "github.app_id",
                "set github.app_id, github.app_private_key (or github.app_private_key_file) and \
                 github.installation_id together, or none of them",
            );
            None
        }
    }
}

fn repo_rules(r: &mut Reader<'_>) -> crate::repocfg::ServerRules {
    let workflows = r.raw("workflows").cloned();
    let repos = r.raw("repos").cloned();
    if repos.is_none() && workflows.is_none() {
        return crate::repocfg::ServerRules::default();
    }
    let mut doc = serde_yaml_ng::Mapping::new();
    doc.insert(
        "repos".into(),
        repos.unwrap_or_else(|| serde_yaml_ng::Value::Sequence(Vec::new())),
    );
    if let Some(workflows) = workflows {
        doc.insert("workflows".into(), workflows);
    }
    let text = serde_yaml_ng::to_string(&doc).unwrap_or_default();
    match crate::repocfg::ServerRules::from_yaml(&text) {
        Ok(rules) => rules,
        Err(e) => {
            r.problem("repos", e.to_string());
            crate::repocfg::ServerRules::default()
        }
    }
}

/// `policies:`, as Atlantis's server-side `repos.yaml` has it.
fn policies(r: &mut Reader<'_>) -> crate::policies::PolicySettings {
    let Some(raw) = r.raw("policies").cloned() else {
        return crate::policies::PolicySettings::default();
    };
    match crate::policies::PolicySettings::from_value(&raw) {
        Ok(settings) => {
            for note in &settings.notes {
                r.warn(note.clone());
            }
            settings
        }
        Err(e) => {
            r.problem(&e.path, e.problem);
            crate::policies::PolicySettings::default()
        }
    }
}

fn allowlist(r: &mut Reader<'_>, any_forge: bool) -> Vec<String> {
    let patterns = r.strings("repo_allowlist");
    for (i, p) in patterns.iter().enumerate() {
        let glob = p.strip_prefix('!').unwrap_or(p);
        if glob.split('/').count() < 3 && glob != "*" {
            r.problem(
                &format!("repo_allowlist[{i}]"),
                format!(
                    "{p:?} must look like host/owner/repo (globs allowed, e.g. github.com/acme/*)"
                ),
            );
        } else if let Err(e) = globset::Glob::new(glob) {
            r.problem(
                &format!("repo_allowlist[{i}]"),
                format!("{p:?} is not a valid glob: {e}"),
            );
        }
    }
    if any_forge && !patterns.iter().any(|p| !p.starts_with('!')) {
        r.problem(
            "repo_allowlist",
            "allows no repository, so every delivery would be refused; add e.g. github.com/acme/*",
        );
    }
    patterns
}

fn commands(r: &mut Reader<'_>) -> CommandSettings {
    let name = r.string("commands.executable_name", "atoll");
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        r.problem(
            "commands.executable_name",
            "use letters, digits, - and _ only",
        );
    }
    let max_reply = r.uint("commands.max_reply_comments", 4, 1, 50);
    CommandSettings {
        executable_name: name,
        unlock_requires: unlock_requires(r),
        max_reply_comments: usize::try_from(max_reply).unwrap_or(4),
        allow_commands: allow_commands(r),
    }
}

/// `commands.allow_commands`: command names or `all` (Atlantis's `--allow-commands`).
fn allow_commands(r: &mut Reader<'_>) -> crate::commands::AllowedCommands {
    const PATH: &str = "commands.allow_commands";
    if r.raw(PATH).is_none() {
        return crate::commands::AllowedCommands::default();
    }
    let words = r.strings(PATH);
    match crate::commands::AllowedCommands::parse(&words) {
        Ok((allowed, absent)) => {
            // The default list names `approve_policies`: no warning for what the default says.
            let absent = absent
                .into_iter()
                .filter(|name| !crate::commands::DEFAULT_ALLOW_COMMANDS.contains(&name.as_str()));
            for name in absent {
                r.warn(format!(
                    "{PATH}: `{name}` is an Atlantis command atoll does not have; it is ignored"
                ));
            }
            allowed
        }
        Err(message) => {
            r.problem(PATH, message);
            crate::commands::AllowedCommands::default()
        }
    }
}

/// `commands.unlock_requires`: a non-empty list of `write`, `author`, `anyone`.
fn unlock_requires(r: &mut Reader<'_>) -> Vec<UnlockRole> {
    const PATH: &str = "commands.unlock_requires";
    if r.raw(PATH).is_none() {
        return vec![UnlockRole::Write, UnlockRole::Author];
    }
    let words = r.strings(PATH);
    let mut roles = Vec::new();
    for (i, word) in words.iter().enumerate() {
        let role = [UnlockRole::Write, UnlockRole::Author, UnlockRole::Anyone]
            .into_iter()
            .find(|role| role.as_str().eq_ignore_ascii_case(word.trim()));
        match role {
            Some(role) if !roles.contains(&role) => roles.push(role),
            Some(_) => {}
            None => r.problem(
                &format!("{PATH}[{i}]"),
                format!(
                    "{:?} is not write, author or anyone",
                    crate::commands::shown_value(word)
                ),
            ),
        }
    }
    if words.is_empty() {
        r.problem(
            PATH,
            "lists nobody, so nobody could unlock by comment; use e.g. [write, author]",
        );
    }
    roles
}

fn queue(r: &mut Reader<'_>) -> QueueSettings {
    let lease = r.uint("queue.lease_secs", 60, 5, 3600);
    let heartbeat = r.uint("queue.heartbeat_secs", 15, 1, 3600);
    if heartbeat * 2 > lease {
        r.problem(
            "queue.heartbeat_secs",
            "must be at most half of queue.lease_secs",
        );
    }
    let max_running = r.uint("queue.max_running", 4, 1, 256);
    let per_repo = r.uint("queue.max_running_per_repo", 1, 1, 256);
    let grace = r.uint("queue.shutdown_grace_secs", 300, 0, 86_400);
    let retention_days = r.uint("queue.retention_days", 90, 0, 36_500);
    let max_attempts = r.uint("queue.max_attempts", 3, 1, 100);
    QueueSettings {
        lease: Duration::from_secs(lease),
        heartbeat: Duration::from_secs(heartbeat),
        max_running: u32::try_from(max_running).unwrap_or(u32::MAX),
        max_running_per_repo: u32::try_from(per_repo).unwrap_or(u32::MAX),
        shutdown_grace: Duration::from_secs(grace),
        retention: (retention_days > 0).then(|| Duration::from_secs(retention_days * 86_400)),
        max_attempts: u32::try_from(max_attempts).unwrap_or(3),
    }
}

fn log(r: &mut Reader<'_>) -> LogSettings {
    let level = r.string("log.level", "info");
    if tracing_subscriber::EnvFilter::try_new(&level).is_err() {
        r.problem(
            "log.level",
            format!("{level:?} is not a tracing filter such as info or atoll=debug"),
        );
    }
    let format = match r.string("log.format", "text").as_str() {
        "text" => LogFormat::Text,
        "json" => LogFormat::Json,
        other => {
            r.problem("log.format", format!("{other:?} is not text or json"));
            LogFormat::Text
        }
    };
    LogSettings { level, format }
}
