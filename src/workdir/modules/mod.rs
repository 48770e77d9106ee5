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
    /// `modules.install_timeout_secs`: longest the installation of one project's modules may take.
    pub install_timeout: Duration,
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
            install_timeout: Duration::from_secs(300),
            cache_dir: data_dir.join("module-cache"),
        }
    }
}

/// The pull request's own forge: its host, the repository's owner, and the credentials git
/// uses there: only over HTTPS, and only for repositories of the same owner.
#[derive(Debug, Clone, Copy)]
pub struct ForgeHost<'a> {
    pub host: &'a str,
    pub owner: &'a str,
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
        let deadline = tokio::time::Instant::now() + self.settings.install_timeout;
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
                    let one = self.install_one(&request, input, forge);
                    tokio::time::timeout_at(deadline, one).await.unwrap_or_else(|_| {
                        Err(Refusal::new("Module installation took too long", format!("Installing the remote modules of this project took longer than {} s (modules.install_timeout_secs); {:?} was not installed.", self.settings.install_timeout.as_secs(), request.source)))
                    })
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
                let shown = registry::shown(&resolved.location);
                let Source::Git(git) = source::parse(&resolved.location).map_err(|_| Refusal::new("Unsupported module source", format!("Version {} of module {} on {} is downloaded from {shown:?}, which atoll cannot fetch: atoll installs registry modules whose download location is a Git source (git::https://..., git::ssh://...).", resolved.version, module.path(), module.host)))? else {
                    return Err(Refusal::new("Unsupported module source", format!("The registry {} answered another registry address for module {}.", module.host, module.path())));
                };
                (git, module.subdir)
            }
        };
        let (auth, scope) = self.check_host(&git.url, forge)?;
        let package = fetch::Fetcher {
            installer: self,
            auth,
            scope,
        }
        .package(&git)
        .await?;
        let installed = fetch::place(&package, &input.checkout, &self.settings).await?;
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

    /// Whether the server fetches from `url`'s host; the forge's credentials and whom they
    /// speak for when they may be sent (HTTPS to the forge's host, a repository of the pull
    /// request's own owner).
    fn check_host<'f>(
        &self,
        url: &source::GitUrl,
        forge: Option<ForgeHost<'f>>,
    ) -> Result<(Option<&'f SecretString>, Option<String>), Refusal> {
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
            let same_owner = url.owner().is_some_and(|o| o.eq_ignore_ascii_case(f.owner));
            if url.scheme == source::Scheme::Https && same_owner && f.auth_header.is_some() {
                return Ok((
                    f.auth_header,
                    Some(format!(
                        "{}/{}",
                        f.host.to_ascii_lowercase(),
                        f.owner.to_ascii_lowercase()
                    )),
                ));
            }
            return Ok((None, None));
        }
        if self
            .settings
            .allowed_hosts
            .iter()
            .any(|h| h.eq_ignore_ascii_case(&url.host))
        {
            return Ok((None, None));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn git_url(source: &str) -> source::GitUrl {
        match source::parse(source) {
            Ok(Source::Git(g)) => g.url,
            other => panic!("{source}: {other:?}"),
        }
    }

    #[test]
    fn the_forges_credentials_go_over_https_to_its_own_owners_repositories_only() {
        let installer = Installer::new(ModuleSettings {
            allowed_hosts: vec!["git.example.com".to_owned()],
            ..ModuleSettings::defaults(std::path::Path::new("/nonexistent"))
        })
        .expect("installer");
        let secret = SecretString::from("Bearer t0ken");
        let forge = ForgeHost {
            host: "github.com",
            owner: "acme",
            auth_header: Some(&secret),
        };
        let sent = |source: &str| {
            let (auth, scope) = installer
                .check_host(&git_url(source), Some(forge))
                .expect(source);
            (auth.is_some(), scope)
        };
        assert_eq!(
            sent("github.com/acme/modules?ref=v1"),
            (true, Some("github.com/acme".to_owned()))
        );
        assert_eq!(
            sent("github.com/ACME/modules"),
            (true, Some("github.com/acme".to_owned()))
        );
        assert_eq!(sent("github.com/other-org/private"), (false, None));
        assert_eq!(sent("git@github.com:acme/modules.git"), (false, None));
        assert_eq!(
            sent("git::https://git.example.com/acme/m.git"),
            (false, None)
        );
        assert!(
            installer
                .check_host(
                    &git_url("git::https://evil.example/acme/m.git"),
                    Some(forge)
                )
                .is_err()
        );
    }
}
