//! Files and the module tree: every `*.tf` of a directory (Terraform's ignore rules), parsed with
//! `hcl-edit`, decoded and merged into one module; local module sources loaded recursively,
//! confined to the checkout, with cycles and depth bounded. Each module directory is read and
//! parsed once however many calls use it (the tree shares it), and every read goes through the
//! load's [`CheckoutReader`], so files, bytes and directories are bounded before evaluation.

mod json;

use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use super::checkout::CheckoutReader;
use super::config::{Module, decode_file};
use super::diag::{Diagnostic, SourceMap, Span};
use super::funcs::file::normalize;
use super::remote::{Installed, ModuleRequest, RemoteModules, is_local};

/// Deepest module nesting followed.
const MAX_MODULE_DEPTH: usize = 16;

/// A module and the modules it calls. A module directory called from several places is one
/// shared tree.
#[derive(Debug)]
pub(crate) struct ModuleTree {
    /// `path.module`: the module directory relative to the root module (`.` for the root).
    pub(crate) rel: String,
    pub(crate) config: Module,
    pub(crate) children: BTreeMap<String, Rc<ModuleTree>>,
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

/// Loads the module tree rooted at `root` (canonical, inside the reader's checkout), remote
/// calls from `remote`. Also returns the remote calls that `remote` does not answer.
pub(crate) fn load_tree(
    reader: &CheckoutReader,
    root: &Path,
    remote: &RemoteModules,
    sources: &mut SourceMap,
    diags: &mut Vec<Diagnostic>,
) -> (ModuleTree, Vec<ModuleRequest>) {
    let mut loader = Loader {
        reader,
        root,
        remote,
        missing: Vec::new(),
        stack: Vec::new(),
        loaded: HashMap::new(),
        sources,
        diags,
    };
    let tree = loader.dir(root);
    (tree, loader.missing)
}

/// One load of a module tree: the directories being loaded (for cycles) and those loaded.
struct Loader<'a> {
    reader: &'a CheckoutReader,
    root: &'a Path,
    remote: &'a RemoteModules,
    /// Remote calls met that `remote` does not answer, in the order met, once each.
    missing: Vec<ModuleRequest>,
    stack: Vec<PathBuf>,
    loaded: HashMap<PathBuf, Rc<ModuleTree>>,
    sources: &'a mut SourceMap,
    diags: &'a mut Vec<Diagnostic>,
}

impl Loader<'_> {
    fn dir(&mut self, dir: &Path) -> ModuleTree {
        let rel = relative(self.root, dir);
        let mut config = Module::default();
        let prefix = if rel == "." {
            String::new()
        } else {
            format!("{rel}/")
        };
        if let Err(e) = self.reader.count_entry() {
            self.diags.push(Diagnostic::error(
                "Too many files",
                format!(
                    "The module directory {:?} was not read: {e}.",
                    display_dir(&prefix)
                ),
                None,
            ));
            return ModuleTree {
                rel,
                config,
                children: BTreeMap::new(),
            };
        }
        self.stack.push(dir.to_path_buf());
        for name in list_files(dir, &prefix, self.diags) {
            let display = format!("{prefix}{name}");
            self.file(&dir.join(&name), display, &mut config);
        }
        let children = self.children(dir, &mut config);
        self.stack.pop();
        ModuleTree {
            rel,
            config,
            children,
        }
    }

    /// The modules `config` calls, each directory loaded once; calls that cannot be loaded are
    /// removed (their diagnostic says why).
    fn children(&mut self, dir: &Path, config: &mut Module) -> BTreeMap<String, Rc<ModuleTree>> {
        let mut children = BTreeMap::new();
        let calls: Vec<(String, String, Option<String>, Span)> = config
            .calls
            .values()
            .map(|c| {
                let version = c.version.clone();
                (
                    c.name.clone(),
                    c.source.clone(),
                    version,
                    c.source_span.clone(),
                )
            })
            .collect();
        for (name, source, version, span) in calls {
            let call = Call {
                dir,
                name: &name,
                source: &source,
                version: version.as_deref(),
                span: &span,
            };
            let resolved = if is_local(&source) {
                resolve_source(self.reader.root(), &call, &self.stack, self.diags)
            } else {
                self.remote(&call)
            };
            let Some(child_dir) = resolved else {
                config.calls.remove(&name);
                config.refused_calls.insert(name);
                continue;
            };
            let child = match self.loaded.get(&child_dir) {
                Some(done) => Rc::clone(done),
                None => {
                    let tree = Rc::new(self.dir(&child_dir));
                    self.loaded.insert(child_dir, Rc::clone(&tree));
                    tree
                }
            };
            children.insert(name, child);
        }
        children
    }

    /// The installed directory of a remote call, confined to the checkout; a refused or
    /// missing installation is a diagnostic (and a missing one is remembered).
    fn remote(&mut self, call: &Call<'_>) -> Option<PathBuf> {
        let request = ModuleRequest {
            source: call.source.to_owned(),
            version: call.version.map(str::to_owned),
        };
        let error = |summary: &str, detail: String| {
            Diagnostic::error(summary, detail, Some(call.span.clone()))
        };
        match self.remote.get(&request) {
            Some(Installed::Dir(dir)) => {
                let real = dir.canonicalize().unwrap_or_else(|_| dir.clone());
                if !real.starts_with(self.reader.root()) || !real.is_dir() {
                    self.diags.push(error("Module not installed", format!("Module \"{}\" was installed outside the checkout or its directory is gone; plan again.", call.name)));
                    return None;
                }
                if self.stack.contains(&real) {
                    self.diags.push(error("Module cycle", format!("Module \"{}\" calls {:?}, which is already being loaded: modules may not call themselves, directly or indirectly.", call.name, call.source)));
                    return None;
                }
                if self.stack.len() >= MAX_MODULE_DEPTH {
                    self.diags.push(error(
                        "Module nesting too deep",
                        format!(
                            "Modules may be nested at most {MAX_MODULE_DEPTH} levels deep in atoll."
                        ),
                    ));
                    return None;
                }
                Some(real)
            }
            Some(Installed::Refused { summary, detail }) => {
                self.diags.push(error(summary, detail.clone()));
                None
            }
            None => {
                self.diags.push(error("Module not installed", format!("Module \"{}\" uses the remote source {:?}, which was not installed before this load: atoll validate, atoll plan and a pull request's plan install remote modules first, from the hosts and registries the modules: settings allow.", call.name, call.source)));
                if !self.missing.contains(&request) {
                    self.missing.push(request);
                }
                None
            }
        }
    }

    /// Reads, parses and decodes one file into `config` (JSON syntax converted first).
    fn file(&mut self, path: &Path, display: String, config: &mut Module) {
        let json = display.ends_with(".json");
        let converted = self
            .reader
            .read_text(path)
            .map_err(|e| e.to_string())
            .and_then(|t| {
                if json {
                    json::to_native(&t)
                        .map_err(|e| format!("it is not valid Terraform JSON syntax: {e}"))
                } else {
                    Ok(t)
                }
            });
        let text = match converted {
            Ok(t) => t,
            Err(why) => {
                self.diags.push(Diagnostic::error(
                    "Failed to read file",
                    format!("The configuration file {display:?} could not be read: {why}."),
                    None,
                ));
                return;
            }
        };
        let file = self.sources.add(display, text);
        if let Err(deep) = crate::nesting::check(self.sources.text(file)) {
            let diag = crate::nesting::diagnostic("Invalid HCL syntax", file, deep);
            self.diags.push(diag);
            return;
        }
        let text = self.sources.text(file);
        match hcl_edit::parser::parse_body(text) {
            Ok(mut body) => {
                crate::heredoc::flush_body(&mut body, text);
                decode_file(config, file, &body, self.sources, self.diags);
            }
            Err(e) => {
                let off = e.location().offset();
                self.diags.push(Diagnostic::error(
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
}

fn display_dir(prefix: &str) -> &str {
    if prefix.is_empty() {
        "."
    } else {
        prefix.trim_end_matches('/')
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The configuration files of a directory, sorted: `.tf` and `.tf.json`, and OpenTofu's `.tofu`
/// and `.tofu.json`, where `x.tofu` takes the place of `x.tf` (and `x.tofu.json` of `x.tf.json`)
/// as OpenTofu reads them. Override files are reported.
fn list_files(dir: &Path, prefix: &str, diags: &mut Vec<Diagnostic>) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        diags.push(Diagnostic::error(
            "Failed to read module directory",
            format!(
                "Module directory {:?} does not exist or cannot be read.",
                display_dir(prefix)
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
    let present: std::collections::BTreeSet<&str> = names.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    for n in &names {
        let Some((stem, tofu_twin)) = config_stem(n) else {
            continue;
        };
        if tofu_twin
            .as_deref()
            .is_some_and(|twin| present.contains(twin))
        {
            continue;
        }
        if stem == "override" || stem.ends_with("_override") {
            diags.push(Diagnostic::error("Override files are not supported", format!("atoll does not merge override files; fold the contents of \"{prefix}{n}\" into the primary configuration files."), None));
        } else {
            out.push(n.clone());
        }
    }
    out
}

/// A configuration file's stem (`main` of `main.tf.json`) and, for a Terraform file, the
/// OpenTofu file that would take its place (`main.tofu.json`); `None` for other files.
fn config_stem(name: &str) -> Option<(&str, Option<String>)> {
    for (ext, twin) in [
        (".tf", Some(".tofu")),
        (".tf.json", Some(".tofu.json")),
        (".tofu", None),
        (".tofu.json", None),
    ] {
        if let Some(stem) = name.strip_suffix(ext) {
            return Some((stem, twin.map(|t| format!("{stem}{t}"))));
        }
    }
    None
}

/// One module call being resolved.
struct Call<'a> {
    /// The calling module's directory.
    dir: &'a Path,
    name: &'a str,
    source: &'a str,
    version: Option<&'a str>,
    span: &'a Span,
}

/// The canonical directory of a call's source, confined to the checkout, or a diagnostic.
fn resolve_source(
    checkout: &Path,
    call: &Call<'_>,
    stack: &[PathBuf],
    diags: &mut Vec<Diagnostic>,
) -> Option<PathBuf> {
    let Call {
        dir,
        name,
        source,
        version,
        span,
    } = *call;
    let err = |summary: &str, detail: String, diags: &mut Vec<Diagnostic>| {
        diags.push(Diagnostic::error(summary, detail, Some(span.clone())));
        None
    };
    if version.is_some() {
        return err(
            "Invalid registry module source address",
            format!(
                "Cannot apply a version constraint to module \"{name}\" because it has a relative local path."
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
