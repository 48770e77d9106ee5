//! The root module's `terraform { backend "TYPE" { ... } }` (or `cloud { ... }`) block, as far
//! as atoll reads it: to find where Terraform keeps the state of a project taken over from it.
//! Terraform allows only literal values in a backend block (no variables, no references), so
//! only literals are read; anything else is listed by name, for a precise refusal.

use std::collections::BTreeMap;

use hcl_edit::expr::{Expression, ObjectKey};
use hcl_edit::structure::Block;

/// One literal setting of a backend block.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    String(String),
    Bool(bool),
    /// A number as written.
    Number(String),
    List(Vec<Literal>),
}

/// The backend block of a root module.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Backend {
    /// `backend` or `cloud`.
    pub block: String,
    /// The backend type (`s3`, `local`, ...); empty for a `cloud` block.
    pub kind: String,
    /// Literal settings by path: `bucket`, `endpoints.s3` (an object or a nested block).
    pub settings: BTreeMap<String, Literal>,
    /// Settings whose value is not a literal (paths as in `settings`), which Terraform refuses.
    pub not_literal: Vec<String>,
}

impl Backend {
    /// A literal string setting; an error naming it when it is set to something else.
    pub fn string(&self, path: &str) -> Result<Option<&str>, String> {
        self.check(path)?;
        match self.settings.get(path) {
            None => Ok(None),
            Some(Literal::String(s)) => Ok(Some(s)),
            Some(_) => Err(format!("\"{path}\" must be a string")),
        }
    }

    /// A literal bool setting (`"true"`/`"false"` strings too, as Terraform converts them).
    pub fn bool(&self, path: &str) -> Result<Option<bool>, String> {
        self.check(path)?;
        match self.settings.get(path) {
            None => Ok(None),
            Some(Literal::Bool(b)) => Ok(Some(*b)),
            Some(Literal::String(s)) if s == "true" || s == "false" => Ok(Some(s == "true")),
            Some(_) => Err(format!("\"{path}\" must be true or false")),
        }
    }

    fn check(&self, path: &str) -> Result<(), String> {
        if self.not_literal.iter().any(|p| p == path) {
            return Err(format!(
                "\"{path}\" is not a literal value: Terraform allows no variables or references \
                 in a backend block, so write the value itself"
            ));
        }
        Ok(())
    }
}

/// Reads a `backend` or `cloud` block.
pub(crate) fn read(block: &Block) -> Backend {
    let mut out = Backend {
        block: block.ident.as_str().to_owned(),
        kind: block
            .labels
            .first()
            .map(|l| l.as_str().to_owned())
            .unwrap_or_default(),
        ..Backend::default()
    };
    read_body(block, "", &mut out);
    out
}

fn read_body(block: &Block, prefix: &str, out: &mut Backend) {
    for a in block.body.attributes() {
        let path = format!("{prefix}{}", a.key.as_str());
        read_value(&a.value, path, out);
    }
    for b in block.body.blocks() {
        read_body(b, &format!("{prefix}{}.", b.ident.as_str()), out);
    }
}

fn read_value(value: &Expression, path: String, out: &mut Backend) {
    if let Expression::Object(object) = value {
        for (key, v) in object.iter() {
            let name = match key {
                ObjectKey::Ident(id) => id.as_str().to_owned(),
                ObjectKey::Expression(Expression::String(s)) => s.value().clone(),
                ObjectKey::Expression(_) => {
                    out.not_literal.push(format!("{path}.?"));
                    continue;
                }
            };
            read_value(v.expr(), format!("{path}.{name}"), out);
        }
        return;
    }
    match literal(value) {
        Some(l) => {
            out.settings.insert(path, l);
        }
        None => out.not_literal.push(path),
    }
}

fn literal(value: &Expression) -> Option<Literal> {
    Some(match value {
        Expression::String(s) => Literal::String(s.value().clone()),
        Expression::Bool(b) => Literal::Bool(*b.value()),
        Expression::Number(n) => Literal::Number(n.value().to_string()),
        Expression::Parenthesis(p) => return literal(p.inner()),
        Expression::Array(items) => {
            Literal::List(items.iter().map(literal).collect::<Option<Vec<_>>>()?)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::{Backend, Literal};

    fn backend(files: &[(&str, &str)]) -> Result<Option<Backend>, String> {
        let dir = tempfile::tempdir().expect("temp dir");
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).expect("write");
        }
        crate::backend(&crate::Input {
            checkout: dir.path().to_path_buf(),
            project_dir: ".".into(),
            workspace: "default".to_owned(),
            vars: Vec::new(),
            limits: crate::Limits::default(),
            modules: Default::default(),
        })
    }

    #[test]
    fn an_s3_backends_literal_settings_are_read_in_either_syntax() {
        let native = r#"
terraform {
  backend "s3" {
    bucket         = "tfstate"
    key            = "infra/terraform.tfstate"
    region         = "garage"
    use_path_style = true
    endpoints = {
      s3 = "http://garage:3900"
    }
  }
}
"#;
        let b = backend(&[("main.tf", native)])
            .expect("read")
            .expect("backend");
        assert_eq!((b.block.as_str(), b.kind.as_str()), ("backend", "s3"));
        assert_eq!(b.string("bucket"), Ok(Some("tfstate")));
        assert_eq!(b.string("endpoints.s3"), Ok(Some("http://garage:3900")));
        assert_eq!(b.bool("use_path_style"), Ok(Some(true)));
        assert_eq!(b.string("workspace_key_prefix"), Ok(None));
        assert!(b.not_literal.is_empty(), "{:?}", b.not_literal);

        let json = r#"{"terraform": {"backend": {"s3": {"bucket": "b", "key": "k",
            "endpoint": "http://minio:9000", "force_path_style": "true"}}}}"#;
        let b = backend(&[("main.tf.json", json)])
            .expect("read")
            .expect("backend");
        assert_eq!(b.kind, "s3");
        assert_eq!(b.string("endpoint"), Ok(Some("http://minio:9000")));
        assert_eq!(b.bool("force_path_style"), Ok(Some(true)));
    }

    #[test]
    fn a_reference_in_a_backend_block_is_named_and_other_blocks_are_told_apart() {
        let computed = r#"
variable "bucket" {
  type    = string
  default = "b"
}
terraform {
  backend "s3" {
    bucket = var.bucket
    key    = "k"
  }
}
"#;
        let b = backend(&[("main.tf", computed)])
            .expect("read")
            .expect("backend");
        assert_eq!(b.not_literal, vec!["bucket".to_owned()]);
        let err = b.string("bucket").expect_err("not literal");
        assert!(err.contains("\"bucket\" is not a literal value"), "{err}");
        assert_eq!(
            b.settings.get("key"),
            Some(&Literal::String("k".to_owned()))
        );

        let local = "terraform {\n  backend \"local\" {\n    path = \"x.tfstate\"\n  }\n}\n";
        let b = backend(&[("main.tf", local)])
            .expect("read")
            .expect("backend");
        assert_eq!(b.kind, "local");
        let cloud = "terraform {\n  cloud {\n    organization = \"acme\"\n  }\n}\n";
        let b = backend(&[("main.tf", cloud)])
            .expect("read")
            .expect("backend");
        assert_eq!((b.block.as_str(), b.kind.as_str()), ("cloud", ""));
        assert_eq!(backend(&[("main.tf", "terraform {}\n")]), Ok(None));
        let broken = backend(&[("main.tf", "terraform {\n")]).expect_err("syntax error");
        assert!(broken.contains("main.tf"), "{broken}");
    }
}
