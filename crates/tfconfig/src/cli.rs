//! `atoll validate --dir DIR [--workspace W] [--var K=V] [--var-file F] [--json]`: loads and
//! evaluates a project without contacting Proxmox, prints the diagnostics and the resource
//! instances found, and exits 1 when there is an error.

use std::path::PathBuf;
use std::process::ExitCode;

use super::schema::{self, BodySchema};
use super::value::{Value, quote};
use super::{CliVar, Input, Loaded, Severity, find_checkout, load};

/// Arguments of `atoll validate`.
#[derive(Debug, Clone, clap::Args)]
pub struct ValidateArgs {
    /// The project directory (root module) to load.
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Workspace name (`terraform.workspace`, `env/<workspace>.tfvars`).
    #[arg(long, default_value = "default")]
    pub workspace: String,
    /// Set a root variable: NAME=VALUE. Applied in command-line order with --var-file.
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Read root variable values from a .tfvars file. Applied in command-line order with --var.
    #[arg(long = "var-file", value_name = "FILE")]
    pub var_files: Vec<PathBuf>,
    /// Print JSON: {"diagnostics":[...],"resources":[...],"outputs":{...}}, sensitive values redacted.
    #[arg(long)]
    pub json: bool,
}

/// Runs `validate`; `argv` is the raw command line, used only to interleave --var and
/// --var-file in the order they were given.
pub fn run(args: &ValidateArgs, argv: &[String]) -> ExitCode {
    match input(args, argv) {
        Ok(input) => report(args, &input),
        Err(code) => code,
    }
}

/// The load `validate` makes, or the exit code after a message when its arguments are wrong.
pub fn input(args: &ValidateArgs, argv: &[String]) -> Result<Input, ExitCode> {
    let mut cli = Vec::new();
    let (mut vi, mut fi) = (0, 0);
    for a in argv {
        if a == "--var" || a.starts_with("--var=") {
            if let Some(v) = args.vars.get(vi) {
                cli.push(CliVar::Var(v.clone()));
            }
            vi += 1;
        } else if a == "--var-file" || a.starts_with("--var-file=") {
            if let Some(f) = args.var_files.get(fi) {
                match std::fs::read_to_string(f) {
                    Ok(text) => cli.push(CliVar::File {
                        name: f.display().to_string(),
                        text,
                    }),
                    Err(e) => {
                        eprintln!(
                            "Error: Failed to read variables file\n\nGiven variables file {} does not exist or cannot be read: {}.",
                            f.display(),
                            e.kind()
                        );
                        return Err(ExitCode::FAILURE);
                    }
                }
            }
            fi += 1;
        }
    }
    let Some(dir) = args.dir.canonicalize().ok().filter(|d| d.is_dir()) else {
        eprintln!(
            "Error: Project directory not found\n\nThe directory {} does not exist or is not a directory.",
            args.dir.display()
        );
        return Err(ExitCode::FAILURE);
    };
    let checkout = find_checkout(&dir);
    let project_dir = dir
        .strip_prefix(&checkout)
        .map(PathBuf::from)
        .unwrap_or_default();
    Ok(Input {
        checkout,
        project_dir,
        workspace: args.workspace.clone(),
        vars: cli,
        limits: super::Limits::default(),
        modules: Default::default(),
    })
}

/// Loads `input`, prints what `validate` prints and returns its exit code.
pub fn report(args: &ValidateArgs, input: &Input) -> ExitCode {
    let loaded = load(input);
    if args.json {
        println!("{}", to_json(&loaded));
    } else {
        print!("{}", to_text(&loaded));
    }
    if loaded.has_errors() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The JSON document of `validate --json`.
pub fn to_json(l: &Loaded) -> serde_json::Value {
    let diags: Vec<serde_json::Value> = l
        .diagnostics
        .iter()
        .map(|d| {
            let loc = d.subject.as_ref().and_then(|s| l.sources.locate(s));
            serde_json::json!({
                "severity": d.severity,
                "summary": d.summary,
                "detail": d.detail,
                "file": loc.map(|(f, _, _)| f),
                "line": loc.map(|(_, line, _)| line),
                "column": loc.map(|(_, _, c)| c),
            })
        })
        .collect();
    let resources: Vec<serde_json::Value> = l
        .resources
        .iter()
        .map(|r| {
            serde_json::json!({
                "address": r.address,
                "type": r.resource_type,
                "attributes": r.attributes.to_json("(sensitive value)", "(known after apply)"),
                "depends_on": r.depends_on,
                "lifecycle": r.lifecycle,
            })
        })
        .collect();
    // A sensitive output has no value here, as in every other output of atoll.
    let outputs: serde_json::Map<String, serde_json::Value> = l
        .outputs
        .iter()
        .map(|(name, o)| {
            let mut entry = serde_json::json!({ "sensitive": o.sensitive });
            if !o.sensitive {
                entry["value"] = o.value.to_json("(sensitive value)", "(known after apply)");
            }
            (name.clone(), entry)
        })
        .collect();
    serde_json::json!({ "diagnostics": diags, "resources": resources, "outputs": outputs })
}

/// The human output of `validate`: diagnostics, then instances with their attributes.
pub fn to_text(l: &Loaded) -> String {
    let mut out = String::new();
    for d in &l.diagnostics {
        out.push_str(&l.sources.render(d));
        out.push('\n');
    }
    let errors = l
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    if errors == 0 {
        out.push_str(&format!(
            "Success! The configuration is valid: {} resource instance(s).\n",
            l.resources.len()
        ));
    } else {
        out.push_str(&format!("The configuration has {errors} error(s); {} resource instance(s) could be evaluated.\n", l.resources.len()));
    }
    if !l.outputs.is_empty() {
        out.push_str("\nOutputs:\n\n");
        let width = l.outputs.keys().map(String::len).max().unwrap_or(0);
        for (k, o) in &l.outputs {
            out.push_str(&format!("{k:<width$} = {}\n", o.value));
        }
    }
    for r in &l.resources {
        out.push_str(&format!(
            "\n# {}\nresource {} {} {{\n",
            r.address,
            quote(&r.resource_type),
            quote(&r.name)
        ));
        if let (Some(m), Some(schema)) = (r.attributes.as_map(), schema::resource(&r.resource_type))
        {
            render_body(m, &schema.body, 1, &mut out);
        }
        out.push_str("}\n");
    }
    out
}

/// Renders an object of attributes and nested blocks, using the schema to tell them apart.
fn render_body(
    m: &std::collections::BTreeMap<String, Value>,
    schema: &BodySchema,
    depth: usize,
    out: &mut String,
) {
    let pad = "  ".repeat(depth);
    let attrs: Vec<(&String, &Value)> = m
        .iter()
        .filter(|(k, v)| schema.block(k).is_none() && !v.is_null())
        .collect();
    let width = attrs.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in attrs {
        out.push_str(&format!("{pad}{k:<width$} = {v}\n"));
    }
    for bs in &schema.blocks {
        match m.get(bs.name).map(|v| v.unmark().0) {
            Some(Value::List(_, items)) => {
                for item in items {
                    out.push_str(&format!("\n{pad}{} {{\n", bs.name));
                    if let Some(inner) = item.as_map() {
                        render_body(inner, &bs.body, depth + 1, out);
                    }
                    out.push_str(&format!("{pad}}}\n"));
                }
            }
            Some(Value::Unknown(_)) => {
                out.push_str(&format!("\n{pad}{} {{ (known after apply) }}\n", bs.name));
            }
            _ => {}
        }
    }
}
