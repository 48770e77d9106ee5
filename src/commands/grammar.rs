//! Which first words make a comment a command (`atlantis`, the configured name, `@<bot user>`),
//! and the did-you-mean rules for near misses.

/// The name every atoll accepts, for compatibility with Atlantis habits.
pub(crate) const ATLANTIS: &str = "atlantis";
/// The other name Atlantis accepts from everyone (`run plan`), whatever the configured name.
const RUN: &str = "run";
/// Edit distance up to which a first word counts as a misspelt executable name.
const NEAR_MISS_DISTANCE: usize = 2;

/// The executable names a comment may start with. Matching is case-insensitive.
///
/// Near misses (edit distance 2 or less, followed by a known command) get a did-you-mean, so
/// when several servers watch one repository their names should differ by more than 2 edits
/// (`atoll-prod` and `atoll-lab`, not `atoll` and `atoll2`), or one will answer the other's
/// commands with a hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grammar {
    /// The configured name, lower-cased (default `atoll`); `None` if it was unusable.
    configured: Option<String>,
    /// `@<bot user>`, lower-cased, when the forge account is known.
    bot: Option<String>,
    /// The commands the server runs (Atlantis's default unless told).
    allowed: super::AllowedCommands,
}

impl Grammar {
    /// `configured_name` is the server's executable name (e.g. `atoll`); a value that is empty
    /// or contains whitespace or `@` is ignored (only `atlantis` and the bot mention remain).
    /// `bot_user` may be given with or without the leading `@`.
    pub fn new(configured_name: &str, bot_user: Option<&str>) -> Self {
        let configured = configured_name.trim().to_lowercase();
        let configured = (!configured.is_empty()
            && !configured.contains(|c: char| c.is_whitespace() || c == '@'))
        .then_some(configured);
        let bot = bot_user
            .map(|user| user.trim().trim_start_matches('@').to_lowercase())
            .filter(|user| !user.is_empty() && !user.contains(char::is_whitespace))
            .map(|user| format!("@{user}"));
        Self {
            configured,
            bot,
            allowed: super::AllowedCommands::default(),
        }
    }

    /// The same names, running only `allowed` (`commands.allow_commands`).
    #[must_use]
    pub fn allowing(mut self, allowed: super::AllowedCommands) -> Self {
        self.allowed = allowed;
        self
    }

    /// The commands the server runs.
    pub fn allowed(&self) -> &super::AllowedCommands {
        &self.allowed
    }

    /// The name to show in usage text: the configured name, else `atlantis`.
    pub fn display_name(&self) -> &str {
        self.configured.as_deref().unwrap_or(ATLANTIS)
    }

    /// True if `word` (already lower-cased) is one of the executable names: `atlantis`, `run`
    /// (as Atlantis accepts it), the configured name, the bot mention.
    pub(crate) fn is_executable(&self, word: &str) -> bool {
        word == ATLANTIS
            || word == RUN
            || self.configured.as_deref() == Some(word)
            || self.bot.as_deref() == Some(word)
    }

    /// The executable name `word` (lower-cased) is a near miss of, if any. Only names that
    /// look alike are offered: a word starting with `@` is compared with the bot mention, any
    /// other word with `atlantis` and the configured name.
    pub(crate) fn near_miss(&self, word: &str) -> Option<&str> {
        let candidates: Vec<&str> = if word.starts_with('@') {
            self.bot.iter().map(String::as_str).collect()
        } else {
            std::iter::once(ATLANTIS)
                .chain(self.configured.as_deref())
                .collect()
        };
        candidates
            .into_iter()
            .filter_map(|name| {
                edit_distance(word, name, NEAR_MISS_DISTANCE).map(|distance| (distance, name))
            })
            .min_by_key(|(distance, _)| *distance)
            .map(|(_, name)| name)
    }
}

impl Default for Grammar {
    fn default() -> Self {
        Self::new("atoll", None)
    }
}

/// Levenshtein distance between `a` and `b` if it is at most `limit`, else `None`. Cheap on
/// long input: words whose lengths differ by more than `limit` are rejected at once.
pub(crate) fn edit_distance(a: &str, b: &str, limit: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitute.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    let distance = previous[b.len()];
    (distance <= limit).then_some(distance)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_atlantis_configured_name_and_bot_mention_case_insensitively() {
        let grammar = Grammar::new("Atoll", Some("@Atoll-Bot"));
        for word in ["atlantis", "run", "atoll", "@atoll-bot"] {
            assert!(grammar.is_executable(word), "{word}");
        }
        assert!(!grammar.is_executable("atoll-bot"));
        assert!(!grammar.is_executable("terraform"));
        assert_eq!(grammar.display_name(), "atoll");
    }

    #[test]
    fn unusable_configured_name_falls_back_to_atlantis() {
        let grammar = Grammar::new("  ", None);
        assert!(grammar.is_executable("atlantis"));
        assert!(!grammar.is_executable(""));
        assert_eq!(grammar.display_name(), "atlantis");
        assert!(!Grammar::new("my bot", None).is_executable("my bot"));
    }

    #[test]
    fn near_misses_within_two_edits_are_found() {
        let grammar = Grammar::new("atoll", Some("atoll-bot"));
        assert_eq!(grammar.near_miss("atlantos"), Some("atlantis"));
        assert_eq!(grammar.near_miss("atlnts"), Some("atlantis"));
        assert_eq!(grammar.near_miss("atol"), Some("atoll"));
        assert_eq!(grammar.near_miss("@atol-bot"), Some("@atoll-bot"));
        assert_eq!(grammar.near_miss("atlas"), None);
        assert_eq!(grammar.near_miss("terraform"), None);
    }

    #[test]
    fn edit_distance_counts_insertions_deletions_and_substitutions() {
        assert_eq!(edit_distance("kitten", "sitting", 3), Some(3));
        assert_eq!(edit_distance("kitten", "sitting", 2), None);
        assert_eq!(edit_distance("", "ab", 2), Some(2));
        assert_eq!(edit_distance("same", "same", 0), Some(0));
    }
}
