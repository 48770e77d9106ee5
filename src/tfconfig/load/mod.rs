//! Files and the module tree: every `*.tf` of a directory (Terraform's ignore rules), parsed with
//! `hcl-edit`, decoded and merged into one module; local module sources loaded recursively,
//! confined to the checkout, with cycles and depth bounded.

mod json;

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use super::config::{Module, decode_file};
use super::diag::{Diagnostic, SourceMap, Span};
use super::funcs::file::normalize;

/// Largest configuration file read.
const MAX_TF_FILE: u64 = 4 * 1024 * 1024;
/// Deepest module nesting followed.
const MAX_MODULE_DEPTH: usize = 16;

/// A module and the modules it calls.
#[derive(Debug)]
pub(crate) struct ModuleTree {
    /// `path.module`: the module directory relative to the root module (`.` for the root).
    pub(crate) rel: String,
    pub(crate) config: Module,
    pub(crate) children: BTreeMap<String, ModuleTree>,
}

/// Terraform's `IsIgnoredFile`: dotfiles, editor backups and emacs autosaves.
pub(crate) fn is_ignored(name: &str) -> bool {
    name.starts_with('.') || name.ends_with('~') || (name.starts_with('#') && name.ends_with('#'))
}

/// The path from directory `from` to `to`, both absolute and normalised (`../../modules/lxc`).
pub(crate) fn relative(from: &Path, to: &Path) -> String {
    let f: Vec<Component<'_>> = from.components().collect();
    let t: Vec<Component<'_>> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = std::iter::repeat_n("..".to_owned(), f.len() - common).collect();
    parts.extend(
        t[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

/// Loads the module tree rooted at `root` (canonical, inside the canonical `checkout`).
pub(crate) fn load_tree(
    checkout: &Path,
    root: &Path,
    sources: &mut SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> ModuleTree {
    let mut stack = Vec::new();
    load_dir(checkout, root, root, &mut stack, sources, diags)
}

fn load_dir(
    checkout: &Path,
    root: &Path,
    dir: &Path,
    stack: &mut Vec<PathBuf>,
    sources: &mut SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> ModuleTree {
    let rel = relative(root, dir);
    let mut config = Module::default();
    stack.push(dir.to_path_buf());
    let prefix = if rel == "." {
        String::new()
    } else {
        format!("{rel}/")
    };
    for name in list_files(dir, &prefix, diags) {
        let display = format!("{prefix}{name}");
        load_file(
            checkout,
            &dir.join(&name),
            display,
            &mut config,
            sources,
            diags,
        );
    }
    let mut children = BTreeMap::new();
    let calls: Vec<(String, String, Span)> = config
        .calls
        .values()
        .map(|c| (c.name.clone(), c.source.clone(), c.source_span.clone()))
        .collect();
    for (name, source, span) in calls {
        if let Some(child_dir) = resolve_source(checkout, dir, &name, &source, &span, stack, diags)
        {
            let child = load_dir(checkout, root, &child_dir, stack, sources, diags);
            children.insert(name, child);
        } else {
            config.calls.remove(&name);
        }
    }
    stack.pop();
    ModuleTree {
        rel,
        config,
        children,
    }
}

/// Reads, parses and decodes one file into `config` (JSON syntax converted first).
fn load_file(
    checkout: &Path,
    path: &Path,
    display: String,
    config: &mut Module,
    sources: &mut SourceMap,
    diags: &mut Vec<Diagnostic>,
) {
    let json = display.ends_with(".json");
    let converted = read_limited(checkout, path).and_then(|t| {
        if json {
            json::to_native(&t).map_err(|e| format!("it is not valid Terraform JSON syntax: {e}"))
        } else {
            Ok(t)
        }
    });
    let text = match converted {
        Ok(t) => t,
        Err(why) => {
            diags.push(Diagnostic::error(
                "Failed to read file",
                format!("The configuration file {display:?} could not be read: {why}."),
                None,
            ));
            return;
        }
    };
    let file = sources.add(display, text);
    match hcl_edit::parser::parse_body(sources.text(file)) {
        Ok(body) => decode_file(config, file, &body, sources, diags),
        Err(e) => {
            let off = e.location().offset();
            diags.push(Diagnostic::error(
                "Invalid HCL syntax",
                format!("{}.", capitalise(e.message())),
                Some(Span {
                    file,
                    range: off..off + 1,
                }),
            ));
        }
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// Reads a configuration file, refusing one that is (or passes through) a symlink leading
/// outside the checkout: its text could otherwise be quoted back in a diagnostic.
fn read_limited(checkout: &Path, path: &Path) -> Result<String, String> {
    let real = path.canonicalize().map_err(|e| e.kind().to_string())?;
    if !real.starts_with(checkout) {
        return Err("it is a symbolic link that leads outside the repository checkout".into());
    }
    let meta = std::fs::metadata(path).map_err(|e| e.kind().to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_TF_FILE {
        return Err(format!("larger than {MAX_TF_FILE} bytes"));
    }
    let bytes = std::fs::read(path).map_err(|e| e.kind().to_string())?;
    String::from_utf8(bytes).map_err(|_| "not valid UTF-8".into())
}

/// The `.tf` and `.tf.json` files of a directory, sorted; override files are reported.
fn list_files(dir: &Path, prefix: &str, diags: &mut Vec<Diagnostic>) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        diags.push(Diagnostic::error(
            "Failed to read module directory",
            format!(
                "Module directory {:?} does not exist or cannot be read.",
                if prefix.is_empty() {
                    "."
                } else {
                    prefix.trim_end_matches('/')
                }
            ),
            None,
        ));
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || t.is_symlink()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !is_ignored(n))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for n in names {
        if n.ends_with(".tf") || n.ends_with(".tf.json") {
            let stem = n.trim_end_matches(".json").trim_end_matches(".tf");
            if stem == "override" || stem.ends_with("_override") {
                diags.push(Diagnostic::error("Override files are not supported", format!("atoll does not merge override files; fold the contents of \"{prefix}{n}\" into the primary configuration files."), None));
            } else {
                out.push(n);
            }
        }
    }
    out
}

fn resolve_source(
    checkout: &Path,
    dir: &Path,
    name: &str,
    source: &str,
    span: &Span,
    stack: &[PathBuf],
    diags: &mut Vec<Diagnostic>,
) -> Option<PathBuf> {
    let err = |summary: &str, detail: String, diags: &mut Vec<Diagnostic>| {
        diags.push(Diagnostic::error(summary, detail, Some(span.clone())));
        None
    };
    if !(source.starts_with("./") || source.starts_with("../")) {
        return err(
            "Unsupported module source",
            format!(
                "Module \"{name}\" uses the source {source:?}, but only local module sources are supported: atoll never runs \"terraform init\" to download modules. Use a path starting with \"./\" or \"../\" to a module inside this repository."
            ),
            diags,
        );
    }
    if stack.len() >= MAX_MODULE_DEPTH {
        return err(
            "Module nesting too deep",
            format!("Modules may be nested at most {MAX_MODULE_DEPTH} levels deep in atoll."),
            diags,
        );
    }
    let joined = normalize(&dir.join(source));
    let real = joined.canonicalize().unwrap_or(joined);
    if !real.starts_with(checkout) {
        return err(
            "Module source outside the repository",
            format!(
                "The source {source:?} of module \"{name}\" leaves the repository checkout; atoll loads modules only from inside the checkout."
            ),
            diags,
        );
    }
    if !real.is_dir() {
        return err(
            "Unreadable module directory",
            format!(
                "The directory {source:?} of module \"{name}\" does not exist or cannot be read."
            ),
            diags,
        );
    }
    if stack.contains(&real) {
        return err(
            "Module cycle",
            format!(
                "Module \"{name}\" calls {source:?}, which is already being loaded: modules may not call themselves, directly or indirectly."
            ),
            diags,
        );
    }
    Some(real)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignore_rules_match_terraform() {
        assert!(is_ignored(".hidden.tf"));
        assert!(is_ignored("main.tf~"));
        assert!(is_ignored("#main.tf#"));
        assert!(!is_ignored("main.tf"));
    }

    #[test]
    fn relative_paths_climb_and_descend() {
        assert_eq!(
            relative(
                Path::new("/r/environments/dev"),
                Path::new("/r/modules/lxc")
            ),
            "../../modules/lxc"
        );
        assert_eq!(relative(Path::new("/r/a"), Path::new("/r/a")), ".");
        assert_eq!(relative(Path::new("/r/a"), Path::new("/r/a/b")), "b");
    }
}
