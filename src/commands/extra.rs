//! The words after `--` in `atlantis plan -- -target=ADDR`: the Terraform flags that mean
//! something to atoll's engine, validated into [`PlanOptions`]. Nothing is passed to a tool or
//! a shell; any other flag is refused by name with the list of those accepted.
//!
//! Syntax as Terraform's own (Go's `flag` package): `-flag=value`, `-flag value`, a leading
//! `--` works like `-`; a switch takes no separate value (`-destroy`, `-destroy=true`).

use model::{PlanOptions, ResourceAddress, VarArg, shown_value as shown};

/// Most words after `--`.
pub const MAX_EXTRA_WORDS: usize = 32;
/// Longest word after `--`.
pub const MAX_EXTRA_WORD_LEN: usize = 1024;

/// The flags accepted after `--`, for the refusal of any other.
pub const ACCEPTED: &str = "-target=ADDRESS, -replace=ADDRESS, -destroy, -var 'NAME=VALUE', \
                            -var-file=PATH, -refresh=true, -lock-timeout=0s";

/// Parses the words after `--`; the error is one sentence naming the offending word.
pub(crate) fn parse(words: &[String]) -> Result<PlanOptions, String> {
    parse_in(words, "after `--`")
}

/// Parses Terraform flags found at `place` (for example "after `--`", or "in
/// `workflows.prod.plan.steps[0].extra_args`"), which the error names: a workflow's plan step reads its `extra_args` exactly as a comment's
/// words after `--` are read.
pub(crate) fn parse_in(words: &[String], place: &str) -> Result<PlanOptions, String> {
    if words.len() > MAX_EXTRA_WORDS {
        return Err(format!(
            "too many words {place} ({}); at most {MAX_EXTRA_WORDS}",
            words.len()
        ));
    }
    if let Some(long) = words.iter().find(|w| w.len() > MAX_EXTRA_WORD_LEN) {
        return Err(format!(
            "`{}` {place} is longer than {MAX_EXTRA_WORD_LEN} characters",
            shown(long)
        ));
    }
    let mut options = PlanOptions::default();
    let mut rest = words.iter();
    while let Some(word) = rest.next() {
        let Some(flag) = word.strip_prefix("--").or_else(|| word.strip_prefix('-')) else {
            return Err(format!(
                "`{}` {place} is not a flag; atoll accepts only {ACCEPTED}",
                shown(word)
            ));
        };
        let (name, inline) = match flag.split_once('=') {
            Some((name, value)) => (name, Some(value.to_owned())),
            None => (flag, None),
        };
        let mut value = || match inline.clone() {
            Some(value) => Ok(value),
            None => rest
                .next()
                .cloned()
                .ok_or_else(|| format!("`-{name}` needs a value {place}: `-{name}=VALUE`")),
        };
        match name {
            "target" => options.targets.push(address(&value()?)?),
            "replace" => options.replace.push(address(&value()?)?),
            "var" => options
                .vars
                .push(VarArg::var(&value()?).map_err(|e| e.to_string())?),
            "var-file" => options
                .vars
                .push(VarArg::file(&value()?).map_err(|e| e.to_string())?),
            "destroy" => options.destroy = switch(name, inline.as_deref())?,
            "refresh" => refresh(inline.as_deref())?,
            "lock-timeout" => lock_timeout(&value()?)?,
            _ => {
                return Err(format!(
                    "`-{}` {place} is not supported; atoll accepts only {ACCEPTED}",
                    shown(name)
                ));
            }
        }
    }
    Ok(options)
}

fn address(raw: &str) -> Result<ResourceAddress, String> {
    ResourceAddress::parse(raw).map_err(|e| e.to_string())
}

/// A boolean switch as Go's `flag` reads one: bare, or `=true`/`=false` (and `1`, `t`, ...).
fn switch(name: &str, inline: Option<&str>) -> Result<bool, String> {
    match inline {
        None => Ok(true),
        Some("1" | "t" | "T" | "true" | "TRUE" | "True") => Ok(true),
        Some("0" | "f" | "F" | "false" | "FALSE" | "False") => Ok(false),
        Some(other) => Err(format!(
            "`-{name}` is true or false, not `{}`",
            shown(other)
        )),
    }
}

/// `-refresh=true` is what atoll always does; `-refresh=false` is refused: the engine reads
/// the guests to plan at all (their config is the prior state it diffs against).
fn refresh(inline: Option<&str>) -> Result<(), String> {
    if switch("refresh", inline)? {
        return Ok(());
    }
    Err(
        "`-refresh=false` is not supported: atoll plans against what it reads from the \
         cluster (the guests' current config is what it compares with), so it cannot plan \
         without reading it"
            .to_owned(),
    )
}

/// atoll never waits for a project lock: a project locked by another pull request is
/// refused at once. So only a zero timeout (Terraform's default) is accepted.
fn lock_timeout(raw: &str) -> Result<(), String> {
    let digits = raw.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let zero = !digits.is_empty() && digits.chars().all(|c| c == '0' || c == '.');
    if zero && matches!(&raw[digits.len()..], "" | "s" | "ms" | "m" | "h") {
        return Ok(());
    }
    Err(format!(
        "`-lock-timeout={}` is not supported: atoll never waits for a project lock (a project \
         locked by another pull request is refused at once, with the holder named), so only \
         `-lock-timeout=0s` is accepted",
        shown(raw)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn zero_lock_timeouts_are_accepted_and_others_refused() {
        for ok in ["0s", "0", "0ms", "0.0s"] {
            assert!(lock_timeout(ok).is_ok(), "{ok}");
        }
        for bad in ["5s", "1m", "0x", "", "s"] {
            assert!(lock_timeout(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_value_may_follow_as_the_next_word() {
        let options = parse(&words(&["-target", "a.b", "--replace", "c.d"])).expect("options");
        assert_eq!(options.targets[0].as_str(), "a.b");
        assert_eq!(options.replace[0].as_str(), "c.d");
    }
}
