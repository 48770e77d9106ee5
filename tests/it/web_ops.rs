//! Operations views over real HTTP: `/metrics` after a real plan against the Proxmox simulator
//! (job durations, Proxmox requests by endpoint class, bounded labels) and the protected guests
//! page with atoll's own guest discovered by MAC in the simulator.

use crate::web_support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use atoll::proxmox::client::{EndpointClass, Outcome};
use fakeforge::{FAKE_TOKEN, FakeForge};
use pvesim::{Scenario, SimOptions, Simulator};
use web_support::{TestApp, start_with};

const SECRET: &str = "web-ops-webhook-secret";
const PVE_TOKEN: &str = "root@pam!atoll=secret";
const REPO: &str = "acme/infra";
const OWN_MAC: &str = "bc:24:11:0a:70:11";

async fn simulator(scenario: &str) -> Simulator {
    Simulator::start(
        &serde_yaml_ng::from_str::<Scenario>(scenario).expect("scenario"),
        SimOptions {
            task_duration: Duration::from_millis(20),
            ..SimOptions::default()
        },
    )
    .await
    .expect("simulator")
}

async fn scrape(s: &TestApp) -> String {
    let resp = s.http.get(s.url("/metrics")).send().await.expect("metrics");
    assert_eq!(resp.status(), 200);
    resp.text().await.expect("body")
}

/// The value of the sample `series` (name with labels, exactly as exposed), if present.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.parse().ok())
}

/// Scrapes until `series` is at least `min` (deadline 60 s); returns the last scrape.
async fn scrape_until(s: &TestApp, series: &str, min: f64) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let text = scrape(s).await;
        if sample(&text, series).is_some_and(|v| v >= min) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{series} never reached {min}:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A server with the runner, the GitHub fake forge and the simulator; one PR opened.
async fn planned_pr() -> (TestApp, FakeForge, Simulator) {
    let sim = simulator("{}").await;
    let fake = FakeForge::github().await.expect("fake github");
    fake.set_web_host("github.com");
    let extra = format!(
        "github: {{enabled: true, webhook_secret: {SECRET}, bot_user: atoll-bot, api_url: '{}', token: {FAKE_TOKEN}}}\n\
         repo_allowlist: ['github.com/acme/*']\n\
         proxmox: {{endpoint: '{}', api_token: '{PVE_TOKEN}'}}\n\
         protect: {{discover: false}}\n",
        fake.api_url(),
        sim.url()
    );
    let s = start_with(&extra, true).await;
    fake.set_webhook(&s.url("/events"), SECRET);
    fake.create_repo(REPO).await.expect("repo");
    fake.set_permission(REPO, "atoll-bot", "admin");
    let tf = "resource \"proxmox_virtual_environment_container\" \"web\" {\n  node_name = \"pve\"\n  unprivileged = true\n  operating_system {\n    template_file_id = \"local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst\"\n    type = \"debian\"\n  }\n  disk {\n    datastore_id = \"local-lvm\"\n    size = 8\n  }\n}\n";
    fake.open_pr(REPO, "alice", "web", &[("envs/dev/main.tf", tf)])
        .await
        .expect("open pr");
    (s, fake, sim)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_after_a_plan_show_job_durations_and_proxmox_requests_by_class() {
    let (s, _fake, _sim) = planned_pr().await;
    let text = scrape_until(
        &s,
        "atoll_job_duration_seconds_count{kind=\"autoplan\",state=\"succeeded\"}",
        1.0,
    )
    .await;
    assert!(
        text.contains("# TYPE atoll_job_duration_seconds histogram"),
        "{text}"
    );
    assert!(
        sample(
            &text,
            "atoll_job_duration_seconds_bucket{kind=\"autoplan\",state=\"succeeded\",le=\"+Inf\"}"
        )
        .is_some_and(|n| n >= 1.0),
        "{text}"
    );
    // The plan's refresh lists the cluster's guests once: at least one `cluster` exchange.
    assert!(
        sample(
            &text,
            "atoll_proxmox_requests_total{class=\"cluster\",result=\"ok\"}"
        )
        .is_some_and(|n| n >= 1.0),
        "{text}"
    );
    assert!(
        text.contains("# TYPE atoll_proxmox_request_duration_seconds histogram"),
        "{text}"
    );
    assert!(
        sample(
            &text,
            "atoll_proxmox_request_duration_seconds_count{class=\"cluster\"}"
        )
        .is_some_and(|n| n >= 1.0),
        "{text}"
    );
}

/// Every label of every sample, as (name, value) pairs.
fn labels(line: &str) -> Vec<(String, String)> {
    let Some((_, rest)) = line.split_once('{') else {
        return Vec::new();
    };
    let body = rest.rsplit_once('}').map_or(rest, |(b, _)| b);
    body.split("\",")
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once("=\"").expect("label=\"value\"");
            (k.to_owned(), v.trim_end_matches('"').to_owned())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_metrics_label_value_comes_from_a_fixed_set() {
    let (s, _fake, _sim) = planned_pr().await;
    // A bad delivery adds a webhook series with another result.
    let bad = s
        .http
        .post(s.url("/events"))
        .header("x-github-event", "ping")
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .expect("post");
    assert!(bad.status().is_client_error());
    let text = scrape_until(
        &s,
        "atoll_job_duration_seconds_count{kind=\"autoplan\",state=\"succeeded\"}",
        1.0,
    )
    .await;
    let kinds = [
        "autoplan",
        "plan",
        "apply",
        "unlock",
        "pr_closed",
        "reply",
        "help",
        "version",
        "announce_unlock",
    ];
    let states = [
        "queued",
        "running",
        "applying",
        "succeeded",
        "failed",
        "interrupted",
        "cancelled",
    ];
    let classes: Vec<&str> = EndpointClass::ALL.iter().map(|c| c.as_str()).collect();
    let mut results: Vec<&str> = Outcome::ALL.iter().map(|o| o.as_str()).collect();
    results.extend([
        "queued",
        "ignored",
        "bad_signature",
        "refused",
        "bad_request",
        "error",
    ]);
    let allowed: BTreeMap<&str, Vec<&str>> = BTreeMap::from([
        ("kind", kinds.to_vec()),
        ("state", states.to_vec()),
        ("class", classes),
        ("result", results),
        ("forge", vec!["github", "gitea", "unknown"]),
    ]);
    let mut seen = BTreeSet::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        for (k, v) in labels(line) {
            if k == "le" {
                assert!(v == "+Inf" || v.parse::<f64>().is_ok(), "{line}");
                continue;
            }
            let set = allowed
                .get(k.as_str())
                .unwrap_or_else(|| panic!("unexpected label {k} in {line}"));
            assert!(
                set.contains(&v.as_str()),
                "label {k}={v:?} not in the fixed set: {line}"
            );
            seen.insert(k);
        }
    }
    // The scrape did exercise every label (so the check above was not vacuous).
    for k in ["kind", "state", "class", "result", "forge"] {
        assert!(seen.contains(k), "no sample with label {k}:\n{text}");
    }
    // Nothing from the PR or the guests leaks into the metrics.
    assert!(
        !text.contains("acme") && !text.contains("envs/dev"),
        "{text}"
    );
}

/// A server whose cluster is `scenario` and whose "own" MAC is [`OWN_MAC`].
async fn protect_server(scenario: &str) -> (TestApp, Simulator) {
    let sim = simulator(scenario).await;
    let extra = format!(
        "proxmox: {{endpoint: '{}', api_token: '{PVE_TOKEN}'}}\n\
         protect: {{discover: true, local_macs: ['{OWN_MAC}'], guests: [{{vm_id: 150}}]}}\n",
        sim.url()
    );
    (start_with(&extra, false).await, sim)
}

fn guest(vmid: u32, name: &str, mac: &str) -> String {
    format!(
        "  - {{vmid: {vmid}, status: running, config: {{hostname: {name}, net0: 'name=eth0,bridge=vmbr0,hwaddr={mac},ip=dhcp,type=veth'}}}}\n"
    )
}

async fn protect_page(s: &TestApp) -> String {
    let (cookie, _) = s.login().await;
    let resp = s.get(&cookie, "/protect").await;
    assert_eq!(resp.status(), 200);
    resp.text().await.expect("body")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_guests_page_shows_the_guest_discovered_by_mac_and_the_mac() {
    let scenario = format!(
        "guests:\n{}{}",
        guest(120, "atoll-host", "BC:24:11:0A:70:11"),
        guest(121, "db", "BC:24:11:0A:70:12")
    );
    let (s, _sim) = protect_server(&scenario).await;
    let html = protect_page(&s).await;
    assert!(html.contains("CT id 150"), "{html}");
    let own = html
        .split("id=\"own-guest\"")
        .nth(1)
        .and_then(|rest| rest.split("</p>").next())
        .unwrap_or_else(|| panic!("no own-guest paragraph: {html}"));
    assert!(own.contains("lxc 120"), "{own}");
    assert!(own.contains("atoll-host"), "{own}");
    assert!(own.contains("BC:24:11:0A:70:11"), "{own}");
    assert!(!own.contains("121"), "{own}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_guests_page_says_plainly_when_discovery_finds_none_or_several() {
    let (s, _sim) = protect_server(&format!(
        "guests:\n{}",
        guest(121, "db", "BC:24:11:0A:70:12")
    ))
    .await;
    let html = protect_page(&s).await;
    assert!(
        html.contains("No running guest has one of this machine's MAC"),
        "{html}"
    );
    assert!(html.contains("protect.guests"), "{html}");

    let scenario = format!(
        "guests:\n{}{}",
        guest(120, "one", "BC:24:11:0A:70:11"),
        guest(122, "clone", "BC:24:11:0A:70:11")
    );
    let (s, _sim) = protect_server(&scenario).await;
    let html = protect_page(&s).await;
    assert!(html.contains("Several guests have this machine"), "{html}");
    assert!(
        html.contains("lxc 120 on pve") && html.contains("lxc 122 on pve"),
        "{html}"
    );
    assert!(html.contains("every plan fails until you pin"), "{html}");
}

/// Log output of this test binary (installed once, for every test in it).
fn captured_logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    Arc::clone(LOGS.get_or_init(|| {
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&logs);
        let _ = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_ansi(false)
            .with_writer(move || Sink(Arc::clone(&sink)))
            .try_init();
        logs
    }))
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("logs").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn request_id(resp: &reqwest::Response) -> String {
    resp.headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_else(|| panic!("no x-request-id on {}", resp.url()))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_response_carries_a_request_id_that_errors_and_logs_name() {
    let logs = captured_logs();
    let s = start_with("", false).await;
    // Every route family answers with an id, generated when the client sent none.
    let mut seen = BTreeSet::new();
    for path in [
        "/locks",
        "/login",
        "/api/locks",
        "/metrics",
        "/healthz",
        "/static/atoll.css",
    ] {
        let resp = s.http.get(s.url(path)).send().await.expect("get");
        seen.insert(request_id(&resp));
    }
    let events = s
        .http
        .post(s.url("/events"))
        .body("{}")
        .send()
        .await
        .expect("post");
    seen.insert(request_id(&events));
    assert_eq!(seen.len(), 7, "ids are unique per request: {seen:?}");

    // A sane id from the client (a proxy's) is kept, and an API error names it.
    let resp = s
        .http
        .get(s.url("/api/locks"))
        .header("x-request-id", "proxy-4f2a.77")
        .send()
        .await
        .expect("get");
    assert_eq!(resp.status(), 401);
    assert_eq!(request_id(&resp), "proxy-4f2a.77");
    let body: serde_json::Value = resp.json().await.expect("json");
    assert_eq!(body["request_id"], "proxy-4f2a.77", "{body}");

    // An unusable one is replaced.
    for bad in ["has space", "<script>", &"x".repeat(129)] {
        let resp = s
            .http
            .get(s.url("/healthz"))
            .header("x-request-id", bad)
            .send()
            .await
            .expect("get");
        let id = request_id(&resp);
        assert_ne!(id, bad);
        assert_eq!(id.len(), 36, "a generated UUID: {id}");
    }

    // A dashboard error page shows the id.
    let (cookie, _) = s.login().await;
    let resp = s
        .http
        .post(s.url("/apply"))
        .header(reqwest::header::COOKIE, &cookie)
        .header("x-request-id", "dash-err-1")
        .form(&[("enabled", "false")])
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), 403);
    let html = resp.text().await.expect("body");
    assert!(
        html.contains("<span class=\"mono\" id=\"request-id\">dash-err-1</span>"),
        "{html}"
    );

    // The request span carries the id into the log lines of the request.
    let resp = s
        .http
        .post(s.url("/events"))
        .header("x-request-id", "trace-me-5150")
        .header("content-type", "application/json")
        .header("x-github-event", "pull_request")
        .header("x-github-delivery", "d-trace")
        .header("x-hub-signature-256", "sha256=00")
        .body("{}")
        .send()
        .await
        .expect("post");
    assert!(resp.status().is_client_error(), "{}", resp.status());
    let text = String::from_utf8_lossy(&logs.lock().expect("logs")).into_owned();
    let line = text
        .lines()
        .find(|l| l.contains("trace-me-5150"))
        .unwrap_or_else(|| panic!("no log line names the request id:\n{text}"));
    assert!(line.contains("request"), "{line}");
    assert!(
        line.contains("route=\"/events\""),
        "the matched route: {line}"
    );

    // The span names the route a request matched, not the path it asked for.
    let resp = s
        .http
        .get(s.url("/api/jobs/secret-looking-id-7731"))
        .header("x-request-id", "route-me-1")
        .send()
        .await
        .expect("get");
    assert_eq!(resp.status(), 401);
    let text = String::from_utf8_lossy(&logs.lock().expect("logs")).into_owned();
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("route-me-1")).collect();
    assert!(
        !lines.is_empty(),
        "no log line for the API request:\n{text}"
    );
    for line in lines {
        assert!(line.contains("route=\"/api/jobs/{id}\""), "{line}");
        assert!(
            !line.contains("secret-looking-id-7731"),
            "the raw path is logged: {line}"
        );
    }
}
