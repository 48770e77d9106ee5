//! The file family (`file`, `fileexists`, `filebase64`, `templatefile`, `fileset`, `file*sha`,
//! `abspath`, `pathexpand`, `dirname`, `basename`), sandboxed to the repository checkout.
//!
//! This is a security boundary: a pull request must never read the server's files into a plan.
//! Absolute paths, `~`, `..` that leaves the checkout, and symlinks that lead outside it are all
//! refused with a diagnostic saying why; files are read through the load's [`CheckoutReader`]
//! (regular files only, capped per file and per load, each file read once).

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use base64::Engine as _;
use hcl_edit::expr::TraversalOperator;
use hcl_edit::template::Template;
use hcl_edit::{Decorated, Ident};

use super::{FnError, FnResult, str_arg};
use crate::checkout::{CheckoutReader, ReadError};
use crate::diag::Diagnostic;
use crate::eval::{Names, Scope};
use crate::value::{Type, Value};

/// Where file functions may read: the checkout, and the root module directory paths are
/// relative to (Terraform's working directory).
#[derive(Debug)]
pub struct Sandbox {
    reader: CheckoutReader,
    checkout: PathBuf,
    base: PathBuf,
    /// The template function whose template is being rendered, if any: templates may not call
    /// template functions, and `templatestring` templates may not read files.
    rendering: Cell<Option<&'static str>>,
    /// `templatefile` sources by resolved path: source id and parsed template.
    templates: RefCell<HashMap<PathBuf, (usize, Rc<Template>)>>,
}

/// Where `abspath` places the checkout: an absolute path that stands for the checkout's root,
/// so the server's own directories never reach a plan, and `file(abspath(...))` reads the file
/// it names.
pub const CHECKOUT_ROOT: &str = "/checkout";

impl Sandbox {
    /// `base` should be canonical and lie inside the reader's checkout.
    pub fn new(reader: CheckoutReader, base: PathBuf) -> Self {
        Sandbox {
            checkout: reader.root().to_path_buf(),
            reader,
            base,
            rendering: Cell::new(None),
            templates: RefCell::new(HashMap::new()),
        }
    }

    /// The load's reader (variables files are read through it too).
    pub fn reader(&self) -> &CheckoutReader {
        &self.reader
    }

    /// Resolves a path given to a file function, or says why it is refused.
    pub fn resolve(&self, given: &str) -> Result<PathBuf, String> {
        if given.starts_with('~') {
            return Err(format!(
                "the path {given:?} starts with \"~\", which would name a file in the home directory of the atoll server; \
                 atoll reads files only from inside the repository checkout. Commit the file to the repository and refer to it \
                 relative to the module, for example \"${{path.module}}/files/id_ed25519.pub\""
            ));
        }
        // `abspath` answers paths under CHECKOUT_ROOT; they read back from the checkout.
        let (base, given_rel) = match given.strip_prefix(CHECKOUT_ROOT) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => {
                (&self.checkout, rest.trim_start_matches('/'))
            }
            _ => (&self.base, given),
        };
        let p = Path::new(given_rel);
        if p.is_absolute() || given.starts_with('\\') {
            return Err(format!(
                "the path {given:?} is absolute; atoll reads files only from inside the repository checkout, never from the \
                 server's filesystem. Commit the file to the repository and use a path relative to the module, for example \
                 \"${{path.module}}/files/name\""
            ));
        }
        let joined = normalize(&base.join(p));
        if !joined.starts_with(&self.checkout) {
            return Err(format!(
                "the path {given:?} leaves the repository checkout (through \"..\"); atoll reads files only from inside the checkout"
            ));
        }
        match joined.canonicalize() {
            Ok(real) if !real.starts_with(&self.checkout) => Err(format!(
                "the path {given:?} is, or passes through, a symbolic link that leads outside the repository checkout; \
                 atoll reads files only from inside the checkout"
            )),
            Ok(real) => Ok(real),
            Err(_) => Ok(joined),
        }
    }

    pub(crate) fn read(&self, given: &str) -> Result<Rc<Vec<u8>>, String> {
        let path = self.resolve(given)?;
        self.reader.read_shared(&path).map_err(|e| match e {
            ReadError::NotFound => no_file(given),
            ReadError::NotRegular => format!("{given:?} is not a regular file"),
            other => format!("the file {given:?} was not read: {other}"),
        })
    }

    /// A path relative to the checkout for display (never the server's absolute path).
    fn display(&self, p: &Path) -> String {
        p.strip_prefix(&self.checkout)
            .map_or_else(|_| ".".to_owned(), |r| r.display().to_string())
    }

    /// `abspath`'s answer: the path under [`CHECKOUT_ROOT`], which file functions read back.
    fn absolute(&self, p: &Path) -> String {
        match self.display(p).as_str() {
            "." | "" => CHECKOUT_ROOT.to_owned(),
            rel => format!("{CHECKOUT_ROOT}/{rel}"),
        }
    }
}

fn no_file(given: &str) -> String {
    format!(
        "no file exists at {given:?}; this function works only with files that are distributed as part of the \
         configuration source code, so if this file will be created by a resource in this configuration you must \
         instead obtain this result from an attribute of that resource"
    )
}

/// Lexically resolves `.` and `..` (no filesystem access).
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Terraform's functions that read files (`filesystemFunctions`), which a `templatestring`
/// template may not call.
const READS_FILES: &[&str] = &[
    "file",
    "fileexists",
    "fileset",
    "filebase64",
    "filebase64sha256",
    "filebase64sha512",
    "filemd5",
    "filesha1",
    "filesha256",
    "filesha512",
    "templatefile",
];

/// Refuses a call that the template being rendered may not make.
pub(super) fn allowed_in_template(sb: &Sandbox, name: &str) -> Result<(), FnError> {
    match sb.rendering.get() {
        Some(_) if matches!(name, "templatefile" | "templatestring") => Err(FnError::Call(
            format!("cannot recursively call {name} from inside another template function"),
        )),
        Some("templatestring") if READS_FILES.contains(&name) => Err(FnError::Call(format!(
            "cannot use filesystem access functions like {name} in templatestring templates; \
             consider passing the function result as a template variable instead"
        ))),
        _ => Ok(()),
    }
}

pub(super) fn call(s: &Scope<'_>, name: &str, args: &[Value]) -> Option<FnResult> {
    let sb = &s.ctx.sandbox;
    if let Err(e) = allowed_in_template(sb, name) {
        return Some(Err(e));
    }
    let path = || str_arg(args, 0);
    let r = match name {
        "file" => path().and_then(|p| {
            let bytes = sb.read(p).map_err(|e| FnError::Arg(0, e))?;
            std::str::from_utf8(&bytes).map(Value::string).map_err(|_| {
                FnError::Call(format!("contents of {p:?} are not valid UTF-8; use the filebase64 function to obtain the Base64 encoded contents or the other file functions (e.g. filemd5, filesha256) to obtain file hashing results instead"))
            })
        }),
        "filebase64" => path().and_then(|p| sb.read(p).map(|b| Value::String(base64::engine::general_purpose::STANDARD.encode(b.as_slice()))).map_err(|e| FnError::Arg(0, e))),
        "filemd5" | "filesha1" | "filesha256" | "filesha512" => {
            path().and_then(|p| sb.read(p).map(|b| Value::String(super::encoding::digest(name, &b))).map_err(|e| FnError::Arg(0, e)))
        }
        "filebase64sha256" | "filebase64sha512" => path().and_then(|p| {
            let b = sb.read(p).map_err(|e| FnError::Arg(0, e))?;
            Ok(Value::String(super::encoding::base64_digest(name, &b)))
        }),
        "fileexists" => path().and_then(|p| {
            let real = sb.resolve(p).map_err(|e| FnError::Arg(0, e))?;
            match std::fs::metadata(&real) {
                Ok(m) if m.is_file() => Ok(Value::Bool(true)),
                Ok(_) => Err(FnError::Call(format!("{p:?} is not a regular file"))),
                Err(_) => Ok(Value::Bool(false)),
            }
        }),
        "fileset" => fileset(sb, args),
        "templatefile" => templatefile(s, args),
        "abspath" => path().and_then(|p| sb.resolve(p).map(|r| Value::String(sb.absolute(&r))).map_err(FnError::Call)),
        "pathexpand" => path().and_then(|p| {
            if p.starts_with('~') {
                Err(FnError::Call("\"~\" names the home directory of the atoll server, which configurations may not use".into()))
            } else {
                Ok(Value::string(p))
            }
        }),
        "dirname" => path().map(|p| Value::String(match p.rfind('/') { Some(0) => "/".into(), Some(i) => p[..i].to_owned(), None => ".".into() })),
        "basename" => path().map(|p| match p.trim_end_matches('/') {
            // Go's filepath.Base: "." for an empty path, "/" for one of slashes only.
            "" if p.is_empty() => Value::string("."),
            "" => Value::string("/"),
            t => Value::string(t.rsplit('/').next().unwrap_or("")),
        }),
        _ => return None,
    };
    Some(r)
}

fn fileset(sb: &Sandbox, args: &[Value]) -> FnResult {
    let dir = str_arg(args, 0)?;
    let pattern = str_arg(args, 1)?;
    let root = sb.resolve(dir).map_err(FnError::Call)?;
    let glob = globset::Glob::new(pattern)
        .map_err(|e| FnError::Arg(1, format!("invalid pattern: {e}")))?
        .compile_matcher();
    let mut out = Vec::new();
    let mut stack = vec![root.clone()];
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > 10_000 {
                return Err(FnError::Call(
                    "the directory tree has more than 10000 entries".into(),
                ));
            }
            let Ok(ft) = e.file_type() else { continue };
            let p = e.path();
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_file()
                && let Ok(rel) = p.strip_prefix(&root)
                && glob.is_match(rel)
            {
                out.push(Value::String(rel.display().to_string()));
            }
        }
    }
    Ok(Value::new_set(Type::String, out))
}

/// Names inside a `templatefile` template: only the given variables.
struct TemplateVars(std::collections::BTreeMap<String, Value>);

impl Names for TemplateVars {
    fn resolve<'s>(
        &'s self,
        root: &Decorated<Ident>,
        _ops: &[Decorated<TraversalOperator>],
        scope: &Scope<'_>,
    ) -> Result<(Cow<'s, Value>, usize), Diagnostic> {
        match self.0.get(root.as_str()) {
            Some(v) => Ok((Cow::Borrowed(v), 0)),
            None => Err(scope.error(
                "Invalid function argument",
                format!("Invalid value for \"vars\" parameter: vars map does not contain key {:?}, referenced in this template.", root.as_str()),
                hcl_edit::Span::span(root),
            )),
        }
    }
}

fn templatefile(s: &Scope<'_>, args: &[Value]) -> FnResult {
    let p = str_arg(args, 0)?;
    let vars = template_vars(args.get(1))?;
    let (file, tpl) = template(s, p)?;
    render(s, "templatefile", file, &tpl, vars)
}

/// The variables of a template function: a map or an object.
pub(super) fn template_vars(
    v: Option<&Value>,
) -> Result<std::collections::BTreeMap<String, Value>, FnError> {
    match v {
        Some(Value::Map(_, m) | Value::Object(m)) => Ok(m.clone()),
        _ => Err(FnError::Arg(
            1,
            "a map or object of template variables is required".into(),
        )),
    }
}

/// Renders a parsed template (source `file`) for the template function `by`, with only `vars`
/// in scope.
pub(super) fn render(
    s: &Scope<'_>,
    by: &'static str,
    file: usize,
    tpl: &Template,
    vars: std::collections::BTreeMap<String, Value>,
) -> FnResult {
    let sb = &s.ctx.sandbox;
    let names = TemplateVars(vars);
    let scope = Scope::new(s.ctx, &names, file);
    sb.rendering.set(Some(by));
    let out = crate::eval::eval_template(&scope, tpl);
    sb.rendering.set(None);
    out.map_err(|d| FnError::Diag(Box::new(d)))
}

/// The source id and parsed template of a `templatefile` path: read, parsed and added to the
/// sources once per load, however many instances render it.
fn template(s: &Scope<'_>, p: &str) -> Result<(usize, Rc<Template>), FnError> {
    let sb = &s.ctx.sandbox;
    let key = sb.resolve(p).map_err(|e| FnError::Arg(0, e))?;
    if let Some((file, tpl)) = sb.templates.borrow().get(&key) {
        return Ok((*file, Rc::clone(tpl)));
    }
    let bytes = sb.read(p).map_err(|e| FnError::Arg(0, e))?;
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| FnError::Call(format!("contents of {p:?} are not valid UTF-8")))?
        .to_owned();
    crate::nesting::check(&text).map_err(|deep| {
        FnError::Call(format!(
            "cannot parse {p:?} as a template: {}",
            deep.detail()
        ))
    })?;
    let mut tpl = hcl_edit::parser::parse_template(&text).map_err(|e| {
        FnError::Call(format!(
            "failed to parse {p:?} as a template at line {}, column {}: {}",
            e.location().line(),
            e.location().column(),
            e.message()
        ))
    })?;
    crate::heredoc::flush_template(&mut tpl, &text);
    let file = s.ctx.sources.borrow_mut().add(p.to_owned(), text);
    let tpl = Rc::new(tpl);
    sb.templates
        .borrow_mut()
        .insert(key, (file, Rc::clone(&tpl)));
    Ok((file, tpl))
}
