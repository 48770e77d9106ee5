//! What a plan is asked to do besides the plain "make the cluster match the configuration":
//! the Terraform flags a comment passes after `--` (`atlantis plan -- -target=ADDR`) or
//! `atoll plan` takes. The comment parser validates words into these values; the engine
//! honours them; a saved plan keeps them so its apply evaluates the configuration alike.

use serde::{Deserialize, Serialize};

use crate::names::{RepoDir, shown};

/// Longest resource address accepted.
pub const MAX_ADDRESS_LEN: usize = 512;

/// A Terraform resource or module address: `TYPE.NAME`, `TYPE.NAME[KEY]`, `module.NAME` or
/// any of those inside `module.NAME[KEY].`. Checked for shape only (which resources exist is
/// the configuration's business).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ResourceAddress(String);

/// Why an address or a variable file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OptionError {
    #[error("`{shown}` is not a resource address; write TYPE.NAME, TYPE.NAME[KEY] or module.NAME")]
    Address { shown: String },
    #[error(
        "variable file `{shown}` must be a relative path inside the project, without `..` and \
         not absolute"
    )]
    VarFile { shown: String },
    #[error("`-var` needs NAME=VALUE with a variable name, not `{shown}`")]
    Var { shown: String },
}

impl ResourceAddress {
    /// Checks the shape of `raw`: dot-separated names (letters, digits, `_`, `-`), each
    /// optionally followed by an index in brackets (`[0]`, `["key"]`); a resource needs a type
    /// and a name, a module address is `module.NAME`.
    pub fn parse(raw: &str) -> Result<Self, OptionError> {
        let refuse = || OptionError::Address { shown: shown(raw) };
        if raw.is_empty() || raw.len() > MAX_ADDRESS_LEN {
            return Err(refuse());
        }
        let parts = split_address(raw).ok_or_else(refuse)?;
        let names: Vec<&str> = parts.iter().map(|(name, _)| *name).collect();
        let mut rest = names.as_slice();
        while let ["module", _, tail @ ..] = rest {
            if tail.is_empty() {
                return Ok(Self(raw.to_owned()));
            }
            rest = tail;
        }
        match rest {
            [kind, _] if *kind != "module" => Ok(Self(raw.to_owned())),
            _ => Err(refuse()),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True when this address names `instance` (an instance address): the instance itself,
    /// every instance of a resource, or everything inside a module.
    pub fn covers(&self, instance: &str) -> bool {
        instance == self.0
            || instance
                .strip_prefix(self.0.as_str())
                .is_some_and(|rest| rest.starts_with('[') || rest.starts_with('.'))
    }
}

/// `raw` as (name, index) parts, or `None` when it is not a dotted address.
fn split_address(raw: &str) -> Option<Vec<(&str, Option<&str>)>> {
    let mut parts = Vec::new();
    let mut rest = raw;
    loop {
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let name = &rest[..end];
        let first = name.chars().next()?;
        let valid = (first.is_ascii_alphabetic() || first == '_')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return None;
        }
        rest = &rest[end..];
        let mut index = None;
        if let Some(tail) = rest.strip_prefix('[') {
            let close = tail.find(']')?;
            let key = &tail[..close];
            let quoted = key.len() >= 2 && key.starts_with('"') && key.ends_with('"');
            let plain = !key.is_empty() && key.chars().all(|c| c.is_ascii_digit());
            if !(plain || quoted && !key[1..key.len() - 1].contains(['"', '\n'])) {
                return None;
            }
            index = Some(key);
            rest = &tail[close + 1..];
        }
        parts.push((name, index));
        match rest.strip_prefix('.') {
            Some(tail) => rest = tail,
            None if rest.is_empty() => return Some(parts),
            None => return None,
        }
    }
}

impl TryFrom<String> for ResourceAddress {
    type Error = OptionError;
    fn try_from(raw: String) -> Result<Self, Self::Error> {
        Self::parse(&raw)
    }
}

impl From<ResourceAddress> for String {
    fn from(address: ResourceAddress) -> Self {
        address.0
    }
}

impl std::fmt::Display for ResourceAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One root variable value from the command line, in command-line order (Terraform's
/// precedence: later wins, all after `terraform.tfvars` and `*.auto.tfvars`); or from the
/// environment a workflow's `env` step sets (`TF_VAR_name`), which Terraform reads first,
/// below every file and command-line value, wherever it stands in the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum VarArg {
    /// `-var 'NAME=VALUE'`.
    Var { name: String, value: String },
    /// `-var-file=PATH`: relative to the project directory, never outside it.
    File { path: RepoDir },
    /// `TF_VAR_NAME=VALUE` in the environment: `name` is the variable's (without `TF_VAR_`).
    Env { name: String, value: String },
}

impl VarArg {
    /// `NAME=VALUE`, as Terraform splits it (at the first `=`).
    pub fn var(raw: &str) -> Result<Self, OptionError> {
        let refuse = || OptionError::Var { shown: shown(raw) };
        let (name, value) = raw.split_once('=').ok_or_else(refuse)?;
        let name = name.trim();
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Err(refuse());
        }
        Ok(Self::Var {
            name: name.to_owned(),
            value: value.to_owned(),
        })
    }

    /// `TF_VAR_NAME` set to `value`, as a workflow's `env` step sets it. The name is checked as
    /// `-var` checks one.
    pub fn env(name: &str, value: &str) -> Result<Self, OptionError> {
        match Self::var(&format!("{name}={value}"))? {
            Self::Var { name, value } => Ok(Self::Env { name, value }),
            other => Ok(other),
        }
    }

    /// A variable file path: relative, no `..` anywhere, no absolute path.
    pub fn file(raw: &str) -> Result<Self, OptionError> {
        let refuse = || OptionError::VarFile { shown: shown(raw) };
        if raw.split('/').any(|part| part == "..") {
            return Err(refuse());
        }
        let path = RepoDir::parse(raw).map_err(|_| refuse())?;
        if path.is_root() {
            return Err(refuse());
        }
        Ok(Self::File { path })
    }
}

/// The options of one plan. The default is an ordinary plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanOptions {
    /// `-target`: plan only these and what they depend on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<ResourceAddress>,
    /// `-replace`: plan these as replaced even without a change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replace: Vec<ResourceAddress>,
    /// `-destroy`: plan the destruction of everything in state.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub destroy: bool,
    /// `-var` and `-var-file`, in command-line order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vars: Vec<VarArg>,
}

impl PlanOptions {
    /// True for an ordinary plan.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The options as Terraform's flags, in the order `commands` reads them back (`-target=A`,
    /// `-replace=A`, `-destroy`, then every `-var`/`-var-file` in command-line order): what a
    /// reply tells a user to write after `--`.
    pub fn to_args(&self) -> Vec<String> {
        let mut args: Vec<String> = Vec::new();
        args.extend(self.targets.iter().map(|a| format!("-target={a}")));
        args.extend(self.replace.iter().map(|a| format!("-replace={a}")));
        if self.destroy {
            args.push("-destroy".to_owned());
        }
        // a workflow's `TF_VAR_*` values are not flags: they stay with the workflow
        args.extend(self.vars.iter().filter_map(|v| match v {
            VarArg::Var { name, value } => Some(format!("-var={name}={value}")),
            VarArg::File { path } => Some(format!("-var-file={path}")),
            VarArg::Env { .. } => None,
        }));
        args
    }

    /// These options, then `later`'s, as if `later` were written after them on one command
    /// line (a workflow's `extra_args`, then a comment's words after `--`): lists are joined
    /// in that order, so a later `-var` wins; `-destroy` holds if either sets it.
    pub fn followed_by(&self, later: &Self) -> Self {
        let join = |a: &[ResourceAddress], b: &[ResourceAddress]| {
            let mut out = a.to_vec();
            out.extend(b.iter().filter(|x| !a.contains(x)).cloned());
            out
        };
        let mut vars = self.vars.clone();
        vars.extend(later.vars.iter().cloned());
        Self {
            targets: join(&self.targets, &later.targets),
            replace: join(&self.replace, &later.replace),
            destroy: self.destroy || later.destroy,
            vars,
        }
    }

    /// True when `instance` is one of the `-replace` addresses' instances.
    pub fn replaces(&self, instance: &str) -> bool {
        self.replace.iter().any(|a| a.covers(instance))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_of_resources_instances_and_modules_are_accepted() {
        for ok in [
            "proxmox_virtual_environment_container.web",
            "proxmox_virtual_environment_container.web[0]",
            r#"proxmox_virtual_environment_vm.vm["db-1"]"#,
            "module.dev",
            r#"module.dev["a"].proxmox_virtual_environment_container.lxc"#,
            "module.a.module.b",
        ] {
            assert_eq!(ResourceAddress::parse(ok).map(String::from), Ok(ok.into()));
        }
    }

    #[test]
    fn malformed_addresses_are_refused() {
        for bad in [
            "",
            "web",
            "a.b.c",
            "module",
            "a.b[x]",
            "a.b[",
            "a..b",
            "a.b;rm",
            "$(x).y",
            "module.x.a",
        ] {
            assert!(ResourceAddress::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_module_address_covers_everything_inside_it_and_nothing_with_a_longer_name() {
        let module = ResourceAddress::parse("module.dev").expect("address");
        assert!(module.covers("module.dev.a.b"));
        assert!(module.covers(r#"module.dev["x"].a.b"#));
        assert!(!module.covers("module.development.a.b"));
    }

    #[test]
    fn var_files_escaping_the_project_are_refused() {
        assert!(VarArg::file("env/dev.tfvars").is_ok());
        for bad in [
            "../x.tfvars",
            "a/../../x",
            "a/../x",
            "/etc/passwd",
            ".",
            "~/x",
        ] {
            assert!(VarArg::file(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_var_splits_at_the_first_equals_sign() {
        assert_eq!(
            VarArg::var("tags=a=b"),
            Ok(VarArg::Var {
                name: "tags".into(),
                value: "a=b".into()
            })
        );
        assert!(VarArg::var("novalue").is_err());
        assert!(VarArg::var("=x").is_err());
    }
}
