//! Comment text to typed commands. Pure: parses `atlantis plan -d dir` and friends into values
//! (`Parsed::Run(Command)`), answers help requests and mistakes with typed replies
//! (`Parsed::Reply`), and ignores everything else. It never shells out, never formats Markdown
//! (that is `render`'s job) and never panics on any input.
//!
//! The pipeline, after Atlantis's `comment_parser.go` (reference/atlantis.md 1.2):
//! 1. trim whitespace and surrounding backticks; a comment with more than one line is ignored;
//! 2. the first word, lower-cased, must be `atlantis`, `run` (as Atlantis accepts it), the configured name
//!    or `@<bot user>`;
//!    `terraform <command>` and near misses of the name (edit distance <= 2) followed by a
//!    known command get a did-you-mean, anything else is ignored;
//! 3. the rest is split shell-style (quotes, backslashes; no expansion) and parsed into a verb
//!    and its flags; names are validated into `RepoDir`, `Workspace` and `ProjectName`;
//! 4. after `--`, `plan` takes the Terraform flags atoll's engine honours (`extra`);
//! 5. `import ADDRESS ID` and `state rm ADDRESS...` take their words as `resources`;
//! 6. a command the server does not allow (`allowed`) is answered instead of run.

mod allowed;
mod extra;
mod grammar;
mod lexer;
mod parser;
mod resources;
mod usage;

use serde::{Deserialize, Serialize};

pub use allowed::{AllowedCommands, DEFAULT_ALLOW_COMMANDS};
pub(crate) use extra::parse_in as parse_extra_args;
pub use extra::{ACCEPTED as ACCEPTED_EXTRA, MAX_EXTRA_WORD_LEN, MAX_EXTRA_WORDS};
pub use grammar::Grammar;
pub use resources::{ImportId, MAX_IMPORT_ID_LEN, MAX_STATE_RM_ADDRESSES, ResourceArgs};
// The name newtypes are the model's; commands validates comments into them.
pub use model::{NameError, PlanOptions, ProjectName, RepoDir, ResourceAddress, VarArg, Workspace};
pub use parser::parse;

/// A user-supplied value as it may be echoed in an error: control characters replaced, at most
/// 64 characters. For other pure modules that quote names back (e.g. `repocfg`).
pub(crate) fn shown_value(raw: &str) -> String {
    model::shown_value(raw)
}

/// True for control characters and invisible or bidirectional formatting characters, which no
/// name or pattern may contain.
pub(crate) fn is_hidden_char(c: char) -> bool {
    model::is_hidden_char(c)
}

/// What a comment means to atoll.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "body", rename_all = "snake_case")]
#[allow(
    clippy::large_enum_variant,
    reason = "a comment is parsed once and the command moved into its job; boxing would only add an allocation"
)]
pub enum Parsed {
    /// Not addressed to atoll: do nothing, say nothing.
    Ignore,
    /// Addressed to atoll, but answered with a reply instead of a job.
    Reply(Reply),
    /// A command to run.
    Run(Command),
}

/// A reply to a comment that is not a runnable command. `render` turns it into text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reply {
    /// `atlantis plan --help` or `atlantis help plan`: the usage of one command.
    Help { verb: Verb },
    /// The comment was meant for atoll but is wrong. `message` is one plain sentence that names
    /// the offending word (made printable and shortened); `usage` says which usage to show.
    Error { message: String, usage: Usage },
    /// `terraform plan`, `atlantos plan`: `typed` is the first word as written, `suggestion`
    /// the command to use instead (e.g. `atlantis plan`).
    DidYouMean { typed: String, suggestion: String },
    /// A command this server does not run (`commands.allow_commands`); `allowed` lists
    /// those it does.
    NotAllowed { verb: Verb, allowed: Vec<Verb> },
}

/// Which usage text belongs with an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "verb", rename_all = "snake_case")]
pub enum Usage {
    /// The list of commands.
    Commands,
    /// The flags of one command.
    Verb(Verb),
}

/// A parsed command. `project` excludes `dir` and `workspace` (the parser refuses both).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Command {
    pub verb: Verb,
    pub project: Option<ProjectName>,
    pub dir: Option<RepoDir>,
    pub workspace: Option<Workspace>,
    pub verbose: bool,
    /// `-d` written as a glob (`-d 'envs/*'`), checked by `repocfg::DirGlob`; `dir` is then
    /// `None`. Atlantis runs every project whose directory matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir_glob: Option<String>,
    /// The Terraform flags after `--` (`plan` only).
    #[serde(default, skip_serializing_if = "PlanOptions::is_empty")]
    pub options: PlanOptions,
    /// What `import` and `state rm` act on (`None` for every other command).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceArgs>,
    /// `approve_policies --policy-set NAME`: only that policy set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_set: Option<String>,
    /// `approve_policies --clear-policy-approval`: drop the approvals instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub clear_policy_approval: bool,
    /// `apply --auto-merge-disabled`: no automerge after this apply.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub auto_merge_disabled: bool,
    /// `apply --auto-merge-method METHOD`: this apply's automerge merges so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_merge_method: Option<crate::repocfg::MergeMethod>,
}

impl Command {
    /// A command with no flags.
    pub fn new(verb: Verb) -> Self {
        Self {
            verb,
            project: None,
            dir: None,
            workspace: None,
            verbose: false,
            dir_glob: None,
            options: PlanOptions::default(),
            resources: None,
            policy_set: None,
            clear_policy_approval: false,
            auto_merge_disabled: false,
            auto_merge_method: None,
        }
    }
}

/// The commands atoll knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verb {
    Plan,
    Apply,
    Unlock,
    Cancel,
    Help,
    Version,
    /// `import ADDRESS ID`.
    Import,
    /// `state rm ADDRESS...` (the word is `state`; `rm` is its one subcommand).
    StateRm,
    /// `approve_policies`: a policy owner approves failing policy sets.
    ApprovePolicies,
}

impl Verb {
    pub const ALL: [Verb; 9] = [
        Verb::Plan,
        Verb::Apply,
        Verb::Unlock,
        Verb::Cancel,
        Verb::Help,
        Verb::Version,
        Verb::Import,
        Verb::StateRm,
        Verb::ApprovePolicies,
    ];

    /// The word that names the command in a comment.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Plan => "plan",
            Self::Apply => "apply",
            Self::Unlock => "unlock",
            Self::Cancel => "cancel",
            Self::Help => "help",
            Self::Version => "version",
            Self::Import => "import",
            Self::StateRm => "state",
            Self::ApprovePolicies => "approve_policies",
        }
    }

    /// The command named by `word` (case-insensitive).
    pub fn from_word(word: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|verb| verb.as_str().eq_ignore_ascii_case(word))
    }

    /// One plain sentence saying what the command does, for help text.
    pub fn summary(self) -> &'static str {
        match self {
            Self::Plan => "plan the projects changed by this pull request, or the ones named",
            Self::Apply => "apply the plans of this pull request, or of the projects named",
            Self::Unlock => "release this pull request's locks and plans, or only those named",
            Self::Cancel => "cancel this pull request's queued commands (running ones finish)",
            Self::Help => "show this help",
            Self::Version => "show the atoll version",
            Self::Import => {
                "take an existing guest or object into atoll's state as ADDRESS (state only: \
                 nothing on the cluster changes)"
            }
            Self::StateRm => "forget resources in atoll's state without touching the cluster",
            Self::ApprovePolicies => {
                "approve the failing policy sets of this pull request's plans, as a policy owner"
            }
        }
    }

    /// The flags the command accepts (besides `-h`/`--help`), for parsing and for usage text.
    pub fn flags(self) -> &'static [Flag] {
        match self {
            Self::Plan | Self::Version | Self::Import | Self::StateRm => {
                &[PROJECT, DIR, WORKSPACE, VERBOSE]
            }
            Self::Apply => &[
                PROJECT,
                DIR,
                WORKSPACE,
                AUTO_MERGE_DISABLED,
                AUTO_MERGE_METHOD,
                VERBOSE,
            ],
            Self::Unlock => &[PROJECT, DIR, WORKSPACE],
            Self::ApprovePolicies => &[
                PROJECT,
                DIR,
                WORKSPACE,
                POLICY_SET,
                CLEAR_POLICY_APPROVAL,
                VERBOSE,
            ],
            Self::Cancel | Self::Help => &[],
        }
    }
}

impl std::fmt::Display for Verb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One command-line flag: `-d DIR`, `--dir DIR`, `--dir=DIR` or `-dDIR`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag {
    pub short: Option<char>,
    pub long: &'static str,
    /// The placeholder of its value (`DIR`), or `None` for a switch.
    pub value: Option<&'static str>,
    pub help: &'static str,
    kind: FlagKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FlagKind {
    Project,
    Dir,
    Workspace,
    Verbose,
    PolicySet,
    ClearPolicyApproval,
    AutoMergeDisabled,
    AutoMergeMethod,
}

const PROJECT: Flag = Flag {
    short: Some('p'),
    long: "project",
    value: Some("NAME"),
    help: "the project of that name in atlantis.yaml; not with -d or -w",
    kind: FlagKind::Project,
};
const DIR: Flag = Flag {
    short: Some('d'),
    long: "dir",
    value: Some("DIR"),
    help: "the project in this directory, relative to the repository root",
    kind: FlagKind::Dir,
};
const WORKSPACE: Flag = Flag {
    short: Some('w'),
    long: "workspace",
    value: Some("WORKSPACE"),
    help: "the Terraform workspace (default: default)",
    kind: FlagKind::Workspace,
};
const POLICY_SET: Flag = Flag {
    short: None,
    long: "policy-set",
    value: Some("NAME"),
    help: "only the policy set of that name",
    kind: FlagKind::PolicySet,
};
const CLEAR_POLICY_APPROVAL: Flag = Flag {
    short: None,
    long: "clear-policy-approval",
    value: None,
    help: "drop the approvals of the failing policy sets instead of approving",
    kind: FlagKind::ClearPolicyApproval,
};
const AUTO_MERGE_DISABLED: Flag = Flag {
    short: None,
    long: "auto-merge-disabled",
    value: None,
    help: "no automerge after this apply",
    kind: FlagKind::AutoMergeDisabled,
};
const AUTO_MERGE_METHOD: Flag = Flag {
    short: None,
    long: "auto-merge-method",
    value: Some("METHOD"),
    help: "how this apply's automerge merges: merge, squash or rebase",
    kind: FlagKind::AutoMergeMethod,
};
const VERBOSE: Flag = Flag {
    short: None,
    long: "verbose",
    value: None,
    help: "include the full log in the reply",
    kind: FlagKind::Verbose,
};
