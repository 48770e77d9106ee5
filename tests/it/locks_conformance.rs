//! The `LockStore` conformance suite: locks, saved plans, audit events and the apply switch,
//! run against SQLite, and against PostgreSQL when `ATOLL_TEST_DATABASE_URL` is set.

#[path = "locks_conformance/cases.rs"]
mod cases;

per_backend!(
    acquire_takes_every_key_and_lists_owner_info,
    second_pr_plan_reports_lock_owner_and_takes_nothing,
    reacquire_by_same_pr_keeps_id_and_updates_owner_info,
    keys_differing_in_workspace_or_project_are_separate_locks,
    concurrent_acquirers_of_overlapping_keys_never_both_win,
    unlock_with_dir_flag_releases_only_that_lock,
    unlock_without_flags_releases_only_that_prs_locks,
    unlock_by_id_is_audited_with_actor_and_frees_the_key,
    unlock_of_unknown_lock_releases_nothing_and_audits_nothing,
    unlock_discards_the_released_keys_current_plan,
    closing_pr_releases_locks_deletes_plans_and_audits,
    lock_list_filters_by_repo_and_pr,
    saving_a_plan_supersedes_only_the_same_keys_previous_plan,
    saved_plan_keeps_document_and_provenance,
    saving_a_plan_shows_its_summary_on_the_prs_lock,
    new_commits_supersede_every_current_plan_of_the_pr,
    concurrent_saves_leave_exactly_one_current_plan,
    audit_events_list_newest_first_and_page_backwards,
    audit_events_cannot_be_changed_or_deleted,
    apply_switch_starts_on_with_nobody_named,
    turning_apply_switch_off_records_who_and_audits_once,
    concurrent_switch_offs_audit_exactly_once,
    locks_plans_and_switch_survive_reopening_the_store,
    plan_comments_are_replaced_per_pr_and_survive_reopening,
    a_state_change_supersedes_its_projects_plan_and_is_audited,
    policy_checks_are_saved_with_the_plan_from_what_was_read_and_a_new_plan_has_none,
);
