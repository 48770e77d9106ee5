//! atoll's integration tests, in one binary so the suite links once. Each module is one
//! behaviour area (`engine_*`, `runner_*`, `webhook_*`, ...); `app_support` is the one test
//! world (a real server with, as asked, a fake forge, the simulator, the login and a manual
//! clock); the other `*_support` modules hold fixtures and helpers. Two peak-memory tests stay binaries of their own (`tests/tfconfig_bomb_memory.rs`,
//! `tests/runner_checkout_limits.rs`): they measure their own process, which other tests must not share.

mod app_support;
#[macro_use]
mod support;
#[macro_use]
mod forge_support;
#[path = "../bombs/mod.rs"]
mod bombs;
mod engine_support;
mod plan_support;
mod pve_client_support;
mod pvesim_support;
mod web_support;
mod webhook_support;

mod commands_grammar;
mod commands_props;
mod comment_render;
mod config_cli;
mod config_forge_output;
mod config_loading;
mod engine_adopt;
mod engine_crash;
mod engine_ct;
mod engine_data_vm;
mod engine_desired;
mod engine_faults;
mod engine_fresh;
mod engine_generated;
mod engine_generated_data;
mod engine_generated_random;
mod engine_generated_time;
mod engine_generated_tls;
mod engine_guard;
mod engine_remote_module;
mod engine_requirements;
mod engine_state;
mod engine_truth;
mod engine_vm;
mod engine_vm_truth;
mod forge_api;
mod forge_errors;
mod forge_webhooks;
mod http_edge;
mod locks_conformance;
mod plan_diff;
mod plan_effects;
mod plan_guard;
mod plan_normalize;
mod plan_order;
mod plan_render;
mod pve_client;
mod pve_client_discover;
mod pve_client_faults;
mod pve_client_proxy;
mod pve_client_tls;
mod pve_client_wire;
mod pvesim_api;
mod pvesim_cli;
mod pvesim_faults;
mod pvesim_hotplug;
mod pvesim_lxc;
mod pvesim_lxc_clone;
mod pvesim_pending;
mod pvesim_qemu;
mod pvesim_qemu_create;
mod pvesim_qemu_hotplug;
mod pvesim_qemu_lifecycle;
mod pvesim_qemu_power;
mod pvesim_storage;
mod queue_kill;
mod queue_worker;
mod repocfg_config;
mod repocfg_props;
mod repocfg_select;
mod runner_bounds;
mod runner_comments;
mod runner_demo;
mod runner_outsiders;
mod runner_pr;
mod runner_restart;
mod runner_undiverged;
mod server_bombs;
mod store_conformance;
mod tfconfig_bombs;
mod tfconfig_eval;
mod tfconfig_fixtures;
mod tfconfig_functions;
mod tfconfig_props;
mod tfconfig_reads;
mod tfconfig_realistic;
mod tfconfig_sandbox;
mod web_browser;
mod web_http;
mod web_login_limits;
mod web_ops;
mod webhook_durability;
mod webhook_gitea;
mod webhook_github_events;
mod webhook_intake;
mod webhook_limits;
mod workdir_git;
mod workdir_modules;
