//! Remote module sources, installed as `terraform init` installs them, before the evaluator
//! loads a project: Git repositories (`git::https://...//subdir?ref=v1.2.0`, `git::ssh://...`,
//! the `github.com/...` and `git@host:path` shorthands) and modules of a registry (the
//! registry protocol: service discovery, versions with constraints, the download location).
//!
//! What a pull request may make the server fetch is the server's choice, never the PR's: only
//! the PR's own forge host (with the forge's own credentials, for that host alone), the hosts in
//! `modules.allowed_hosts` and the registries in `modules.registries` are reached; plain-text
//! `http://` and `git://` only with `modules.allow_plaintext`. Git runs with argv only (never a
//! shell), no redirects, no hooks, no submodules, one commit deep, under a timeout; a fetched
//! tree is bounded in files and bytes, cached by its resolved commit under the data directory,
//! and copied into the checkout (`.atoll/modules/`), where the evaluator reads it under the
//! same sandbox as the PR's own files. A source that cannot be installed becomes one
//! diagnostic on the call's `source` line (`tfconfig::Installed::Refused`).

mod fetch;
mod registry;
pub(crate) mod source;
mod version;

use std::path::PathBuf;
use std::time::Duration;

use secrecy::SecretString;
use tfconfig::{Input, Installed, ModuleRequest};

use registry::Registry;
use source::Source;
pub use source::valid_host;

/// Most rounds of installation (a round installs the remote modules the last one revealed).
const MAX_ROUNDS: usize = 16;

/// Where a project's remote modules are installed, relative to its checkout.
pub const INSTALL_DIR: &str = ".atoll/modules";

/// The `modules:` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleSettings {
    /// `modules.allowed_hosts`: Git hosts (`host` or `host:port`) module sources may name,
    /// besides the pull request's own forge.
    pub allowed_hosts: Vec<String>,
    /// `modules.registries`: module registries that may be asked (`registry.terraform.io`).
    pub registries: Vec<String>,
    /// `modules.allow_plaintext`: `http://` and `git://` sources and registries over `http://`.
    pub allow_plaintext: bool,
    /// `modules.fetch_timeout_secs`: longest one git or registry exchange may take.
    pub fetch_timeout: Duration,
    /// `modules.max_bytes`: largest module package (its files' bytes).
    pub max_bytes: u64,
    /// `modules.max_files`: most files in one module package.
    pub max_files: usize,
    /// `modules.max_modules`: most remote module packages installed for one project.
    pub max_modules: usize,
    /// Fetched packages by resolved commit (`<data_dir>/module-cache`).
    pub cache_dir: PathBuf,
}

impl ModuleSettings {
    /// The defaults: no host but the PR's own forge, no registry, under `data_dir`.
    pub fn defaults(data_dir: &std::path::Path) -> Self {
        Self {
            allowed_hosts: Vec::new(),
            registries: Vec::new(),
            allow_plaintext: false,
            fetch_timeout: Duration::from_secs(60),
            max_bytes: 64 * 1024 * 1024,
            max_files: 10_000,
            max_modules: 64,
            cache_dir: data_dir.join("module-cache"),
        }
    }
}

/// The pull request's own forge: its host, and the credentials git uses there (only there).
#[derive(Debug, Clone, Copy)]
pub struct ForgeHost<'a> {
    pub host: &'a str,
    pub auth_header: Option<&'a SecretString>,
}

/// Why a module was not installed: a diagnostic's summary and detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) summary: String,
    pub(crate) detail: String,
}

impl Refusal {
    pub(crate) fn new(summary: &str, detail: String) -> Self {
        Self {
            summary: summary.to_owned(),
            detail,
        }
    }
}

/// Installs remote modules for loads.
#[derive(Debug, Clone)]
pub struct Installer {
    settings: ModuleSettings,
    registry: Registry,
    git: PathBuf,
}

impl Installer {
    pub fn new(settings: ModuleSettings) -> Result<Self, String> {
        let registry = Registry::new(settings.fetch_timeout, settings.allow_plaintext)?;
        Ok(Self {
            settings,
            registry,
            git: PathBuf::from("git"),
        })
    }

    /// Uses another git executable.
    pub fn with_git_program(mut self, program: &std::path::Path) -> Self {
        program.clone_into(&mut self.git);
        self
    }

    /// Installs every remote module `input`'s configuration calls, at every depth, and
    /// records each outcome in `input.modules`. Never fails: a module that cannot be installed
    /// is recorded as refused, and the load reports it where it is called.
    pub async fn install(&self, input: &mut Input, forge: Option<ForgeHost<'_>>) {
        let mut packages = 0;
        for round in 0..=MAX_ROUNDS {
            let snapshot = input.clone();
            let requests =
                tokio::task::spawn_blocking(move || tfconfig::module_requests(&snapshot))
                    .await
                    .unwrap_or_default();
            if requests.is_empty() {
                return;
            }
            for request in requests {
                let outcome = if round == MAX_ROUNDS {
                    Err(Refusal::new(
                        "Module nesting too deep",
                        format!(
                            "Remote modules may call remote modules at most {MAX_ROUNDS} levels deep in atoll."
                        ),
                    ))
                } else if packages >= self.settings.max_modules {
                    Err(Refusal::new(
                        "Too many remote modules",
                        format!(
                            "A project may install at most {} remote module packages (modules.max_modules); {:?} was not installed.",
                            self.settings.max_modules, request.source
                        ),
                    ))
                } else {
                    packages += 1;
                    self.install_one(&request, input, forge).await
                };
                let installed = match outcome {
                    Ok(dir) => Installed::Dir(dir),
                    Err(Refusal { summary, detail }) => Installed::Refused { summary, detail },
                };
                if let Installed::Refused { detail, .. } = &installed {
                    tracing::info!(module.source = %request.source, reason = %detail, "remote module not installed");
                }
                input.modules.insert(request, installed);
            }
        }
    }

    async fn install_one(
        &self,
        request: &ModuleRequest,
        input: &Input,
        forge: Option<ForgeHost<'_>>,
    ) -> Result<PathBuf, Refusal> {
        let (git, subdir_prefix) = match source::parse(&request.source)? {
            Source::Git(git) => {
                if request.version.is_some() {
                    return Err(Refusal::new(
                        "Invalid version argument",
                        format!(
                            "Cannot apply a version constraint to the module source {:?} because it is not a module registry address: pin a Git source with ?ref= instead.",
                            request.source
                        ),
                    ));
                }
                (git, String::new())
            }
            Source::Registry(module) => {
                if !self
                    .settings
                    .registries
                    .iter()
                    .any(|r| r.eq_ignore_ascii_case(&module.host))
                {
                    return Err(Refusal::new(
                        "Module registry not allowed",
                        format!(
                            "The module {} comes from the registry {}, which this server does not ask: its modules.registries setting lists the registries module sources may use.",
                            module.path(),
                            module.host
                        ),
                    ));
                }
                let resolved = self
                    .registry
                    .resolve(&module, request.version.as_deref())
                    .await?;
                let Source::Git(git) = source::parse(&resolved.location).map_err(|r| Refusal::new("Unsupported module source", format!("Version {} of module {} on {} is downloaded from {:?}, which atoll cannot fetch: {}", resolved.version, module.path(), module.host, resolved.location, r.detail)))? else {
                    return Err(Refusal::new("Unsupported module source", format!("The registry {} answered another registry address for module {}.", module.host, module.path())));
                };
                (git, module.subdir)
            }
        };
        let auth = self.check_host(&git.url, forge)?;
        let package = fetch::Fetcher {
            installer: self,
            auth,
        }
        .package(&git)
        .await?;
        let installed = fetch::place(&package, &input.checkout, &self.settings)?;
        let subdir = [git.subdir.as_str(), subdir_prefix.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("/");
        let dir = if subdir.is_empty() {
            installed
        } else {
            installed.join(&subdir)
        };
        if !dir.is_dir() {
            return Err(Refusal::new(
                "Module not found",
                format!(
                    "The module package {:?} has no directory {subdir:?}.",
                    request.source
                ),
            ));
        }
        Ok(dir)
    }

    /// Whether the server fetches from `url`'s host, and the credentials to use there.
    fn check_host<'f>(
        &self,
        url: &source::GitUrl,
        forge: Option<ForgeHost<'f>>,
    ) -> Result<Option<&'f SecretString>, Refusal> {
        if url.scheme.plaintext() && !self.settings.allow_plaintext {
            return Err(Refusal::new(
                "Module source not allowed",
                format!(
                    "The module source {:?} uses plain-text {}, which this server does not fetch (modules.allow_plaintext is off): use https:// or ssh://.",
                    url.text,
                    if url.scheme == source::Scheme::Git {
                        "git://"
                    } else {
                        "http://"
                    }
                ),
            ));
        }
        if let Some(f) = forge
            && f.host.eq_ignore_ascii_case(&url.host)
        {
            let sends_header = matches!(url.scheme, source::Scheme::Https | source::Scheme::Http);
            return Ok(if sends_header { f.auth_header } else { None });
        }
        if self
            .settings
            .allowed_hosts
            .iter()
            .any(|h| h.eq_ignore_ascii_case(&url.host))
        {
            return Ok(None);
        }
        Err(Refusal::new(
            "Module source not allowed",
            format!(
                "The module source {:?} is on the host {}, which this server does not fetch modules from. Its modules.allowed_hosts setting lists the hosts module sources may come from, besides the pull request's own forge.",
                url.text, url.host
            ),
        ))
    }
}
