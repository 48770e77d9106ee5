//! The arguments of `atlantis import ADDRESS ID` and `atlantis state rm ADDRESS...`: the
//! resource addresses (validated as `model::ResourceAddress`) and bpg's import id, bounded.

use serde::{Deserialize, Serialize};

use model::{ResourceAddress, shown_value as shown};

/// Most addresses one `state rm` takes.
pub const MAX_STATE_RM_ADDRESSES: usize = 20;
/// Longest import id (bpg's ids are `node/vm_id`, `storage:content/file`, a pool's name).
pub const MAX_IMPORT_ID_LEN: usize = 256;

/// What `import` and `state rm` act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ResourceArgs {
    /// `import ADDRESS ID`: take the object `id` names into state as `address`.
    Import {
        address: ResourceAddress,
        id: ImportId,
    },
    /// `state rm ADDRESS...`: forget these resources (every instance each covers).
    Remove { addresses: Vec<ResourceAddress> },
}

/// bpg's import id of a guest or object (`pve/100`): printable, no whitespace, bounded.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ImportId(String);

impl ImportId {
    pub fn parse(raw: &str) -> Result<Self, String> {
        if raw.is_empty() || raw.chars().count() > MAX_IMPORT_ID_LEN {
            return Err(format!(
                "the import id `{}` must be 1 to {MAX_IMPORT_ID_LEN} characters, e.g. `pve/100`",
                shown(raw)
            ));
        }
        if raw
            .chars()
            .any(|c| c.is_whitespace() || super::is_hidden_char(c))
        {
            return Err(format!(
                "the import id `{}` may not contain spaces or control characters",
                shown(raw)
            ));
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ImportId {
    type Error = String;
    fn try_from(raw: String) -> Result<Self, Self::Error> {
        Self::parse(&raw)
    }
}

impl From<ImportId> for String {
    fn from(id: ImportId) -> Self {
        id.0
    }
}

impl std::fmt::Display for ImportId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The positional words of `import` (`ADDRESS ID`) into its arguments.
pub(crate) fn import(words: &[String]) -> Result<ResourceArgs, String> {
    match words {
        [address, id] => Ok(ResourceArgs::Import {
            address: address_of(address)?,
            id: ImportId::parse(id)?,
        }),
        [] => Err("`import` needs ADDRESS and ID, e.g. `import \
                   proxmox_virtual_environment_container.web pve/100`"
            .to_owned()),
        _ => Err(format!(
            "`import` takes exactly ADDRESS and ID; got {} argument(s): `{}`",
            words.len(),
            shown(&words.join(" "))
        )),
    }
}

/// The positional words of `state` (`rm ADDRESS...`) into its arguments.
pub(crate) fn state(words: &[String]) -> Result<ResourceArgs, String> {
    let Some((sub, addresses)) = words.split_first() else {
        return Err("`state` needs a subcommand: `state rm ADDRESS...`".to_owned());
    };
    if sub != "rm" {
        return Err(format!(
            "invalid subcommand `{}` of `state` (only `rm`)",
            shown(sub)
        ));
    }
    if addresses.is_empty() {
        return Err("`state rm` needs at least one ADDRESS".to_owned());
    }
    if addresses.len() > MAX_STATE_RM_ADDRESSES {
        return Err(format!(
            "`state rm` takes at most {MAX_STATE_RM_ADDRESSES} addresses; got {}",
            addresses.len()
        ));
    }
    let addresses = addresses
        .iter()
        .map(|a| address_of(a))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ResourceArgs::Remove { addresses })
}

fn address_of(raw: &str) -> Result<ResourceAddress, String> {
    ResourceAddress::parse(raw).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn import_takes_an_address_and_a_bounded_id() {
        let args = import(&words("proxmox_virtual_environment_container.web pve/100"));
        assert!(
            matches!(&args, Ok(ResourceArgs::Import { id, .. }) if id.as_str() == "pve/100"),
            "{args:?}"
        );
        assert!(import(&words("web pve/100")).is_err_and(|e| e.contains("`web`")));
        assert!(import(&words("a.b")).is_err_and(|e| e.contains("exactly")));
        assert!(import(&[]).is_err_and(|e| e.contains("ADDRESS and ID")));
        let long = "x".repeat(MAX_IMPORT_ID_LEN + 1);
        assert!(import(&["a.b".to_owned(), long]).is_err());
        assert!(import(&["a.b".to_owned(), "pve/1\u{202e}".to_owned()]).is_err());
    }

    #[test]
    fn state_takes_rm_and_bounded_addresses() {
        assert!(matches!(
            state(&words("rm a.b module.m")),
            Ok(ResourceArgs::Remove { addresses }) if addresses.len() == 2
        ));
        assert!(state(&words("mv a.b c.d")).is_err_and(|e| e.contains("`mv`")));
        assert!(state(&words("rm")).is_err_and(|e| e.contains("at least one")));
        assert!(state(&[]).is_err_and(|e| e.contains("subcommand")));
        let many: Vec<String> = std::iter::once("rm".to_owned())
            .chain((0..=MAX_STATE_RM_ADDRESSES).map(|i| format!("a.b{i}")))
            .collect();
        assert!(state(&many).is_err_and(|e| e.contains("at most")));
    }
}
