//! What one load may read from the checkout, expand and allocate. Plain values with no
//! knowledge of atoll's configuration: the server maps its `limits:` settings into [`Limits`],
//! and `atoll validate` uses the defaults.

/// The bounds of one load (one project, one workspace).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest single file read: a `.tf`/`.tf.json`, a variables file, a `file()` target.
    pub file_bytes: u64,
    /// Most bytes read from the checkout in total (each distinct file counted once).
    pub project_bytes: u64,
    /// Most distinct files and module directories read.
    pub loaded_files: usize,
    /// Most module instances across the whole module tree (every `count`/`for_each` instance
    /// of every call, at every depth; the root module is not counted).
    pub module_instances: usize,
    /// Most resource instances across the whole module tree.
    pub resource_instances: usize,
    /// Most bytes of values the evaluation may produce (strings, collections, function and
    /// template results), counted as they are made: a ceiling on the evaluator's memory.
    pub eval_memory_bytes: u64,
    /// Most value nodes the evaluation may produce or copy: a ceiling on its work.
    pub eval_values: u64,
}

/// 1 MiB.
pub const MIB: u64 = 1024 * 1024;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            file_bytes: 4 * MIB,
            project_bytes: 32 * MIB,
            loaded_files: 1_000,
            module_instances: 2_000,
            resource_instances: 10_000,
            eval_memory_bytes: 128 * MIB,
            eval_values: 20_000_000,
        }
    }
}
