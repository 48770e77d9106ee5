//! The data sources atoll reads from the checkout while it evaluates
//! (`schema::local_data_source`): `local_file` and
//! `local_sensitive_file` read a file of the checkout through the load's sandbox, the one
//! `file()` reads through (the same confinement, caps and per-load budget), when their
//! `filename` is known; a file refused or missing is an error on the `filename` line. They make
//! no resource instance: nothing of them is planned or applied.

use std::collections::BTreeMap;

use base64::Engine as _;
use hcl_edit::Span as _;

use super::Walker;
use crate::body;
use crate::config::Resource;
use crate::eval::Scope;
use crate::expand::InstanceKey;
use crate::funcs::encoding::{base64_digest, digest};
use crate::module::{Env, InstanceNames};
use crate::schema::ResourceSchema;
use crate::value::{Type, Value};

impl Walker<'_> {
    /// Reads every instance of the data source `r` into `env` under `key`.
    pub(super) fn local_data_source(
        &mut self,
        env: &mut Env<'_>,
        r: &Resource,
        schema: &ResourceSchema,
        key: String,
    ) {
        let Some((insts, _)) = self.expand(env, r) else {
            env.resources.insert(key, Value::Unknown(Type::Dynamic));
            return;
        };
        let mut values: Vec<(InstanceKey, Value)> = Vec::with_capacity(insts.len());
        for inst in insts {
            if self.ctx.exhausted() {
                break;
            }
            let names = InstanceNames {
                env,
                each: inst.each.clone(),
                count: inst.count,
            };
            let scope = Scope::new(self.ctx, &names, r.file);
            let open = r.open.range.clone();
            let attrs = body::eval_body(&scope, &r.body, &schema.body, true, open, &mut self.diags);
            let attrs = self.read_local_file(&scope, r, schema, attrs);
            self.bound_diagnostics();
            values.push((inst.key, attrs));
        }
        let value = super::collect(r.for_each.is_some(), r.count.is_some(), values);
        env.resources.insert(key, value);
    }

    /// `local_file`'s computed attributes, from the file `filename` names; left unknown while
    /// `filename` is.
    fn read_local_file(
        &mut self,
        s: &Scope<'_>,
        r: &Resource,
        schema: &ResourceSchema,
        attrs: Value,
    ) -> Value {
        let Value::Object(mut fields) = attrs else {
            return attrs;
        };
        let filename = fields.get("filename").map(|v| v.unmark().0.clone());
        let Some(Value::String(filename)) = filename else {
            return Value::Object(fields);
        };
        let bytes = match self.ctx.sandbox.read(&filename) {
            Ok(bytes) => bytes,
            Err(why) => {
                let span = r
                    .body
                    .get_attribute("filename")
                    .and_then(|a| a.value.span());
                self.diags.push(s.error(
                    "Read local file data source error",
                    format!("The file at given path cannot be read: {why}."),
                    span,
                ));
                return Value::Object(fields);
            }
        };
        let sensitive = |name: &str| schema.body.attr(name).is_some_and(|a| a.sensitive);
        for (name, value) in contents(&bytes) {
            fields.insert(name.to_owned(), Value::string(value).mark(sensitive(name)));
        }
        Value::Object(fields)
    }
}

/// What the local provider computes from a file's bytes (`genFileChecksums`): its content (as
/// Go's `string(content)` reaches Terraform: bytes that are not UTF-8 become U+FFFD), its
/// base64, and its checksums; `id` is the SHA-1.
fn contents(bytes: &[u8]) -> BTreeMap<&'static str, String> {
    let sha1 = digest("filesha1", bytes);
    BTreeMap::from([
        ("content", String::from_utf8_lossy(bytes).into_owned()),
        (
            "content_base64",
            base64::engine::general_purpose::STANDARD.encode(bytes),
        ),
        ("content_md5", digest("filemd5", bytes)),
        ("content_sha1", sha1.clone()),
        ("content_sha256", digest("filesha256", bytes)),
        ("content_sha512", digest("filesha512", bytes)),
        (
            "content_base64sha256",
            base64_digest("filebase64sha256", bytes),
        ),
        (
            "content_base64sha512",
            base64_digest("filebase64sha512", bytes),
        ),
        ("id", sha1),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Loads `files` (path, text) as a checkout whose project is `env/`.
    fn load(files: &[(&str, &str)]) -> crate::Loaded {
        let dir = tempfile::tempdir().expect("temp dir");
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("dirs");
            std::fs::write(path, text).expect("file");
        }
        crate::load_with_known(
            &crate::Input {
                checkout: dir.path().to_path_buf(),
                project_dir: "env".into(),
                workspace: "default".to_owned(),
                vars: Vec::new(),
                limits: crate::Limits::default(),
                modules: Default::default(),
            },
            &crate::Known::new(),
        )
    }

    const READS: &str = r#"
data "local_file" "motd" {
  filename = "${path.module}/files/motd.txt"
}
data "local_sensitive_file" "token" {
  filename = "files/token"
}
output "motd" {
  value = data.local_file.motd.content
}
output "motd_id" {
  value = data.local_file.motd.id
}
output "token" {
  value     = data.local_sensitive_file.token.content
  sensitive = true
}
output "token_sha" {
  value = data.local_sensitive_file.token.content_sha256
}
"#;

    #[test]
    fn local_file_reads_the_checkout_and_the_sensitive_one_marks_its_content() {
        let loaded = load(&[
            ("env/main.tf", READS),
            ("env/files/motd.txt", "hello\n"),
            ("env/files/token", "s3cret"),
        ]);
        assert!(!loaded.has_errors(), "{}", loaded.render_diagnostics());
        let out = |name: &str| loaded.outputs[name].value.unmark().0.clone();
        assert_eq!(out("motd"), Value::string("hello\n"));
        assert_eq!(
            out("motd_id"),
            Value::string("f572d396fae9206628714fb2ce00f72e94f2258f")
        );
        assert_eq!(out("token"), Value::string("s3cret"));
        assert!(loaded.outputs["token"].value.contains_sensitive());
        // A checksum of a sensitive file is not sensitive, as in the provider's schema.
        assert!(!loaded.outputs["token_sha"].value.contains_sensitive());
        // A data source is read, never planned.
        assert!(loaded.resources.is_empty());
    }

    #[test]
    fn an_unknown_sensitive_content_in_a_plain_output_is_refused() {
        let tf = "data \"local_sensitive_file\" \"t\" {\n  filename = \"t\"\n}\noutput \"t\" {\n  value = data.local_sensitive_file.t.content\n}\n";
        let loaded = load(&[("env/main.tf", tf), ("env/t", "x")]);
        assert!(
            loaded
                .render_diagnostics()
                .contains("Output refers to sensitive values")
        );
    }

    #[test]
    fn a_missing_file_or_one_outside_the_checkout_is_an_error_on_the_filename_line() {
        for (filename, why) in [
            ("files/absent.txt", "no file exists at"),
            ("../../etc/passwd", "leaves the"),
            ("/etc/passwd", "is absolute"),
        ] {
            let tf = format!(
                "data \"local_file\" \"f\" {{\n  filename = \"{filename}\"\n}}\noutput \"o\" {{\n  value = data.local_file.f.content\n}}\n"
            );
            let loaded = load(&[("env/main.tf", &tf)]);
            let text = loaded.render_diagnostics();
            assert!(
                text.contains("Error: Read local file data source error"),
                "{text}"
            );
            assert!(text.contains("on main.tf line 2"), "{text}");
            assert!(text.contains(why), "{filename}: {text}");
        }
    }

    #[test]
    fn a_file_past_the_per_file_cap_is_refused_as_file_refuses_it() {
        let big =
            "x".repeat(usize::try_from(crate::Limits::default().file_bytes).expect("fits") + 1);
        let tf = "data \"local_file\" \"f\" {\n  filename = \"big\"\n}\n";
        let loaded = load(&[("env/main.tf", tf), ("env/big", &big)]);
        let text = loaded.render_diagnostics();
        assert!(text.contains("larger than"), "{text}");
    }

    #[test]
    fn the_local_file_resource_and_local_command_stay_refused_with_their_reasons() {
        let tf = "resource \"local_file\" \"f\" {\n  filename = \"x\"\n  content = \"y\"\n}\ndata \"local_command\" \"c\" {\n  command = \"id\"\n}\n";
        let loaded = load(&[("env/main.tf", tf)]);
        let text = loaded.render_diagnostics();
        assert!(
            text.contains("expose the content as an output instead"),
            "{text}"
        );
        assert!(
            text.contains("Data source \"local_command\" is refused"),
            "{text}"
        );
    }

    #[test]
    fn checksums_are_the_local_providers() {
        let c = contents(b"hello\n");
        assert_eq!(c["id"], "f572d396fae9206628714fb2ce00f72e94f2258f");
        assert_eq!(c["content_sha1"], c["id"]);
        assert_eq!(c["content_md5"], "b1946ac92492d2347c6235b4d2611184");
        assert_eq!(
            c["content_sha256"],
            "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
        );
        assert_eq!(
            c["content_base64sha256"],
            "WJG1tSLV3whtD/CxEPvZ0hu0/HFjrzTQgoai6Eb2vgM="
        );
        assert_eq!(c["content_base64"], "aGVsbG8K");
        assert_eq!(c["content"], "hello\n");
        assert_eq!(contents(b"a\xffb")["content"], "a\u{fffd}b");
    }
}
