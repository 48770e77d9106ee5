//! Module calls whose source is not a local path (`git::https://...`, a registry address):
//! the evaluator never fetches them. Whoever loads a project (the runner, the CLI) asks
//! [`crate::module_requests`] which remote calls the configuration makes, installs each inside
//! the checkout and hands the result back in [`crate::Input::modules`]; the loader then reads
//! an installed module like a local one, confined to the checkout, and turns a refused one
//! into a diagnostic on the call's `source` line.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// What a remote module call asks for: its source address and version constraint, as written.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModuleRequest {
    pub source: String,
    /// The `version` argument (registry sources only).
    pub version: Option<String>,
}

/// Where a remote module ended up, or why it could not be installed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Installed {
    /// The module's directory (the source's `//subdir` applied), inside the checkout.
    Dir(PathBuf),
    /// Not installed: a diagnostic's summary and detail, reported at the call's source.
    Refused { summary: String, detail: String },
}

/// The remote modules installed for a load, by request.
pub type RemoteModules = BTreeMap<ModuleRequest, Installed>;

/// Terraform's rule: a source starting with `./` or `../` is a local path; anything else is
/// fetched by `terraform init`.
pub(crate) fn is_local(source: &str) -> bool {
    source.starts_with("./") || source.starts_with("../")
}
