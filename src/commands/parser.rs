//! The parsing pipeline: comment text -> `Parsed`. See the module documentation of `commands`
//! for the steps.

use super::grammar::{ATLANTIS, Grammar};
use super::lexer::tokenize;
use super::{
    Command, Flag, FlagKind, NameError, Parsed, ProjectName, Reply, RepoDir, Usage, Verb, Workspace,
};
use model::shown_value as shown;

/// Parses one comment. Never panics; any input gives `Ignore`, a `Reply` or a `Run`.
pub fn parse(text: &str, grammar: &Grammar) -> Parsed {
    let Some(line) = command_line(text) else {
        return Parsed::Ignore;
    };
    let (first, rest) = split_first_word(line);
    let first = first.to_lowercase();
    if grammar.is_executable(&first) {
        return match parse_arguments(rest, grammar) {
            Ok(command) => Parsed::Run(command),
            Err(reply) => Parsed::Reply(reply),
        };
    }
    did_you_mean(&first, rest, grammar).map_or(Parsed::Ignore, Parsed::Reply)
}

/// The comment as one trimmed line without surrounding backticks, or `None` if it is empty or
/// has more than one line.
fn command_line(text: &str) -> Option<&str> {
    let unquoted = text.trim().trim_matches('`');
    if unquoted.trim_end().contains(['\n', '\r']) {
        return None;
    }
    let line = unquoted.trim();
    (!line.is_empty()).then_some(line)
}

/// `line` (trimmed) split into its first whitespace-separated word and the rest.
fn split_first_word(line: &str) -> (&str, &str) {
    match line.find(char::is_whitespace) {
        Some(end) => line.split_at(end),
        None => (line, ""),
    }
}

/// `terraform plan` and `atlantos plan` get a did-you-mean; only when the second word is a
/// known command, so that ordinary comments ("all good", "terraform is great") stay ignored.
/// `terraform` alone, `terraform -h` and `terraform --help` suggest `atlantis help`.
fn did_you_mean(first: &str, rest: &str, grammar: &Grammar) -> Option<Reply> {
    if first == "terraform" && matches!(rest.trim(), "" | "-h" | "--help") {
        // Atlantis answers a bare `terraform` (or its help flags) too (comment_parser.go).
        return Some(Reply::DidYouMean {
            typed: shown(first),
            suggestion: format!("{ATLANTIS} help"),
        });
    }
    let verb = Verb::from_word(rest.split_whitespace().next()?)?;
    let name = if first == "terraform" {
        ATLANTIS
    } else {
        grammar.near_miss(first)?
    };
    Some(Reply::DidYouMean {
        typed: shown(first),
        suggestion: format!("{name} {verb}"),
    })
}

fn error(message: String, usage: Usage) -> Reply {
    Reply::Error { message, usage }
}

/// A command the server does not run, answered with the ones it does.
fn not_allowed(verb: Verb, grammar: &Grammar) -> Reply {
    Reply::NotAllowed {
        verb,
        allowed: grammar.allowed().verbs(),
    }
}

/// Everything after the executable name.
fn parse_arguments(rest: &str, grammar: &Grammar) -> Result<Command, Reply> {
    let words = tokenize(rest).map_err(|e| error(e.message().to_owned(), Usage::Commands))?;
    let Some((first, args)) = words.split_first() else {
        return Ok(Command::new(Verb::Help));
    };
    if is_help_flag(first) {
        return match args.first() {
            None => Ok(Command::new(Verb::Help)),
            Some(extra) => Err(unexpected_argument(Verb::Help, extra)),
        };
    }
    let verb = Verb::from_word(first).ok_or_else(|| unknown_command(first))?;
    if !grammar.allowed().allows(verb) {
        return Err(not_allowed(verb, grammar));
    }
    match verb {
        Verb::Help => help_topic(args, grammar),
        _ => parse_flags(verb, args),
    }
}

fn is_help_flag(word: &str) -> bool {
    word == "-h" || word == "--help"
}

fn unknown_command(word: &str) -> Reply {
    let message = if word.starts_with('-') {
        format!(
            "unknown flag `{}`; flags go after the command, e.g. `plan -d DIR`",
            shown(word)
        )
    } else {
        format!("unknown command `{}`", shown(word))
    };
    error(message, Usage::Commands)
}

fn unexpected_argument(verb: Verb, word: &str) -> Reply {
    let message = format!(
        "unexpected argument `{}`; `{verb}` takes only flags",
        shown(word)
    );
    let usage = if verb == Verb::Help {
        Usage::Commands
    } else {
        Usage::Verb(verb)
    };
    error(message, usage)
}

/// `help` alone, or `help <command>` for the usage of one command.
fn help_topic(args: &[String], grammar: &Grammar) -> Result<Command, Reply> {
    match args {
        [] => Ok(Command::new(Verb::Help)),
        [topic] => match Verb::from_word(topic) {
            Some(verb) if !grammar.allowed().allows(verb) => Err(not_allowed(verb, grammar)),
            Some(verb) => Err(Reply::Help { verb }),
            None => Err(unknown_command(topic)),
        },
        [_, extra, ..] => Err(unexpected_argument(Verb::Help, extra)),
    }
}

/// Whether `verb` takes positional words (`import ADDRESS ID`, `state rm ADDRESS...`).
fn takes_words(verb: Verb) -> bool {
    matches!(verb, Verb::Import | Verb::StateRm)
}

/// The flags of `verb` (and the words of `import` and `state`), then the `-p` versus
/// `-d/-w` rule.
fn parse_flags(verb: Verb, args: &[String]) -> Result<Command, Reply> {
    let mut command = Command::new(verb);
    let mut seen: Vec<FlagKind> = Vec::new();
    let mut positional: Vec<String> = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--" {
            let rest: Vec<String> = words.cloned().collect();
            if verb == Verb::Plan {
                command.options =
                    super::extra::parse(&rest).map_err(|m| error(m, Usage::Verb(verb)))?;
            } else if let (true, Some(first)) = (takes_words(verb), rest.first()) {
                let message = format!(
                    "`{verb}` takes nothing after `--` (`{}`): atoll changes only its own \
                     state and passes no flags to Terraform",
                    shown(first)
                );
                return Err(error(message, Usage::Verb(verb)));
            } else if !rest.is_empty() {
                let message = format!(
                    "`{verb}` takes nothing after `--`; Terraform flags after `--` belong to \
                     `plan` (the saved plan is applied as planned)"
                );
                return Err(error(message, Usage::Verb(verb)));
            }
            return finish(with_words(command, &positional)?);
        }
        if is_help_flag(word) {
            return Err(Reply::Help { verb });
        }
        if takes_words(verb) && !word.starts_with('-') {
            positional.push(word.clone());
            continue;
        }
        if !word.starts_with('-') || word == "-" {
            return Err(unexpected_argument(verb, word));
        }
        let (flag, inline) = lookup_flag(verb, word)?;
        if seen.contains(&flag.kind) {
            let message = format!(
                "flag `{}` is given more than once; give it once",
                flag_name(flag)
            );
            return Err(error(message, Usage::Verb(verb)));
        }
        seen.push(flag.kind);
        let value = match (flag.value, inline) {
            (None, None) => None,
            (None, Some(_)) => {
                let message = format!("flag `--{}` takes no value", flag.long);
                return Err(error(message, Usage::Verb(verb)));
            }
            (Some(_), Some(value)) => Some(value),
            (Some(_), None) => Some(next_value(verb, flag, words.next())?),
        };
        apply_flag(&mut command, flag, value).map_err(|m| error(m, Usage::Verb(verb)))?;
    }
    finish(with_words(command, &positional)?)
}

/// The positional words of `import` and `state` into the command's `resources`.
fn with_words(mut command: Command, words: &[String]) -> Result<Command, Reply> {
    let parsed = match command.verb {
        Verb::Import => super::resources::import(words),
        Verb::StateRm => super::resources::state(words),
        _ => return Ok(command),
    };
    command.resources = Some(parsed.map_err(|m| error(m, Usage::Verb(command.verb)))?);
    Ok(command)
}

/// The flag `word` names, and its value when written inline (`--dir=x`, `-d=x`, `-dx`).
fn lookup_flag(verb: Verb, word: &str) -> Result<(&'static Flag, Option<String>), Reply> {
    let flags = verb.flags();
    let found = if let Some(long) = word.strip_prefix("--") {
        let (name, inline) = match long.split_once('=') {
            Some((name, value)) => (name, Some(value.to_owned())),
            None => (long, None),
        };
        flags.iter().find(|f| f.long == name).map(|f| (f, inline))
    } else {
        let mut chars = word.chars().skip(1);
        let short = chars.next();
        let tail: String = chars.collect();
        let inline = (!tail.is_empty()).then(|| tail.strip_prefix('=').unwrap_or(&tail).to_owned());
        flags
            .iter()
            .find(|f| f.short.is_some() && f.short == short)
            .filter(|f| f.value.is_some() || inline.is_none())
            .map(|f| (f, inline))
    };
    found.ok_or_else(|| {
        let message = format!("unknown flag `{}` for `{verb}`", shown(word));
        error(message, Usage::Verb(verb))
    })
}

fn flag_name(flag: &Flag) -> String {
    match flag.short {
        Some(short) => format!("-{short}"),
        None => format!("--{}", flag.long),
    }
}

/// The separate value word of a flag; a missing value or a flag in its place is an error.
fn next_value(verb: Verb, flag: &Flag, word: Option<&String>) -> Result<String, Reply> {
    match word {
        Some(value) if !value.starts_with('-') => Ok(value.clone()),
        _ => {
            let placeholder = flag.value.unwrap_or("VALUE");
            let message = format!(
                "flag `{}` needs a value: `{} {placeholder}`",
                flag_name(flag),
                flag_name(flag)
            );
            Err(error(message, Usage::Verb(verb)))
        }
    }
}

fn apply_flag(command: &mut Command, flag: &Flag, value: Option<String>) -> Result<(), String> {
    let value = value.unwrap_or_default();
    match flag.kind {
        FlagKind::Verbose => command.verbose = true,
        FlagKind::ClearPolicyApproval => command.clear_policy_approval = true,
        FlagKind::PolicySet => command.policy_set = Some(policy_set_name(&value)?),
        FlagKind::AutoMergeDisabled => command.auto_merge_disabled = true,
        FlagKind::AutoMergeMethod => command.auto_merge_method = Some(merge_method(&value)?),
        FlagKind::Project => command.project = Some(ProjectName::parse(&value).map_err(describe)?),
        FlagKind::Dir if crate::repocfg::is_glob(&value) => {
            let glob = crate::repocfg::DirGlob::parse(&value)?;
            command.dir_glob = Some(glob.as_str().to_owned());
        }
        FlagKind::Dir => command.dir = Some(RepoDir::parse(&value).map_err(describe)?),
        FlagKind::Workspace => {
            command.workspace = Some(Workspace::parse(&value).map_err(describe)?);
        }
    }
    Ok(())
}

/// `--auto-merge-method`: one of the merge methods both forges take.
fn merge_method(value: &str) -> Result<crate::repocfg::MergeMethod, String> {
    use crate::repocfg::MergeMethod;
    [MergeMethod::Merge, MergeMethod::Squash, MergeMethod::Rebase]
        .into_iter()
        .find(|m| m.as_str() == value)
        .ok_or_else(|| {
            format!(
                "`--auto-merge-method` is `merge`, `squash` or `rebase`, not `{}`",
                shown(value)
            )
        })
}

/// A policy set's name as the server configuration allows them (`policies::settings`).
fn policy_set_name(value: &str) -> Result<String, String> {
    let ok = !value.is_empty()
        && value.len() <= 64
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(value.to_owned())
    } else {
        Err(format!(
            "`{}` is not a policy set name (letters, digits, `-`, `_` and `.`, at most 64)",
            shown(value)
        ))
    }
}

fn describe(error: NameError) -> String {
    error.to_string()
}

/// Checks the rules that span flags.
fn finish(command: Command) -> Result<Command, Reply> {
    if command.project.is_some()
        && (command.dir.is_some() || command.dir_glob.is_some() || command.workspace.is_some())
    {
        let message = "`-p` cannot be combined with `-d` or `-w`: a project already names its \
                       directory and workspace; use `-p NAME` or `-d DIR [-w WORKSPACE]`";
        return Err(error(message.to_owned(), Usage::Verb(command.verb)));
    }
    if command.auto_merge_disabled && command.auto_merge_method.is_some() {
        // Atlantis's words (comment_parser.go).
        let message = "cannot use --auto-merge-method at the same time as --auto-merge-disabled";
        return Err(error(message.to_owned(), Usage::Verb(command.verb)));
    }
    if command.dir_glob.is_some() && !matches!(command.verb, Verb::Plan | Verb::Apply) {
        let message = format!(
            "`-d` takes a glob pattern only with `plan` and `apply`; `{}` needs a directory \
             written out (it runs in one project)",
            command.verb
        );
        return Err(error(message, Usage::Verb(command.verb)));
    }
    Ok(command)
}
