//! OCI application containers (PVE 9.1+): the registry `oci-registry-pull` pulls from (the
//! scenario's `registry`: each reference with the image configuration skopeo would fetch),
//! the archives pulled, and what pve-container makes of such an archive at create
//! (`PVE::LXC::Create::restore_oci_archive`): the entrypoint and command as `entrypoint`, the
//! console mode `console`, host-managed networking on each NIC that does not say otherwise,
//! and the image's `Env` as `env`.

use std::collections::BTreeMap;

use serde::Deserialize;

/// An image's configuration (the OCI image config's `Entrypoint`, `Cmd` and `Env`).
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct OciImageSpec {
    #[serde(default)]
    pub entrypoint: Vec<String>,
    #[serde(default)]
    pub cmd: Vec<String>,
    #[serde(default)]
    pub env: Vec<String>,
}

/// The registry's images by reference, and the archives pulled from it by volume id.
#[derive(Debug, Default)]
pub(crate) struct Oci {
    pub(crate) registry: BTreeMap<String, OciImageSpec>,
    pub(crate) archives: BTreeMap<String, OciImageSpec>,
}

/// pve-storage `oci_registry_pull`'s `reference` pattern: an optional registry host (labels,
/// an optional port) then lowercase path components, and a tag (`\w[\w.-]{0,127}`).
pub(crate) fn valid_reference(reference: &str) -> bool {
    let Some((name, tag)) = reference.rsplit_once(':') else {
        return false;
    };
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let tag_ok = tag.chars().next().is_some_and(word)
        && tag.len() <= 128
        && tag.chars().all(|c| word(c) || c == '.' || c == '-');
    if !tag_ok || name.contains(':') && !name.contains('/') {
        return false;
    }
    let parts: Vec<&str> = name.split('/').collect();
    let all_path = parts.iter().all(|p| path_component(p));
    let with_host =
        parts.len() > 1 && host(parts[0]) && parts[1..].iter().all(|p| path_component(p));
    all_path || with_host
}

/// `[a-z\d]+(?:(?:[._]|__|[-]*)[a-z\d]+)*`.
fn path_component(part: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    if !part.starts_with(alnum) || !part.ends_with(alnum) {
        return false;
    }
    part.split(alnum)
        .filter(|sep| !sep.is_empty())
        .all(|sep| matches!(sep, "." | "_" | "__") || sep.chars().all(|c| c == '-'))
        && part
            .chars()
            .all(|c| alnum(c) || matches!(c, '.' | '_' | '-'))
}

/// Domain labels `[a-zA-Z\d]|[a-zA-Z\d][a-zA-Z\d-]*[a-zA-Z\d]` joined by `.`, then `(?::\d+)?`.
fn host(part: &str) -> bool {
    let (domain, port) = match part.split_once(':') {
        Some((d, p)) => (d, Some(p)),
        None => (part, None),
    };
    let label = |l: &str| {
        !l.is_empty()
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    domain.split('.').all(label)
        && port.is_none_or(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// pve-storage `normalize_content_filename`.
pub(crate) fn normalize_filename(name: &str) -> String {
    let last = name
        .trim_end_matches('\n')
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(name);
    last.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `restore_oci_archive`'s changes to a new container's config.
pub(crate) fn restore(image: &OciImageSpec, conf: &mut BTreeMap<String, String>) {
    let init: Vec<&String> = image.entrypoint.iter().chain(&image.cmd).collect();
    if init.first().is_some_and(|first| *first != "/sbin/init") {
        conf.insert("entrypoint".to_owned(), cmd2string(&init));
        // "An entrypoint other than /sbin/init breaks the tty console mode."
        conf.insert("cmode".to_owned(), "console".to_owned());
        // "A container with a custom entrypoint likely lacks internal network management"
        for (key, value) in conf.iter_mut() {
            let nic = key
                .strip_prefix("net")
                .is_some_and(|n| n.parse::<u8>().is_ok());
            if nic && !value.split(',').any(|f| f.starts_with("host-managed=")) {
                value.push_str(",host-managed=1");
            }
        }
    }
    if !image.env.is_empty() {
        conf.insert("env".to_owned(), image.env.join("\0"));
    }
}

/// `PVE::Tools::cmd2string` (String::ShellQuote `shell_quote`): words joined by spaces, a word
/// with anything but `[\w!%+,\-./:=@^]` single-quoted, a `'` inside as `'\''`.
fn cmd2string(words: &[&String]) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_!%+,-./:=@^".contains(c);
    words
        .iter()
        .map(|w| {
            if !w.is_empty() && w.chars().all(safe) {
                (*w).clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_checked_with_pve_storages_pattern() {
        for ok in [
            "docker.io/library/nginx:alpine",
            "nginx:1.27",
            "ghcr.io/home-assistant/home-assistant:stable",
            "localhost:5000/team/app:v1.2-rc_3",
        ] {
            assert!(valid_reference(ok), "{ok}");
        }
        for bad in [
            "nginx",
            "docker.io/library/NGINX:alpine",
            "docker.io/library/nginx:",
            "docker.io//nginx:latest",
            "nginx:-tag",
            "-nginx:1",
        ] {
            assert!(!valid_reference(bad), "{bad}");
        }
    }

    #[test]
    fn a_custom_entrypoint_sets_console_mode_and_host_managed_nics() {
        let image = OciImageSpec {
            entrypoint: vec!["/docker-entrypoint.sh".to_owned()],
            cmd: vec![
                "nginx".to_owned(),
                "-g".to_owned(),
                "daemon off;".to_owned(),
            ],
            env: vec!["PATH=/usr/bin".to_owned(), "NGINX_VERSION=1.27".to_owned()],
        };
        let mut conf = BTreeMap::from([
            (
                "net0".to_owned(),
                "name=eth0,bridge=vmbr0,ip=dhcp".to_owned(),
            ),
            (
                "net1".to_owned(),
                "name=eth1,bridge=vmbr0,host-managed=0".to_owned(),
            ),
        ]);
        restore(&image, &mut conf);
        assert_eq!(
            conf["entrypoint"],
            "/docker-entrypoint.sh nginx -g 'daemon off;'"
        );
        assert_eq!(conf["cmode"], "console");
        assert_eq!(
            conf["net0"],
            "name=eth0,bridge=vmbr0,ip=dhcp,host-managed=1"
        );
        assert_eq!(conf["net1"], "name=eth1,bridge=vmbr0,host-managed=0");
        assert_eq!(conf["env"], "PATH=/usr/bin\0NGINX_VERSION=1.27");
    }
}
