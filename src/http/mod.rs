//! The axum router and its middleware (request ids, body limits, timeouts) and `AppError`.
//! Holds no business logic.
