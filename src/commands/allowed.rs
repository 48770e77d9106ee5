//! Which commands the server runs (`commands.allow_commands`, Atlantis's `--allow-commands`):
//! by default `version, plan, apply, unlock, approve_policies, cancel`, so `import` and `state rm`
//! are off until the operator allows them; `all` allows every command. `help` is always
//! allowed. A command the server does not allow is answered, naming the allowed ones.

use serde::{Deserialize, Serialize};

use super::Verb;

/// Atlantis's default list (`cmd/server.go` `DefaultAllowCommands`).
pub const DEFAULT_ALLOW_COMMANDS: [&str; 6] = [
    "version",
    "plan",
    "apply",
    "unlock",
    "approve_policies",
    "cancel",
];

/// Atlantis command names atoll does not have (yet): accepted in the list, with no effect.
/// Every command of Atlantis's default list is one of atoll's today.
const NOT_IN_ATOLL: [&str; 0] = [];

/// The commands this server runs besides `help`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllowedCommands {
    verbs: Vec<Verb>,
}

impl AllowedCommands {
    /// Every command atoll has.
    pub fn all() -> Self {
        Self {
            verbs: Verb::ALL.to_vec(),
        }
    }

    /// Atlantis's default: `version, plan, apply, unlock, approve_policies, cancel`.
    pub fn atlantis_default() -> Self {
        let words: Vec<String> = DEFAULT_ALLOW_COMMANDS.map(str::to_owned).to_vec();
        Self::parse(&words).map_or_else(|_| Self::all(), |(allowed, _)| allowed)
    }

    /// The list as configured: command names (case-insensitive) or `all`. Returns the
    /// commands and the Atlantis names that atoll does not have (ignored); an unknown word is
    /// an error naming it.
    pub fn parse(words: &[String]) -> Result<(Self, Vec<String>), String> {
        let mut verbs = vec![Verb::Help];
        let mut absent = Vec::new();
        for word in words {
            let word = word.trim().to_lowercase();
            if word == "all" {
                return Ok((Self::all(), Vec::new()));
            }
            match Verb::from_word(&word) {
                Some(verb) if !verbs.contains(&verb) => verbs.push(verb),
                Some(_) => {}
                None if NOT_IN_ATOLL.contains(&word.as_str()) => absent.push(word),
                None => {
                    let names: Vec<&str> = Verb::ALL
                        .iter()
                        .filter(|v| **v != Verb::Help)
                        .map(|v| v.as_str())
                        .collect();
                    return Err(format!(
                        "{:?} is not a command; use `all` or any of {}",
                        super::shown_value(&word),
                        names.join(", ")
                    ));
                }
            }
        }
        Ok((Self { verbs }, absent))
    }

    /// Whether the server runs `verb` (`help` always).
    pub fn allows(&self, verb: Verb) -> bool {
        verb == Verb::Help || self.verbs.contains(&verb)
    }

    /// The allowed commands in `Verb::ALL` order (`help` included).
    pub fn verbs(&self) -> Vec<Verb> {
        Verb::ALL
            .into_iter()
            .filter(|verb| self.allows(*verb))
            .collect()
    }
}

impl Default for AllowedCommands {
    fn default() -> Self {
        Self::atlantis_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn the_default_leaves_import_and_state_off() {
        let allowed = AllowedCommands::default();
        for verb in [
            Verb::Plan,
            Verb::Apply,
            Verb::Unlock,
            Verb::Cancel,
            Verb::Version,
            Verb::Help,
        ] {
            assert!(allowed.allows(verb), "{verb}");
        }
        assert!(!allowed.allows(Verb::Import));
        assert!(!allowed.allows(Verb::StateRm));
    }

    #[test]
    fn a_command_the_server_does_not_run_is_answered_with_the_allowed_ones() {
        use crate::commands::{Grammar, Parsed, Reply, parse};
        let grammar = Grammar::new("atoll", None);
        for text in [
            "atlantis import a.b pve/1",
            "atlantis help state",
            "atoll state -h",
        ] {
            let parsed = parse(text, &grammar);
            let Parsed::Reply(Reply::NotAllowed { allowed, .. }) = &parsed else {
                panic!("{text}: {parsed:?}");
            };
            assert!(!allowed.contains(&Verb::Import), "{allowed:?}");
            let shown = Reply::NotAllowed {
                verb: Verb::Import,
                allowed: allowed.clone(),
            }
            .to_string();
            assert!(
                shown.contains("Allowed commands (commands.allow_commands): plan, apply"),
                "{shown}"
            );
        }
        let all = grammar.allowing(AllowedCommands::all());
        let Parsed::Run(command) = parse("atlantis import 'a.b[\"x y\"]' pve/1 -d dir", &all)
        else {
            panic!("import with every command allowed");
        };
        let again = command.to_comment("atoll");
        assert_eq!(again, "atoll import 'a.b[\"x y\"]' pve/1 -d dir");
        assert_eq!(parse(&again, &all), Parsed::Run(command));
    }

    #[test]
    fn all_allows_everything_and_unknown_words_are_refused() {
        let (all, _) = AllowedCommands::parse(&words(&["plan", "ALL"])).expect("all");
        assert_eq!(all.verbs(), Verb::ALL.to_vec());
        let (some, absent) =
            AllowedCommands::parse(&words(&["plan", "import", "approve_policies"])).expect("list");
        assert_eq!(
            some.verbs(),
            [Verb::Plan, Verb::Help, Verb::Import, Verb::ApprovePolicies]
        );
        assert!(absent.is_empty(), "{absent:?}");
        let refused = AllowedCommands::parse(&words(&["plan", "destroy"]));
        assert!(refused.is_err_and(|e| e.contains("\"destroy\"") && e.contains("import")));
    }
}
