//! The merged settings tree (YAML, then `ATOLL_*` environment variables) and a reader that walks
//! it by key path, collecting every problem instead of stopping at the first.

use std::collections::{BTreeMap, BTreeSet};

use secrecy::SecretString;
use serde_yaml_ng::{Mapping, Value};

use super::Problem;

const ENV_PREFIX: &str = "ATOLL_";

/// `ATOLL_*` variables that are not settings (the command line reads `ATOLL_CONFIG`).
const NOT_SETTINGS: [&str; 1] = ["CONFIG"];

/// The YAML document with environment overrides applied, and where each override came from.
#[derive(Debug, Default)]
pub(super) struct Tree {
    root: Mapping,
    /// Key path -> environment variable that set it, for error messages.
    origins: BTreeMap<String, String>,
    /// `ATOLL_*` variables that do not map onto a key path (reported as warnings).
    pub(super) stray_env: Vec<String>,
}

impl Tree {
    /// Parses the YAML text (an empty document is an empty mapping).
    pub(super) fn from_yaml(text: &str) -> Result<Self, Problem> {
        let value: Value = serde_yaml_ng::from_str(text)
            .map_err(|e| Problem::new("(file)", format!("not valid YAML: {e}")))?;
        let root = match value {
            Value::Null => Mapping::new(),
            Value::Mapping(m) => m,
            _ => {
                return Err(Problem::new(
                    "(file)",
                    "the top level must be a mapping of keys",
                ));
            }
        };
        Ok(Self {
            root,
            ..Self::default()
        })
    }

    /// Applies `ATOLL_A__B=value` as key `a.b` (a string; the reader converts it).
    pub(super) fn apply_env<'a>(&mut self, vars: impl IntoIterator<Item = (&'a str, &'a str)>) {
        for (name, value) in vars {
            let Some(rest) = name.strip_prefix(ENV_PREFIX) else {
                continue;
            };
            if NOT_SETTINGS.contains(&rest) {
                continue;
            }
            let segments: Vec<String> = rest.split("__").map(str::to_ascii_lowercase).collect();
            if segments.iter().any(String::is_empty) {
                self.stray_env.push(name.to_owned());
                continue;
            }
            let path = segments.join(".");
            set_path(&mut self.root, &segments, Value::String(value.to_owned()));
            self.origins.insert(path, name.to_owned());
        }
    }

    /// Sets `path` from a variable outside the `ATOLL_` scheme unless the key is already set.
    pub(super) fn fallback(&mut self, path: &str, var: &str, value: &str) {
        let segments: Vec<String> = path.split('.').map(str::to_owned).collect();
        if lookup(&self.root, path).is_none() {
            set_path(&mut self.root, &segments, Value::String(value.to_owned()));
            self.origins.insert(path.to_owned(), var.to_owned());
        }
    }

    /// Every leaf key path in the tree (`a.b.c`).
    fn all_leaf_paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        collect_paths(&self.root, "", &mut out);
        out
    }
}

fn set_path(root: &mut Mapping, segments: &[String], value: Value) {
    let Some((last, parents)) = segments.split_last() else {
        return;
    };
    let mut node = root;
    for seg in parents {
        let key = Value::String(seg.clone());
        let entry = node
            .entry(key)
            .or_insert_with(|| Value::Mapping(Mapping::new()));
        if !entry.is_mapping() {
            *entry = Value::Mapping(Mapping::new());
        }
        let Value::Mapping(m) = entry else { return };
        node = m;
    }
    node.insert(Value::String(last.clone()), value);
}

fn lookup<'a>(root: &'a Mapping, path: &str) -> Option<&'a Value> {
    let mut node = root;
    let mut segments = path.split('.').peekable();
    while let Some(seg) = segments.next() {
        let value = node.get(seg)?;
        if segments.peek().is_none() {
            return Some(value);
        }
        node = value.as_mapping()?;
    }
    None
}

fn collect_paths(map: &Mapping, prefix: &str, out: &mut Vec<String>) {
    for (key, value) in map {
        let key = match key {
            Value::String(s) => s.clone(),
            other => format!("{other:?}"),
        };
        let path = if prefix.is_empty() {
            key
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            Value::Mapping(inner) if !inner.is_empty() => collect_paths(inner, &path, out),
            _ => out.push(path),
        }
    }
}

/// Reads typed values out of a [`Tree`], remembering every key it was asked about and every
/// problem it found.
#[derive(Debug)]
pub(super) struct Reader<'t> {
    tree: &'t Tree,
    known: BTreeSet<String>,
    pub(super) problems: Vec<Problem>,
    pub(super) warnings: Vec<String>,
}

impl<'t> Reader<'t> {
    pub(super) fn new(tree: &'t Tree) -> Self {
        Self {
            tree,
            known: BTreeSet::new(),
            problems: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// The path as shown to the user: the key, plus the variable that set it if any.
    pub(super) fn label(&self, path: &str) -> String {
        match self.tree.origins.get(path) {
            Some(var) => format!("{path} (from {var})"),
            None => path.to_owned(),
        }
    }

    pub(super) fn problem(&mut self, path: &str, message: impl Into<String>) {
        let label = self.label(path);
        self.problems.push(Problem::new(label, message));
    }

    pub(super) fn warn(&mut self, message: impl Into<String>) {
        self.warnings.push(message.into());
    }

    /// Whether a problem was already reported for `path`.
    pub(super) fn has_problem_at(&self, path: &str) -> bool {
        let label = self.label(path);
        self.problems.iter().any(|p| p.path == label)
    }

    /// Every key path asked about so far.
    pub(super) fn known_keys(&self) -> Vec<String> {
        self.known.iter().cloned().collect()
    }

    /// The raw value at `path`; `null` counts as absent.
    pub(super) fn raw(&mut self, path: &str) -> Option<&'t Value> {
        self.known.insert(path.to_owned());
        lookup(&self.tree.root, path).filter(|v| !v.is_null())
    }

    pub(super) fn opt_string(&mut self, path: &str) -> Option<String> {
        match self.raw(path)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => {
                self.problem(path, "expected a string");
                None
            }
        }
    }

    pub(super) fn string(&mut self, path: &str, default: &str) -> String {
        self.opt_string(path).unwrap_or_else(|| default.to_owned())
    }

    pub(super) fn bool(&mut self, path: &str, default: bool) -> bool {
        match self.raw(path) {
            None => default,
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" => true,
                "false" | "0" | "no" => false,
                _ => {
                    self.problem(path, format!("expected true or false, got {s:?}"));
                    default
                }
            },
            Some(_) => {
                self.problem(path, "expected true or false");
                default
            }
        }
    }

    /// An unsigned integer within `min..=max`.
    pub(super) fn uint(&mut self, path: &str, default: u64, min: u64, max: u64) -> u64 {
        let parsed = match self.raw(path) {
            None => return default,
            Some(Value::Number(n)) => n.as_u64(),
            Some(Value::String(s)) => s.trim().parse::<u64>().ok(),
            Some(_) => None,
        };
        match parsed {
            Some(n) if (min..=max).contains(&n) => n,
            _ => {
                self.problem(path, format!("expected a whole number from {min} to {max}"));
                default
            }
        }
    }

    /// A list of strings: a YAML sequence, or a comma-separated string (environment form).
    pub(super) fn strings(&mut self, path: &str) -> Vec<String> {
        match self.raw(path) {
            None => Vec::new(),
            Some(Value::String(s)) => s
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            Some(Value::Sequence(items)) => {
                let mut out = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(s) => out.push(s.clone()),
                        _ => self.problem(&format!("{path}[{i}]"), "expected a string"),
                    }
                }
                out
            }
            Some(_) => {
                self.problem(path, "expected a list of strings");
                Vec::new()
            }
        }
    }

    /// A secret from `path`, or from the file named by `path_file` (trailing newline dropped).
    /// Setting both, an empty value, or an unreadable file is a problem.
    pub(super) fn secret(&mut self, path: &str) -> Option<SecretString> {
        let file_path = format!("{path}_file");
        let inline = self.opt_string(path);
        let file = self.opt_string(&file_path);
        let value = match (inline, file) {
            (Some(_), Some(_)) => {
                self.problem(path, format!("set either {path} or {file_path}, not both"));
                return None;
            }
            (Some(v), None) => v,
            (None, Some(f)) => match std::fs::read_to_string(&f) {
                Ok(text) => text.trim_end_matches(['\n', '\r']).to_owned(),
                Err(e) => {
                    self.problem(&file_path, format!("cannot read secret file {f:?}: {e}"));
                    return None;
                }
            },
            (None, None) => return None,
        };
        if value.trim().is_empty() {
            self.problem(path, "is empty; an empty secret protects nothing");
            return None;
        }
        Some(SecretString::from(value))
    }

    /// Every key in the tree the reader never asked about: a typo or an unsupported setting
    /// (an error in the file, a warning when it came from the environment).
    pub(super) fn report_unknown_keys(&mut self) {
        for path in self.tree.all_leaf_paths() {
            let known = self.known.iter().any(|k| {
                path == *k
                    || path.starts_with(&format!("{k}."))
                    || k.starts_with(&format!("{path}."))
            });
            if known {
                continue;
            }
            if let Some(var) = self.tree.origins.get(&path) {
                // The environment holds more than atoll's settings (e.g. test variables).
                self.warnings
                    .push(format!("{var}: ignored, atoll has no key {path}"));
            } else {
                let hint = did_you_mean(&path, &self.known);
                self.problem(&path, format!("unknown key{hint}"));
            }
        }
    }
}

fn did_you_mean(path: &str, known: &BTreeSet<String>) -> String {
    known
        .iter()
        .map(|k| (edit_distance(path, k), k))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, k)| format!("; did you mean {k}?"))
        .unwrap_or_default()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}
