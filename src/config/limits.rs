//! `limits`: what one pull request may make atoll read from its checkout and evaluate. Each
//! limit answers a bad input with a precise refusal instead of letting it take the server's
//! memory; the defaults keep one plan well under 256 MB.

use super::tree::Reader;
use tfconfig::limits::MIB;

/// The `limits:` section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitsSettings {
    /// `limits.repo_config_bytes`: largest `atlantis.yaml` read.
    pub repo_config_bytes: u64,
    /// `limits.checkout_files`: most files listed in a checkout to select projects.
    pub checkout_files: usize,
    /// `limits.tf_file_bytes`: largest `.tf`, `.tfvars` or `file()` target read.
    pub tf_file_bytes: u64,
    /// `limits.project_bytes`: most bytes read from the checkout for one project.
    pub project_bytes: u64,
    /// `limits.loaded_files`: most files and module directories read for one project.
    pub loaded_files: usize,
    /// `limits.module_instances`: most module instances in one project, at every depth.
    pub module_instances: usize,
    /// `limits.resource_instances`: most resource instances in one project.
    pub resource_instances: usize,
    /// `limits.eval_memory_mb`: most memory (MiB) the values of one evaluation may take.
    pub eval_memory_mb: u64,
}

impl Default for LimitsSettings {
    fn default() -> Self {
        let tf = tfconfig::Limits::default();
        Self {
            repo_config_bytes: 256 * 1024,
            checkout_files: 100_000,
            tf_file_bytes: tf.file_bytes,
            project_bytes: tf.project_bytes,
            loaded_files: tf.loaded_files,
            module_instances: tf.module_instances,
            resource_instances: tf.resource_instances,
            eval_memory_mb: tf.eval_memory_bytes / MIB,
        }
    }
}

impl LimitsSettings {
    /// The evaluator's limits for one project.
    pub fn tfconfig(&self) -> tfconfig::Limits {
        tfconfig::Limits {
            file_bytes: self.tf_file_bytes,
            project_bytes: self.project_bytes,
            loaded_files: self.loaded_files,
            module_instances: self.module_instances,
            resource_instances: self.resource_instances,
            eval_memory_bytes: self.eval_memory_mb * MIB,
            ..tfconfig::Limits::default()
        }
    }
}

pub(super) fn read_limits(r: &mut Reader<'_>) -> LimitsSettings {
    let d = LimitsSettings::default();
    let count = |r: &mut Reader<'_>, path: &str, default: usize, max: u64| {
        let n = r.uint(path, default as u64, 1, max);
        usize::try_from(n).unwrap_or(default)
    };
    let out = LimitsSettings {
        repo_config_bytes: r.uint(
            "limits.repo_config_bytes",
            d.repo_config_bytes,
            1024,
            64 * MIB,
        ),
        checkout_files: count(r, "limits.checkout_files", d.checkout_files, 10_000_000),
        tf_file_bytes: r.uint("limits.tf_file_bytes", d.tf_file_bytes, 1024, 256 * MIB),
        project_bytes: r.uint("limits.project_bytes", d.project_bytes, 1024, 4096 * MIB),
        loaded_files: count(r, "limits.loaded_files", d.loaded_files, 1_000_000),
        module_instances: count(r, "limits.module_instances", d.module_instances, 1_000_000),
        resource_instances: count(
            r,
            "limits.resource_instances",
            d.resource_instances,
            10_000_000,
        ),
        eval_memory_mb: r.uint("limits.eval_memory_mb", d.eval_memory_mb, 8, 65_536),
    };
    if out.tf_file_bytes > out.project_bytes {
        r.problem(
            "limits.tf_file_bytes",
            "must not be more than limits.project_bytes (a file larger than the project total could never be read)",
        );
    }
    out
}
