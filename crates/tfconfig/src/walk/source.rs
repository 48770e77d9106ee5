//! The bytes a file resource (`proxmox_virtual_environment_file`) uploads from the checkout:
//! its `source_file.path` is read through the load's sandbox, the one `file()` reads through
//! (the same confinement, caps and per-load budget). A URL is refused: atoll never reaches a
//! network address a pull request chose (`proxmox_virtual_environment_download_file` has the
//! Proxmox VE node download it instead).

use std::sync::Arc;

use hcl_edit::Span as _;

use super::Walker;
use crate::SourceBytes;
use crate::config::Resource;
use crate::eval::Scope;
use crate::value::Value;

/// The first block of a block list attribute, as an object's fields.
fn first_block<'v>(attrs: &'v Value, name: &str) -> Option<&'v Value> {
    let Value::Object(fields) = attrs.unmark().0 else {
        return None;
    };
    match fields.get(name)?.unmark().0 {
        Value::List(_, items) | Value::Tuple(items) | Value::Set(_, items) => items.first(),
        _ => None,
    }
}

/// Whether bpg would take `path` for a URL to download (any `scheme://`).
fn is_url(path: &str) -> bool {
    path.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

impl Walker<'_> {
    /// Reads `source_file.path` of a file resource instance; `None` when it has no
    /// `source_file`, the path is still unknown, or it was refused (with a diagnostic).
    pub(super) fn read_source_file(
        &mut self,
        s: &Scope<'_>,
        r: &Resource,
        attrs: &Value,
    ) -> Option<SourceBytes> {
        let block = first_block(attrs, "source_file")?;
        let Value::Object(fields) = block.unmark().0 else {
            return None;
        };
        let Value::String(path) = fields.get("path")?.unmark().0 else {
            return None;
        };
        let span = r
            .body
            .get_blocks("source_file")
            .next()
            .and_then(|b| b.body.get_attribute("path"))
            .and_then(|a| a.value.span());
        if is_url(path) {
            self.diags.push(s.error(
                "Source file URLs are not downloaded by atoll",
                format!(
                    "source_file.path is the URL {path:?}: atoll never reaches a network address \
                     a pull request chooses. Let the Proxmox VE node download it with a \
                     proxmox_virtual_environment_download_file resource (url, content_type, \
                     datastore_id, node_name), or commit the file to the repository and give \
                     its path here."
                ),
                span,
            ));
            return None;
        }
        match self.ctx.sandbox.read(path) {
            Ok(bytes) => Some(SourceBytes(Arc::new(bytes.as_ref().clone()))),
            Err(why) => {
                self.diags.push(s.error(
                    "Source file cannot be read",
                    format!("The file at source_file.path cannot be uploaded: {why}."),
                    span,
                ));
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_url;

    #[test]
    fn urls_are_told_from_paths() {
        assert!(is_url("https://cloud-images.ubuntu.com/x.img"));
        assert!(is_url("http://download.proxmox.com/t.tar.gz"));
        assert!(is_url("ftp://host/file"));
        assert!(!is_url("files/hook.sh"));
        assert!(!is_url("./odd://name"));
    }
}
