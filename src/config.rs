//! The settings tree: defaults, then YAML, then `ATOLL_*` environment variables. Read at start-up
//! only.
