//! Everything forge-specific: webhook payload parsing into `ForgeEvent`, and (later) the `Forge`
//! trait with its GitHub and Gitea clients. Forge types never leak outside this module.
