//! The data sources atoll reads itself: hashicorp/local's `local_file` and
//! `local_sensitive_file` (`internal/provider/data_source_local_file.go`), a file of the
//! checkout read through the same sandbox as `file()`, with its content and checksums.

use super::builders::*;
use super::{BodySchema, ResourceSchema};

/// What the file's content gives, besides `content` and `content_base64`: `id` is
/// `content_sha1`.
const LOCAL_FILE_CHECKSUMS: &[&str] = &[
    "content_md5",
    "content_sha1",
    "content_sha256",
    "content_base64sha256",
    "content_sha512",
    "content_base64sha512",
    "id",
];

/// The schema of a data source atoll reads from the checkout itself, if it is one.
pub fn local_data_source(type_name: &str) -> Option<ResourceSchema> {
    let (type_name, sensitive) = match type_name {
        "local_file" => ("local_file", false),
        "local_sensitive_file" => ("local_sensitive_file", true),
        _ => return None,
    };
    let content = |name| {
        let a = ro(name, s());
        if sensitive { sens(a) } else { a }
    };
    let mut attrs = vec![
        req("filename", s()),
        content("content"),
        content("content_base64"),
    ];
    attrs.extend(LOCAL_FILE_CHECKSUMS.iter().map(|name| ro(name, s())));
    Some(ResourceSchema {
        type_name,
        body: BodySchema {
            attrs,
            blocks: vec![],
        },
        generated: false,
    })
}
