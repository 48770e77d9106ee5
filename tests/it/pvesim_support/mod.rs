//! Shared helpers for the simulator tests: start it in-process, talk to it with plain reqwest.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use pvesim::{Scenario, SimOptions, Simulator};
use serde_json::Value;

pub const TOKEN: &str = "PVEAPIToken=root@pam!atoll=secret";
pub const TEMPLATE: &str = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst";

/// One response: status, the message PVE sends, the body.
#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub body: Value,
}

impl Resp {
    pub fn data(&self) -> &Value {
        &self.body["data"]
    }

    pub fn message(&self) -> String {
        self.body["message"]
            .as_str()
            .unwrap_or_default()
            .trim_end()
            .to_owned()
    }

    pub fn error(&self, key: &str) -> String {
        self.body["errors"][key]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    pub fn ok(self) -> Self {
        assert_eq!(self.status, 200, "unexpected answer: {:?}", self.body);
        self
    }
}

pub struct Api {
    pub sim: Simulator,
    pub client: reqwest::Client,
    pub base: String,
    pub auth: Option<String>,
}

pub fn opts() -> SimOptions {
    SimOptions {
        task_duration: Duration::from_millis(20),
        auth_failure_delay: Duration::from_millis(10),
        ..SimOptions::default()
    }
}

pub fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

impl Api {
    pub async fn start() -> Self {
        Self::with(Scenario::default(), opts()).await
    }

    pub async fn scenario(yaml: &str) -> Self {
        let scenario: Scenario = serde_yaml_ng::from_str(yaml).expect("scenario parses");
        Self::with(scenario, opts()).await
    }

    pub async fn with(scenario: Scenario, opts: SimOptions) -> Self {
        install_crypto();
        let sim = Simulator::start(&scenario, opts)
            .await
            .expect("simulator starts");
        let base = sim.base_url();
        Self {
            sim,
            client: reqwest::Client::new(),
            base,
            auth: Some(TOKEN.to_owned()),
        }
    }

    pub async fn call(&self, method: reqwest::Method, path: &str, form: &[(&str, &str)]) -> Resp {
        let url = format!("{}{path}", self.base);
        let mut req = self.client.request(method.clone(), url);
        if let Some(auth) = &self.auth {
            req = req.header("Authorization", auth);
        }
        req = if method == reqwest::Method::GET {
            req.query(form)
        } else {
            req.form(form)
        };
        let res = req.send().await.expect("request sent");
        let status = res.status().as_u16();
        let body = res.json::<Value>().await.unwrap_or(Value::Null);
        Resp { status, body }
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.call(reqwest::Method::GET, path, &[]).await
    }

    pub async fn get_q(&self, path: &str, query: &[(&str, &str)]) -> Resp {
        self.call(reqwest::Method::GET, path, query).await
    }

    pub async fn post(&self, path: &str, form: &[(&str, &str)]) -> Resp {
        self.call(reqwest::Method::POST, path, form).await
    }

    pub async fn put(&self, path: &str, form: &[(&str, &str)]) -> Resp {
        self.call(reqwest::Method::PUT, path, form).await
    }

    pub async fn delete(&self, path: &str, form: &[(&str, &str)]) -> Resp {
        self.call(reqwest::Method::DELETE, path, form).await
    }

    /// Waits until the task stops (deadline 10 s); returns its status object.
    pub async fn wait_task(&self, upid: &str) -> Value {
        let node = upid.split(':').nth(1).expect("upid has a node");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let r = self
                .get(&format!("/nodes/{node}/tasks/{upid}/status"))
                .await
                .ok();
            if r.data()["status"] == "stopped" {
                return r.data().clone();
            }
            assert!(Instant::now() < deadline, "task {upid} did not finish");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Runs a task-returning call and waits for it; asserts exit status OK.
    pub async fn run_ok(
        &self,
        method: reqwest::Method,
        path: &str,
        form: &[(&str, &str)],
    ) -> Value {
        let r = self.call(method, path, form).await.ok();
        let upid = r.data().as_str().expect("a UPID").to_owned();
        let status = self.wait_task(&upid).await;
        assert_eq!(status["exitstatus"], "OK", "task {upid}: {status}");
        status
    }

    /// Creates a CT on `pve` with `local-lvm` and extra parameters; waits for the task.
    pub async fn create_ct(&self, vmid: u32, extra: &[(&str, &str)]) {
        let id = vmid.to_string();
        let mut form = vec![
            ("vmid", id.as_str()),
            ("ostemplate", TEMPLATE),
            ("storage", "local-lvm"),
        ];
        form.extend_from_slice(extra);
        self.run_ok(reqwest::Method::POST, "/nodes/pve/lxc", &form)
            .await;
    }

    /// A running CT 100 with one NIC, ready for hotplug tests.
    pub async fn running_ct(&self) {
        self.create_ct(
            100,
            &[
                ("net0", "name=eth0,bridge=vmbr0,ip=10.0.0.5/24,gw=10.0.0.1"),
                ("start", "1"),
                ("hostname", "web"),
            ],
        )
        .await;
    }

    pub async fn config(&self, vmid: u32, current: bool) -> Value {
        let q: &[(&str, &str)] = if current { &[("current", "1")] } else { &[] };
        self.get_q(&format!("/nodes/pve/lxc/{vmid}/config"), q)
            .await
            .ok()
            .data()
            .clone()
    }

    /// `GET pending` as a map key → entry.
    pub async fn pending(&self, vmid: u32) -> serde_json::Map<String, Value> {
        let r = self
            .get(&format!("/nodes/pve/lxc/{vmid}/pending"))
            .await
            .ok();
        r.data()
            .as_array()
            .expect("pending is an array")
            .iter()
            .map(|e| (e["key"].as_str().unwrap_or_default().to_owned(), e.clone()))
            .collect()
    }

    /// Keys with a queued change (`pending` or `delete`).
    pub async fn pending_keys(&self, vmid: u32) -> Vec<String> {
        self.pending(vmid)
            .await
            .into_iter()
            .filter(|(_, e)| e.get("pending").is_some() || e.get("delete").is_some())
            .map(|(k, _)| k)
            .collect()
    }

    pub async fn set(&self, vmid: u32, form: &[(&str, &str)]) -> Resp {
        self.put(&format!("/nodes/pve/lxc/{vmid}/config"), form)
            .await
    }
}
