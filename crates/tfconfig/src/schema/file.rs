//! bpg's `proxmox_virtual_environment_file` (and `proxmox_file`, its name without the prefix):
//! a file atoll puts in a storage from the checkout (`source_file`) or from the configuration
//! (`source_raw`). Every argument forces replacement, as in the provider.

use super::builders::*;
use super::{BodySchema, ResourceSchema};

/// The resource types that upload a file.
pub const FILE_TYPES: &[&str] = &["proxmox_virtual_environment_file", "proxmox_file"];

pub(super) fn file(type_name: &'static str) -> ResourceSchema {
    let source_file = block(
        "source_file",
        Some(1),
        vec![
            fnew(req("path", s())),
            fnew(opt("checksum", s())),
            fnew(opt("file_name", s())),
            fnew(db("insecure", false)),
            fnew(opt("min_tls", s())),
            ro("changed", b()),
        ],
        vec![],
    );
    let source_raw = block(
        "source_raw",
        Some(1),
        vec![
            fnew(req("data", s())),
            fnew(req("file_name", s())),
            fnew(dn("resize", 0.0)),
        ],
        vec![],
    );
    let attrs = vec![
        ro("id", s()),
        fnew(oc("content_type", s())),
        fnew(req("datastore_id", s())),
        fnew(req("node_name", s())),
        fnew(opt("file_mode", s())),
        db("overwrite", true),
        dn("timeout_upload", 1800.0),
        opt("upload_mode", s()),
        ro("file_modification_date", s()),
        ro("file_name", s()),
        ro("file_size", n()),
        ro("file_tag", s()),
    ];
    ResourceSchema {
        type_name,
        body: BodySchema {
            attrs,
            blocks: vec![replacing(source_file), replacing(source_raw)],
        },
        generated: false,
    }
}
