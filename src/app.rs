//! Composition root: builds the state, starts listeners and workers, shuts down gracefully.
