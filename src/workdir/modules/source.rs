//! Module source addresses, parsed as `terraform init` reads them (Terraform's
//! `addrs.ParseModuleSource`, then go-getter's detectors): a registry address
//! (`[host/]namespace/name/system[//subdir]`), a Git repository (`git::https://...`,
//! `git::ssh://...`, `git@host:path`, and the `github.com/owner/repo` shorthand) with an
//! optional `//subdir` and `?ref=`. Everything else go-getter understands (archives over HTTP,
//! S3, GCS, Mercurial, local files by absolute path, a key in `?sshkey=`) is refused with the
//! reason. Pure: no network, no file system.

use super::Refusal;

/// The public Terraform registry, implied by a three-part registry address.
pub(crate) const DEFAULT_REGISTRY: &str = "registry.terraform.io";

/// A remote module source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    Git(GitSource),
    Registry(RegistrySource),
}

/// A Git repository, a revision in it and a directory inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GitSource {
    pub(crate) url: GitUrl,
    /// `?ref=`: a branch, a tag or a full commit id; the remote's HEAD when absent.
    pub(crate) git_ref: Option<String>,
    /// `//subdir`, without leading or trailing slashes; empty for the repository's root.
    pub(crate) subdir: String,
}

/// How git reaches a repository.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scheme {
    Https,
    Ssh,
    /// `http://`: plain text, only where the server allows it.
    Http,
    /// `git://`: plain text, only where the server allows it.
    Git,
}

impl Scheme {
    pub(crate) fn plaintext(self) -> bool {
        matches!(self, Self::Http | Self::Git)
    }
}

/// A repository URL as git gets it, with the host it reaches (`host` or `host:port`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GitUrl {
    pub(crate) scheme: Scheme,
    pub(crate) host: String,
    pub(crate) text: String,
}

/// A module in a registry (the module registry protocol).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RegistrySource {
    pub(crate) host: String,
    pub(crate) namespace: String,
    pub(crate) name: String,
    pub(crate) system: String,
    pub(crate) subdir: String,
}

impl GitUrl {
    /// The first segment of the repository's path (`org` of `https://host/org/repo.git`).
    pub(crate) fn owner(&self) -> Option<&str> {
        let after = self
            .text
            .split_once("://")
            .map_or(self.text.as_str(), |(_, a)| a);
        let path = after.split_once('/').map(|(_, p)| p)?;
        path.split('/').next().filter(|o| !o.is_empty())
    }
}

impl RegistrySource {
    /// `namespace/name/system`, the module's path on its registry.
    pub(crate) fn path(&self) -> String {
        format!("{}/{}/{}", self.namespace, self.name, self.system)
    }
}

/// Parses a source that is not a local path (`./`, `../`: those never reach here).
pub(crate) fn parse(source: &str) -> Result<Source, Refusal> {
    let unsupported = |why: &str| {
        Refusal::new(
            "Unsupported module source",
            format!("The module source {source:?} {why}"),
        )
    };
    if source.trim() != source || source.is_empty() || source.chars().any(char::is_control) {
        return Err(unsupported(
            "is empty or holds spaces or control characters.",
        ));
    }
    if let Some((getter, rest)) = forced_getter(source) {
        return match getter {
            "git" => parse_git(source, rest).map(Source::Git),
            other => Err(unsupported(&format!(
                "asks for go-getter's {other:?} getter; atoll installs modules from Git repositories (git::https://..., git::ssh://...) and module registries only."
            ))),
        };
    }
    if source.starts_with('/') || source.starts_with('~') || source.starts_with(".\\") {
        return Err(unsupported(
            "is an absolute path; a module inside this repository is referred to by a relative path starting with \"./\" or \"../\".",
        ));
    }
    if let Some(registry) = parse_registry(source) {
        return Ok(Source::Registry(registry));
    }
    if source.starts_with("github.com/") {
        return parse_github(source).map(Source::Git);
    }
    if source.starts_with("git@") {
        return parse_git(source, source).map(Source::Git);
    }
    if source.starts_with("bitbucket.org/") {
        return Err(unsupported(
            "uses the Bitbucket shorthand, which asks Bitbucket's API what the repository is; write it as git::https://bitbucket.org/OWNER/REPO.git instead.",
        ));
    }
    if source.starts_with("https://") || source.starts_with("http://") {
        return Err(unsupported(
            "is an HTTP URL, which go-getter fetches as an archive or follows through an X-Terraform-Get header; atoll does not download archives. For a Git repository write git::https://HOST/PATH.git.",
        ));
    }
    Err(unsupported(
        "is neither a module registry address (NAMESPACE/NAME/SYSTEM, or HOST/NAMESPACE/NAME/SYSTEM) nor a Git source (git::https://HOST/PATH.git, git::ssh://..., github.com/OWNER/REPO); a module inside this repository needs a path starting with \"./\" or \"../\".",
    ))
}

/// `git::rest` -> `("git", rest)`: go-getter's forced getter prefix.
fn forced_getter(source: &str) -> Option<(&str, &str)> {
    let (getter, rest) = source.split_once("::")?;
    (!getter.is_empty() && getter.chars().all(|c| c.is_ascii_alphanumeric()))
        .then_some((getter, rest))
}

/// `github.com/owner/repo[.git][//subdir][?ref=..]`, go-getter's GitHub detector: HTTPS, `.git`
/// added when missing.
fn parse_github(source: &str) -> Result<GitSource, Refusal> {
    let (main, query) = split_query(source);
    let (repo, subdir) = split_subdir(main, 0);
    let parts: Vec<&str> = repo.split('/').collect();
    if parts.len() > 3 && subdir.is_none() {
        // go-getter: github.com/owner/repo/sub is the repository owner/repo, directory sub.
        let (base, rest) = (parts[..3].join("/"), parts[3..].join("/"));
        let rewritten = format!("{base}//{rest}{}", query_suffix(query));
        return parse_github(&rewritten);
    }
    if parts.len() < 3 || parts[1].is_empty() || parts[2].is_empty() {
        return Err(Refusal::new(
            "Unsupported module source",
            format!(
                "The module source {source:?} needs both an owner and a repository after github.com/."
            ),
        ));
    }
    let path = if repo.ends_with(".git") {
        repo.to_owned()
    } else {
        format!("{repo}.git")
    };
    let text = format!(
        "git::https://{path}{}{}",
        subdir_suffix(subdir),
        query_suffix(query)
    );
    let mut git = parse_git(source, text.trim_start_matches("git::"))?;
    git.subdir = clean_subdir(source, subdir)?;
    Ok(git)
}

/// The part after `git::`: a URL or an scp-like `user@host:path`, then `//subdir` and `?ref=`.
fn parse_git(source: &str, rest: &str) -> Result<GitSource, Refusal> {
    let refuse = |why: String| {
        Refusal::new(
            "Unsupported module source",
            format!("The module source {source:?} {why}"),
        )
    };
    let (main, query) = split_query(rest);
    let (scheme, after_scheme) = match main.split_once("://") {
        Some(("https", a)) => (Scheme::Https, a),
        Some(("ssh", a)) => (Scheme::Ssh, a),
        Some(("http", a)) => (Scheme::Http, a),
        Some(("git", a)) => (Scheme::Git, a),
        Some((other, _)) => {
            return Err(refuse(format!(
                "uses the {other}:// protocol; atoll fetches modules over https://, ssh:// (and http:// or git:// where the server allows plain text)."
            )));
        }
        None if is_scp_like(main) => (Scheme::Ssh, main),
        None => return Err(refuse(
            "is not a Git URL: write git::https://HOST/PATH.git or git::ssh://git@HOST/PATH.git."
                .to_owned(),
        )),
    };
    let offset = main.len() - after_scheme.len();
    let (repo, subdir) = split_subdir(main, offset);
    let subdir = clean_subdir(source, subdir)?;
    let authority_and_path = &repo[offset..];
    let (authority, path) = if scheme == Scheme::Ssh && !main.contains("://") {
        // scp-like: user@host:path
        let (a, p) = authority_and_path
            .split_once(':')
            .unwrap_or((authority_and_path, ""));
        (a, p)
    } else {
        authority_and_path
            .split_once('/')
            .unwrap_or((authority_and_path, ""))
    };
    let (user, host) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    if let Some(u) = user
        && (u.contains(':') || scheme != Scheme::Ssh || !valid_user(u))
    {
        return Err(refuse("holds credentials or a user name in its URL; atoll never sends credentials a module source names (the server's own forge credentials are used for the forge's host).".to_owned()));
    }
    if !valid_host(host) {
        return Err(refuse(format!(
            "names the host {host:?}, which is not a host name with an optional :port."
        )));
    }
    if path.is_empty()
        || path.starts_with('-')
        || path.split('/').any(|s| s == "..")
        || !path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/~".contains(c))
    {
        return Err(refuse("has a repository path atoll does not accept: letters, digits and . _ - / ~ only, no \"..\".".to_owned()));
    }
    let git_ref = parse_query(source, query)?;
    Ok(GitSource {
        url: GitUrl {
            scheme,
            host: host.to_ascii_lowercase(),
            text: repo.to_owned(),
        },
        git_ref,
        subdir,
    })
}

/// go-getter's query arguments: `ref` is the revision, `depth` is accepted (atoll always
/// fetches one commit), anything else is refused.
fn parse_query(source: &str, query: Option<&str>) -> Result<Option<String>, Refusal> {
    let refuse = |why: String| {
        Refusal::new(
            "Unsupported module source",
            format!("The module source {source:?} {why}"),
        )
    };
    let mut git_ref = None;
    for pair in query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_encoding::percent_decode_str(value)
            .decode_utf8_lossy()
            .into_owned();
        match key {
            "ref" => {
                if !valid_ref(&value) {
                    return Err(refuse(format!("asks for the revision {value:?}, which is not a branch, tag or commit name git accepts (letters, digits, . _ - /, not starting with - or holding \"..\").")));
                }
                git_ref = Some(value);
            }
            "depth" => {}
            "sshkey" => return Err(refuse("carries an SSH key (?sshkey=); atoll never uses a key from a pull request. The server reaches SSH hosts with its own identity.".to_owned())),
            other => return Err(refuse(format!("has the argument ?{other}=, which atoll does not support (only ?ref= and ?depth=)."))),
        }
    }
    Ok(git_ref)
}

/// Terraform's registry address: `[host/]namespace/name/system[//subdir]`, where a first part
/// with a dot or a colon is a host name. `github.com` and `bitbucket.org` are go-getter
/// shorthands, never registries.
fn parse_registry(source: &str) -> Option<RegistrySource> {
    if source.contains('?') || source.contains("::") {
        return None;
    }
    let (main, subdir) = split_subdir(source, 0);
    let parts: Vec<&str> = main.split('/').collect();
    let (host, rest) = match parts.len() {
        3 => (DEFAULT_REGISTRY.to_owned(), &parts[..]),
        4 if parts[0].contains('.') || parts[0].contains(':') => {
            (parts[0].to_ascii_lowercase(), &parts[1..])
        }
        _ => return None,
    };
    if host == "github.com" || host == "bitbucket.org" || !valid_host(&host) {
        return None;
    }
    let name_ok = |s: &str| {
        let b = s.as_bytes();
        !b.is_empty()
            && b.len() <= 64
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || *c == b'-' || *c == b'_')
    };
    let system_ok = |s: &str| {
        !s.is_empty()
            && s.len() <= 64
            && s.bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    };
    if !(name_ok(rest[0]) && name_ok(rest[1]) && system_ok(rest[2])) {
        return None;
    }
    let subdir = subdir
        .map(|s| s.trim_matches('/').to_owned())
        .unwrap_or_default();
    if subdir.split('/').any(|s| s == "..") {
        return None;
    }
    Some(RegistrySource {
        host,
        namespace: rest[0].to_owned(),
        name: rest[1].to_owned(),
        system: rest[2].to_owned(),
        subdir,
    })
}

/// `user@host:path` with no `://`.
fn is_scp_like(s: &str) -> bool {
    match s.split_once(':') {
        Some((before, after)) => {
            before.contains('@') && !before.contains('/') && !after.starts_with("//")
        }
        None => false,
    }
}

fn split_query(s: &str) -> (&str, Option<&str>) {
    match s.split_once('?') {
        Some((main, q)) => (main, Some(q)),
        None => (s, None),
    }
}

/// Splits `repo//subdir` at the first `//` found at or after `from` (past a scheme's `://`).
fn split_subdir(s: &str, from: usize) -> (&str, Option<&str>) {
    match s.get(from..).and_then(|t| t.find("//")) {
        Some(i) => (&s[..from + i], Some(&s[from + i + 2..])),
        None => (s, None),
    }
}

fn clean_subdir(source: &str, subdir: Option<&str>) -> Result<String, Refusal> {
    let sub = subdir.unwrap_or_default().trim_matches('/');
    if sub.split('/').any(|p| p == ".." || p.starts_with('-'))
        || sub.chars().any(|c| c == '\\' || c.is_control())
    {
        return Err(Refusal::new(
            "Unsupported module source",
            format!(
                "The module source {source:?} names a subdirectory that leaves the module's package."
            ),
        ));
    }
    Ok(sub.to_owned())
}

fn subdir_suffix(sub: Option<&str>) -> String {
    sub.map(|s| format!("//{s}")).unwrap_or_default()
}

fn query_suffix(q: Option<&str>) -> String {
    q.map(|q| format!("?{q}")).unwrap_or_default()
}

/// A host name (letters, digits, `.`, `-`) with an optional `:port`.
pub fn valid_host(host: &str) -> bool {
    let (name, port) = match host.rsplit_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (host, None),
    };
    !name.is_empty()
        && name.len() <= 253
        && !name.starts_with(['-', '.'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        && port
            .is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// An SSH user name: letters, digits, `.`, `_`, `-`, not starting with `-`.
fn valid_user(u: &str) -> bool {
    !u.is_empty()
        && !u.starts_with('-')
        && u.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

/// A revision name git accepts and that cannot be read as an option or a refspec.
fn valid_ref(r: &str) -> bool {
    !r.is_empty()
        && r.len() <= 200
        && !r.starts_with(['-', '/', '.'])
        && !r.ends_with(['/', '.'])
        && !r.contains("..")
        && !r.ends_with(".lock")
        && r.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c))
}

/// A full commit id (40 hexadecimal digits, or 64 for SHA-256 repositories).
pub(crate) fn is_commit_id(r: &str) -> bool {
    (r.len() == 40 || r.len() == 64) && r.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(source: &str) -> GitSource {
        match parse(source) {
            Ok(Source::Git(g)) => g,
            other => panic!("{source}: {other:?}"),
        }
    }

    fn refused(source: &str) -> String {
        match parse(source) {
            Err(r) => r.detail,
            Ok(s) => panic!("{source} was accepted: {s:?}"),
        }
    }

    #[test]
    fn git_urls_split_into_repository_subdirectory_and_revision() {
        let g = git("git::https://example.com/network.git//modules/vpc?ref=v1.2.0");
        assert_eq!(g.url.text, "https://example.com/network.git");
        assert_eq!(g.url.host, "example.com");
        assert_eq!(g.url.scheme, Scheme::Https);
        assert_eq!(g.subdir, "modules/vpc");
        assert_eq!(g.git_ref.as_deref(), Some("v1.2.0"));
        let g = git("git::ssh://git@example.com:2222/infra/mods.git?ref=main");
        assert_eq!(
            (g.url.scheme, g.url.host.as_str()),
            (Scheme::Ssh, "example.com:2222")
        );
        assert_eq!(g.url.text, "ssh://git@example.com:2222/infra/mods.git");
        let g = git("git::http://127.0.0.1:9418/m.git");
        assert_eq!((g.url.scheme, g.git_ref), (Scheme::Http, None));
    }

    #[test]
    fn shorthands_are_read_as_go_getter_reads_them() {
        let g = git("github.com/hashicorp/example/modules/x?ref=v1");
        assert_eq!(g.url.text, "https://github.com/hashicorp/example.git");
        assert_eq!(g.subdir, "modules/x");
        assert_eq!(g.url.owner(), Some("hashicorp"));
        let g = git("github.com/hashicorp/example//sub?ref=v1");
        assert_eq!(g.url.text, "https://github.com/hashicorp/example.git");
        assert_eq!(
            (g.subdir.as_str(), g.git_ref.as_deref()),
            ("sub", Some("v1"))
        );
        let g = git("git@github.com:owner/repo.git//x?ref=abc");
        assert_eq!(
            (g.url.scheme, g.url.host.as_str()),
            (Scheme::Ssh, "github.com")
        );
        assert_eq!(g.url.text, "git@github.com:owner/repo.git");
        assert_eq!(g.subdir, "x");
    }

    #[test]
    fn registry_addresses_have_three_or_four_parts() {
        let Ok(Source::Registry(r)) = parse("hashicorp/consul/aws//modules/agent") else {
            panic!("registry");
        };
        assert_eq!(
            (r.host.as_str(), r.path().as_str(), r.subdir.as_str()),
            (DEFAULT_REGISTRY, "hashicorp/consul/aws", "modules/agent")
        );
        let Ok(Source::Registry(r)) = parse("app.terraform.io/acme/lxc/proxmox") else {
            panic!("registry");
        };
        assert_eq!(r.host, "app.terraform.io");
        assert!(matches!(parse("github.com/a/b"), Ok(Source::Git(_))));
    }

    #[test]
    fn what_atoll_does_not_fetch_is_refused_with_the_reason() {
        assert!(refused("s3::https://s3.amazonaws.com/b/m.zip").contains("\"s3\" getter"));
        assert!(refused("git::file:///etc").contains("file://"));
        assert!(
            refused("git::ext::sh -c id").contains("not a Git URL")
                || refused("git::ext::sh -c id").contains("spaces")
        );
        assert!(refused("https://example.com/m.zip").contains("archive"));
        assert!(refused("/abs/path").contains("absolute"));
        assert!(refused("git::https://x.example/r.git?sshkey=AAAA").contains("SSH key"));
        assert!(refused("git::https://x.example/r.git?ref=--upload-pack=x").contains("revision"));
        assert!(refused("git::https://user:pw@x.example/r.git").contains("credentials"));
        assert!(refused("git::https://x.example/r.git//../../etc").contains("leaves"));
        assert!(refused("git::https://-oProxyCommand=x/r.git").contains("host"));
        assert!(refused("bitbucket.org/a/b").contains("Bitbucket"));
        assert!(
            refused("git::ssh://-oProxyCommand=x@h.example/r.git")
                .contains("credentials or a user name")
        );
        assert!(refused("nonsense").contains("neither"));
    }

    #[test]
    fn commit_ids_are_full_length_hex() {
        assert!(is_commit_id(&"a".repeat(40)));
        assert!(!is_commit_id("abc1234"));
    }
}
