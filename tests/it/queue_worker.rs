//! The worker pool over job kinds defined here, against each backend (`sqlite::...`,
//! `postgres::...`).

#[path = "queue_worker/handlers.rs"]
pub(crate) mod handlers;

#[path = "queue_worker/cases.rs"]
mod cases;

per_backend!(
    queued_job_runs_to_success_with_durable_log,
    handler_error_marks_job_failed_with_its_message,
    panicking_handler_fails_its_job_and_the_pool_keeps_running,
    pool_never_exceeds_per_repo_or_global_cap,
    job_queued_while_idle_is_picked_up_without_waiting_for_a_poll,
    kinds_without_a_handler_stay_queued,
    job_abandoned_by_a_dead_worker_is_run_again,
    handler_is_told_when_its_lease_is_lost,
    shutdown_stops_claiming_and_waits_for_running_jobs,
    shutdown_after_grace_gives_back_running_and_interrupts_applying,
    interrupted_apply_is_reported_to_the_caller,
);
