//! Shared by the `engine_*` tests: the simulator on port 0, a project directory (its own
//! checkout), a SQLite store file, and `atoll plan/apply/state` run as the real binary with
//! the bpg environment pointing at the simulator.
#![allow(
    dead_code,
    unreachable_pub,
    reason = "each engine test crate uses part of this"
)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use atoll::proxmox::client::{Auth, ClientSettings, ProxmoxClient};
use atoll::proxmox::types::{GuestKind, NodeName, VmId};
use pvesim::{Scenario, SimOptions, Simulator};
use tempfile::TempDir;

pub mod truth;

pub const TOKEN: &str = "root@pam!atoll=secret";

pub struct Env {
    pub sim: Simulator,
    pub dir: TempDir,
    pub client: ProxmoxClient,
    pub extra_env: Vec<(String, String)>,
}

pub fn options(task_ms: u64) -> SimOptions {
    SimOptions {
        task_duration: Duration::from_millis(task_ms),
        auth_failure_delay: Duration::from_millis(10),
        ..SimOptions::default()
    }
}

impl Env {
    pub async fn start() -> Self {
        Self::with_scenario("{}", options(20)).await
    }

    pub async fn with_scenario(yaml: &str, opts: SimOptions) -> Self {
        let scenario: Scenario = serde_yaml_ng::from_str(yaml).expect("scenario");
        let sim = Simulator::start(&scenario, opts).await.expect("simulator");
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("repo/.git")).expect("checkout");
        std::fs::create_dir_all(dir.path().join("repo/stack")).expect("project dir");
        let mut settings = ClientSettings::new(sim.url(), Auth::ApiToken(TOKEN.to_owned().into()));
        settings.tasks.first_delay = Duration::from_millis(5);
        settings.tasks.max_delay = Duration::from_millis(25);
        let client = ProxmoxClient::new(&settings).expect("client");
        Self {
            sim,
            dir,
            client,
            extra_env: Vec::new(),
        }
    }

    pub fn project(&self) -> PathBuf {
        self.dir.path().join("repo/stack")
    }

    /// Writes a settings file and makes every later command use it (`ATOLL_CONFIG`).
    pub fn write_config(&mut self, yaml: &str) {
        let path = self.dir.path().join("atoll.yaml");
        std::fs::write(&path, yaml).expect("writing the config");
        self.extra_env
            .retain(|(k, _)| k != "ATOLL_CONFIG" && k != "ATOLL_PROTECT__DISCOVER");
        self.extra_env
            .push(("ATOLL_CONFIG".to_owned(), path.display().to_string()));
    }

    pub fn store_url(&self) -> String {
        format!("sqlite://{}", self.dir.path().join("atoll.db").display())
    }

    /// The state the command line keeps for this project (`local`, `stack`, `default`).
    pub async fn state(&self) -> atoll::proxmox::state::StateHandle {
        let store = atoll::store::connect(&self.store_url())
            .await
            .expect("store");
        let scope = atoll::store::StateScope {
            repo: "local".to_owned(),
            project_dir: "stack".to_owned(),
            workspace: "default".to_owned(),
        };
        atoll::proxmox::state::StateHandle::new(store, scope)
    }

    /// Replaces the project's `main.tf`.
    pub fn write_tf(&self, text: &str) {
        std::fs::write(self.project().join("main.tf"), text).expect("writing main.tf");
    }

    pub fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_atoll"));
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("PROXMOX_VE_ENDPOINT", self.sim.url())
            .env("PROXMOX_VE_API_TOKEN", TOKEN)
            .env("ATOLL_STORE__URL", self.store_url())
            .current_dir(self.dir.path())
            .kill_on_drop(true);
        if !self.extra_env.iter().any(|(k, _)| k == "ATOLL_CONFIG") {
            cmd.env("ATOLL_PROTECT__DISCOVER", "false");
        }
        for (k, v) in &self.extra_env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs `atoll <args> --dir <project>`.
    pub async fn atoll(&self, args: &[&str]) -> Output {
        let dir = self.project().display().to_string();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--dir", &dir]);
        let output = self.command(&all).output().await.expect("running atoll");
        eprintln!(
            "$ atoll {}\n--- stdout\n{}--- stderr\n{}--- exit {:?}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
            output.status.code()
        );
        output
    }

    pub async fn apply(&self) -> Output {
        let output = self.atoll(&["apply", "--auto-approve"]).await;
        assert!(output.status.success(), "apply failed: {}", text(&output));
        output
    }

    /// `atoll plan` text; asserts success.
    pub async fn plan(&self) -> String {
        let output = self.atoll(&["plan"]).await;
        assert!(output.status.success(), "plan failed: {}", text(&output));
        stdout(&output)
    }

    pub async fn plan_json(&self) -> serde_json::Value {
        let output = self.atoll(&["plan", "--json"]).await;
        assert!(output.status.success(), "plan failed: {}", text(&output));
        serde_json::from_slice(&output.stdout).expect("plan JSON")
    }

    /// `config?current=1` of a container, as text values.
    pub async fn live_config(&self, vmid: u32) -> BTreeMap<String, String> {
        self.config_of(GuestKind::Lxc, vmid, true).await
    }

    /// `config?current=1` of a VM, as text values.
    pub async fn vm_config(&self, vmid: u32) -> BTreeMap<String, String> {
        self.config_of(GuestKind::Qemu, vmid, true).await
    }

    /// A guest's config, with (`current = false`) or without pending values.
    pub async fn config_of(
        &self,
        kind: GuestKind,
        vmid: u32,
        current: bool,
    ) -> BTreeMap<String, String> {
        let config = self
            .client
            .guest_config(&node(), kind, VmId::new(vmid).expect("vmid"), current)
            .await
            .expect("guest config");
        config
            .values
            .keys()
            .filter_map(|k| Some((k.clone(), config.get(k)?)))
            .collect()
    }

    pub async fn lxc_ids(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = self
            .client
            .cluster_guests()
            .await
            .expect("cluster guests")
            .iter()
            .filter(|g| g.kind == GuestKind::Lxc)
            .map(|g| g.vmid.get())
            .collect();
        ids.sort_unstable();
        ids
    }
}

pub fn node() -> NodeName {
    "pve".parse().expect("node")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `GET path` on the simulator with the test token: PVE's `data`.
pub async fn sim_get(env: &Env, path: &str) -> serde_json::Value {
    let response = reqwest::Client::new()
        .get(format!("{}{path}", env.sim.base_url()))
        .header("Authorization", crate::pvesim_support::TOKEN)
        .send()
        .await
        .expect("the simulator answers");
    let body: serde_json::Value = response.json().await.expect("json");
    body["data"].clone()
}

/// The change of `address` in a JSON plan; fails naming the plan when it has none.
pub fn change<'a>(plan: &'a serde_json::Value, address: &str) -> &'a serde_json::Value {
    plan["resource_changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["address"] == address)
        .unwrap_or_else(|| panic!("no change for {address} in {plan}"))
}
