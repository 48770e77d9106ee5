//! Plain-text usage and replies: the minimal wording the grammar owns. `render` decides the
//! final layout (Markdown, escaping); this text is a fallback and a source for it.

use std::fmt;

use super::{Command, Reply, ResourceArgs, Usage, Verb};

impl Verb {
    /// One synopsis line, e.g. `atlantis plan [-p NAME | [-d DIR] [-w WORKSPACE]] [--verbose]`.
    pub fn synopsis(self) -> String {
        let flags = self.flags();
        let mut line = format!("atlantis {self}");
        match self {
            Verb::Import => line.push_str(" ADDRESS ID"),
            Verb::StateRm => line.push_str(" rm ADDRESS..."),
            _ => {}
        }
        let has = |long: &str| flags.iter().any(|f| f.long == long);
        if has("project") {
            line.push_str(" [-p NAME | [-d DIR] [-w WORKSPACE]]");
        }
        if has("policy-set") {
            line.push_str(" [--policy-set NAME] [--clear-policy-approval]");
        }
        if has("verbose") {
            line.push_str(" [--verbose]");
        }
        if self == Verb::Plan {
            line.push_str(" [-- -target=ADDRESS ...]");
        }
        if self == Verb::Help {
            line.push_str(" [COMMAND]");
        }
        line
    }
}

impl Command {
    /// The comment that runs this command, e.g. `atlantis plan -d 'my dir' -w staging`: what a
    /// reply tells a user to write (a lock conflict's re-plan line). Values are quoted when
    /// needed so that `parse` gives this command back.
    pub fn to_comment(&self, executable: &str) -> String {
        let mut text = format!("{executable} {}", self.verb);
        match &self.resources {
            Some(ResourceArgs::Import { address, id }) => {
                text.push_str(&format!(
                    " {} {}",
                    quote(address.as_str()),
                    quote(id.as_str())
                ));
            }
            Some(ResourceArgs::Remove { addresses }) => {
                text.push_str(" rm");
                for address in addresses {
                    text.push_str(&format!(" {}", quote(address.as_str())));
                }
            }
            None => {}
        }
        if let Some(project) = &self.project {
            text.push_str(&valued("-p", "project", project.as_str()));
        }
        if let Some(dir) = &self.dir {
            text.push_str(&valued("-d", "dir", dir.as_str()));
        }
        if let Some(glob) = &self.dir_glob {
            text.push_str(&valued("-d", "dir", glob));
        }
        if let Some(workspace) = &self.workspace {
            text.push_str(&valued("-w", "workspace", workspace.as_str()));
        }
        if let Some(set) = &self.policy_set {
            text.push_str(&valued("--policy-set", "policy-set", set));
        }
        if self.clear_policy_approval {
            text.push_str(" --clear-policy-approval");
        }
        if self.auto_merge_disabled {
            text.push_str(" --auto-merge-disabled");
        }
        if let Some(method) = self.auto_merge_method {
            text.push_str(&format!(" --auto-merge-method {}", method.as_str()));
        }
        if self.verbose {
            text.push_str(" --verbose");
        }
        let args = self.options.to_args();
        if !args.is_empty() {
            text.push_str(" --");
            for arg in &args {
                text.push(' ');
                text.push_str(&quote(arg));
            }
        }
        text
    }
}

/// ` FLAG VALUE`, or ` --LONG=VALUE` when the value starts with `-`: the parser takes a separate
/// word starting with `-` for a missing value, so such a value is written inline.
fn valued(flag: &str, long: &str, value: &str) -> String {
    if value.starts_with('-') {
        format!(" --{long}={}", quote(value))
    } else {
        format!(" {flag} {}", quote(value))
    }
}

/// `value` as one shell-style word: bare when it only has safe characters, else single-quoted.
fn quote(value: &str) -> String {
    let safe = |c: char| {
        c.is_ascii_alphanumeric()
            || matches!(c, '.' | '_' | '-' | '/' | '+' | ':' | '@' | ',' | '=')
    };
    if !value.is_empty() && value.chars().all(safe) {
        return value.to_owned();
    }
    format!("'{}'", value.replace('\'', r"'\''"))
}

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Usage::Commands => {
                writeln!(f, "Commands:")?;
                for verb in Verb::ALL {
                    writeln!(f, "  {}\n      {}", verb.synopsis(), verb.summary())?;
                }
                Ok(())
            }
            Usage::Verb(verb) => {
                writeln!(f, "Usage: {}", verb.synopsis())?;
                for flag in verb.flags() {
                    let short = flag.short.map(|c| format!("-{c}, ")).unwrap_or_default();
                    let value = flag.value.map(|v| format!(" {v}")).unwrap_or_default();
                    let name = format!("{short}--{}{value}", flag.long);
                    writeln!(f, "  {name:<26} {}", flag.help)?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for Reply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::Help { verb } => write!(f, "{}", Usage::Verb(*verb)),
            Reply::Error { message, usage } => write!(f, "Error: {message}.\n\n{usage}"),
            Reply::DidYouMean { suggestion, .. } => write!(f, "Did you mean `{suggestion}`?"),
            Reply::NotAllowed { verb, allowed } => {
                let names: Vec<&str> = allowed.iter().map(|v| v.as_str()).collect();
                write!(
                    f,
                    "Error: `{verb}` is not allowed on this server.\nAllowed commands \
                     (commands.allow_commands): {}.\nThe operator can allow it in the server's \
                     configuration; run `atlantis help` for the commands this server runs.",
                    names.join(", ")
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verb_usage_lists_every_flag() {
        let text = Usage::Verb(Verb::Plan).to_string();
        assert!(
            text.starts_with(
                "Usage: atlantis plan [-p NAME | [-d DIR] [-w WORKSPACE]] [--verbose]"
            )
        );
        for needle in [
            "-p, --project NAME",
            "-d, --dir DIR",
            "-w, --workspace WORKSPACE",
            "--verbose",
        ] {
            assert!(text.contains(needle), "{needle} missing from {text}");
        }
        assert!(!Usage::Verb(Verb::Unlock).to_string().contains("--verbose"));
    }

    #[test]
    fn a_plan_with_extra_arguments_is_written_back_with_them_and_parses_to_itself() {
        let grammar = crate::commands::Grammar::default();
        let written = "atlantis plan -d envs/dev -- -target=proxmox_virtual_environment_container.web \
                       '-replace=module.ct[\"a b\"].proxmox_virtual_environment_container.ct' \
                       -destroy -var 'name=two words' -var-file=prod.tfvars";
        let crate::commands::Parsed::Run(command) = crate::commands::parse(written, &grammar)
        else {
            panic!("{written} does not parse");
        };
        let again = command.to_comment("atlantis");
        assert!(
            again.contains("-- -target=proxmox_virtual_environment_container.web"),
            "{again}"
        );
        assert!(again.contains("'-var=name=two words'"), "{again}");
        assert_eq!(
            crate::commands::parse(&again, &grammar),
            crate::commands::Parsed::Run(command),
            "{again}"
        );
    }

    #[test]
    fn a_value_starting_with_a_dash_is_written_inline_and_parses_back() {
        // found by `commands_props`: `-d '-d=x'` reads `-d=x` as a missing value
        let grammar = crate::commands::Grammar::default();
        let crate::commands::Parsed::Run(command) =
            crate::commands::parse("atlantis plan --dir=-d=module.m.a.b[k]", &grammar)
        else {
            panic!("does not parse");
        };
        let again = command.to_comment("atlantis");
        assert_eq!(again, "atlantis plan --dir='-d=module.m.a.b[k]'");
        assert_eq!(
            crate::commands::parse(&again, &grammar),
            crate::commands::Parsed::Run(command)
        );
    }

    #[test]
    fn comments_quote_values_only_when_needed() {
        assert_eq!(quote("envs/dev"), "envs/dev");
        assert_eq!(quote("my dir"), "'my dir'");
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("$(id)"), "'$(id)'");
    }

    #[test]
    fn command_list_names_every_command() {
        let text = Usage::Commands.to_string();
        for verb in Verb::ALL {
            assert!(
                text.contains(&format!("atlantis {verb}")),
                "{verb} missing from {text}"
            );
        }
    }

    #[test]
    fn error_reply_shows_message_then_usage() {
        let reply = Reply::Error {
            message: "unknown command `x`".to_owned(),
            usage: Usage::Commands,
        };
        assert!(
            reply
                .to_string()
                .starts_with("Error: unknown command `x`.\n\nCommands:\n")
        );
        let hint = Reply::DidYouMean {
            typed: "terraform".to_owned(),
            suggestion: "atlantis plan".to_owned(),
        };
        assert_eq!(hint.to_string(), "Did you mean `atlantis plan`?");
    }
}

#[cfg(test)]
mod auto_merge_tests {
    use crate::commands::{Grammar, Parsed, Reply, Verb, parse};
    use crate::repocfg::MergeMethod;

    fn run(text: &str) -> Parsed {
        parse(text, &Grammar::default())
    }

    #[test]
    fn apply_takes_atlantis_auto_merge_flags_and_writes_them_back() {
        let Parsed::Run(off) = run("atlantis apply --auto-merge-disabled") else {
            panic!("--auto-merge-disabled");
        };
        assert!(off.auto_merge_disabled);
        assert_eq!(
            off.to_comment("atlantis"),
            "atlantis apply --auto-merge-disabled"
        );
        let Parsed::Run(rebase) = run("atlantis apply -p web --auto-merge-method rebase") else {
            panic!("--auto-merge-method");
        };
        assert_eq!(rebase.auto_merge_method, Some(MergeMethod::Rebase));
        let again = rebase.to_comment("atlantis");
        assert_eq!(run(&again), Parsed::Run(rebase), "{again}");
    }

    #[test]
    fn auto_merge_flags_are_refused_together_elsewhere_and_with_an_unknown_method() {
        for (text, needle) in [
            (
                "atlantis apply --auto-merge-disabled --auto-merge-method squash",
                "cannot use --auto-merge-method at the same time as --auto-merge-disabled",
            ),
            (
                "atlantis apply --auto-merge-method fast-forward",
                "`merge`, `squash` or `rebase`",
            ),
            ("atlantis plan --auto-merge-disabled", "unknown flag"),
        ] {
            match run(text) {
                Parsed::Reply(Reply::Error { message, .. }) => {
                    assert!(message.contains(needle), "{text}: {message}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
        assert!(
            Verb::Apply
                .flags()
                .iter()
                .any(|f| f.long == "auto-merge-method")
        );
    }
}
