//! The dashboard in real headless Chromium, driven over WebDriver (`chromedriver` from Debian's
//! `chromium-driver`): log in, unlock a lock, watch a running job's log grow live, and see
//! `<script>` in a repository name as text. Fails (never skips) when the browser is missing;
//! `deploy/install-test-deps.sh` installs it. Screenshots go to `target/screenshots/`.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use atoll::store::{ClaimLimits, JobState};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use crate::web_support;

use crate::support::Container;
use web_support::{EVIL_REPO, REPO, TestApp, start, start_with_forge};

const DEADLINE: Duration = Duration::from_secs(15);

/// A chromedriver process, killed on drop.
struct Driver {
    child: Child,
    port: u16,
    _profile: tempfile::TempDir,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

async fn browser() -> (Driver, Client) {
    let chromedriver = which("chromedriver").unwrap_or_else(|| {
        panic!("chromedriver is not installed: run deploy/install-test-deps.sh (apt-get install chromium chromium-driver)")
    });
    let chromium = which("chromium").unwrap_or_else(|| {
        panic!("chromium is not installed: run deploy/install-test-deps.sh (apt-get install chromium chromium-driver)")
    });
    let port = free_port();
    let child = Command::new(chromedriver)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting chromedriver");
    let profile = tempfile::tempdir().expect("profile dir");
    let driver = Driver {
        child,
        port,
        _profile: profile,
    };
    let caps = json!({
        "browserName": "chrome",
        "goog:chromeOptions": {
            "binary": chromium,
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1280,800",
                format!("--user-data-dir={}", driver._profile.path().display())]
        }
    });
    let caps = caps.as_object().cloned().expect("object");
    let url = format!("http://127.0.0.1:{}", driver.port);
    let started = Instant::now();
    loop {
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        match ClientBuilder::new(connector)
            .capabilities(caps.clone())
            .connect(&url)
            .await
        {
            Ok(client) => return (driver, client),
            Err(e) if started.elapsed() < DEADLINE => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("cannot start a Chromium session through chromedriver: {e}"),
        }
    }
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| PathBuf::from(d).join(name))
        .find(|p| p.is_file())
}

async fn shot(c: &Client, name: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    let png = c.screenshot().await.expect("screenshot");
    std::fs::write(dir.join(format!("{name}.png")), png).expect("write screenshot");
}

/// Waits until the page source satisfies `ok`, or fails with the source.
async fn wait_source(c: &Client, what: &str, ok: impl Fn(&str) -> bool) -> String {
    let started = Instant::now();
    loop {
        let src = c.source().await.expect("source");
        if ok(&src) {
            return src;
        }
        assert!(
            started.elapsed() < DEADLINE,
            "timed out waiting for {what}; page:\n{src}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn log_in(c: &Client, s: &TestApp) {
    c.goto(&s.url("/locks")).await.expect("goto");
    let at = c.current_url().await.expect("url");
    assert_eq!(
        at.path(),
        "/login",
        "an anonymous visit must land on the login page"
    );
    shot(c, "login").await;
    c.find(Locator::Css("input[name=username]"))
        .await
        .expect("username")
        .send_keys("ops")
        .await
        .expect("type");
    c.find(Locator::Css("input[name=password]"))
        .await
        .expect("password")
        .send_keys("correct horse")
        .await
        .expect("type");
    c.find(Locator::Css("button[type=submit]"))
        .await
        .expect("submit")
        .click()
        .await
        .expect("click");
    wait_source(c, "the locks page", |src| src.contains("<h1>Locks")).await;
}

/// Waits until the PR's plan holds a lock.
async fn plan_lock(s: &TestApp, pr: u64) -> atoll::locks::Lock {
    let started = Instant::now();
    loop {
        let locks = s
            .store
            .locks()
            .lock_list(&atoll::locks::LockQuery::default())
            .await
            .expect("locks");
        if let Some(l) = locks.into_iter().find(|l| l.owner.pr == pr) {
            return l;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the plan of #{pr} took no lock"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_in_unlock_and_see_scripts_as_text() {
    let s = start_with_forge(Duration::from_millis(20)).await;
    let w = &s;
    let pr = w
        .fake()
        .open_pr(
            REPO,
            "alice",
            "web",
            &[(
                "envs/dev/main.tf",
                &Container::new("web").cores(2).started(true).hcl(),
            )],
        )
        .await
        .expect("open pr");
    w.comment_containing(pr, "Plan:").await;
    let lock = plan_lock(&s, pr).await;
    s.lock(EVIL_REPO, 9).await;
    s.plan(EVIL_REPO, 9, "<script>alert(3)</script>").await;
    let (_driver, c) = browser().await;
    log_in(&c, &s).await;
    let repo_cell = c
        .find(Locator::XPath("//td[contains(., 'alert(1)')]"))
        .await
        .expect("evil repo cell");
    assert_eq!(
        repo_cell.text().await.expect("text"),
        EVIL_REPO,
        "the name must show as plain text"
    );
    let alert = c.get_alert_text().await;
    assert!(alert.is_err(), "a script ran: {alert:?}");
    shot(&c, "locks").await;
    c.find(Locator::Css(&format!(
        "a[href='/pulls/github.com/acme/infra/{pr}']"
    )))
    .await
    .expect("PR page link")
    .click()
    .await
    .expect("click");
    let pull = wait_source(&c, "the PR page", |src| {
        src.contains(&format!("Pull request #{pr}"))
    })
    .await;
    assert!(
        pull.contains("Plan: 1 to add") && pull.contains("dir: envs/dev workspace: default"),
        "the PR page shows the plan like the comment"
    );
    shot(&c, "pull").await;
    c.goto(&s.url("/locks")).await.expect("goto");
    wait_source(&c, "the locks page", |src| src.contains("<h1>Locks")).await;
    c.find(Locator::XPath("//td/a[text()='#9']"))
        .await
        .expect("the evil repo's PR link")
        .click()
        .await
        .expect("click");
    let evil = wait_source(&c, "the evil PR page", |src| {
        src.contains("Pull request #9")
    })
    .await;
    assert!(
        evil.contains("1 blocked") && evil.contains("2 restarts"),
        "restart and blocked badges"
    );
    let alert = c.get_alert_text().await;
    assert!(alert.is_err(), "a script ran on the PR page: {alert:?}");
    let resource = c
        .find(Locator::XPath("//pre//span[contains(., 'alert(3)')]"))
        .await
        .expect("the resource line");
    assert!(
        resource
            .text()
            .await
            .expect("text")
            .contains("<script>alert(3)</script>"),
        "the resource name shows as text"
    );
    shot(&c, "pull-blocked").await;
    c.goto(&s.url("/locks")).await.expect("goto");
    wait_source(&c, "the locks page", |src| src.contains("<h1>Locks")).await;
    c.find(Locator::Css(&format!(
        "a[href='/locks/{}/unlock']",
        lock.id
    )))
    .await
    .expect("unlock link")
    .click()
    .await
    .expect("click");
    wait_source(&c, "the confirmation", |src| src.contains("Unlock?")).await;
    shot(&c, "unlock-confirm").await;
    c.find(Locator::Css("button.danger"))
        .await
        .expect("unlock button")
        .click()
        .await
        .expect("click");
    let href = format!("/locks/{}/unlock", lock.id);
    wait_source(&c, "the lock to disappear", |src| {
        src.contains("<h1>Locks") && !src.contains(&href)
    })
    .await;
    shot(&c, "locks-after-unlock").await;
    let jobs = s.store.list_jobs(10).await.expect("jobs");
    let announce = jobs
        .iter()
        .find(|j| j.kind == "announce_unlock")
        .expect("announcement queued");
    assert_eq!(announce.payload["actor"]["name"], json!("ops"));
    let told = w
        .comment_containing(pr, "Unlocked from the dashboard")
        .await;
    assert!(
        told.body.contains("ops released the lock on `envs/dev`"),
        "the PR comment must name the actor and the lock: {}",
        told.body
    );
    assert!(told.body.contains("plan -d envs/dev"), "{}", told.body);
    c.goto(&s.url("/apply")).await.expect("goto");
    let activity = wait_source(&c, "the audit list", |src| src.contains("Recent activity")).await;
    assert!(
        activity.contains("<td>ops <span class=\"tag\">dashboard</span></td><td>unlock</td>"),
        "the unlock is not in the activity list"
    );
    for page in ["jobs", "apply", "protect"] {
        c.goto(&s.url(&format!("/{page}"))).await.expect("goto");
        shot(&c, page).await;
    }
    c.close().await.expect("close");
}

#[tokio::test]
async fn running_jobs_log_grows_live_and_the_state_follows() {
    let s = start().await;
    let job = s
        .job(
            "apply",
            &["Refreshing state...", "guest 2100: <b>stopping</b>"],
        )
        .await;
    let limits = ClaimLimits {
        global: 4,
        per_repo: 4,
        per_repo_exempt: &[],
    };
    let claimed = s
        .store
        .claim("w1", &["apply"], Duration::from_secs(60), limits)
        .await
        .expect("claim");
    assert_eq!(claimed.map(|j| j.id), Some(job));
    let (_driver, c) = browser().await;
    log_in(&c, &s).await;
    c.goto(&s.url(&format!("/jobs/{job}"))).await.expect("goto");
    wait_source(&c, "the stored lines", |src| {
        src.contains("Refreshing state")
    })
    .await;
    for n in 1..=3 {
        s.store
            .append_log(job, &format!("guest {n} of 3 applied"))
            .await
            .expect("log");
        let want = format!("guest {n} of 3 applied");
        wait_source(&c, &want, |src| src.contains(&want)).await;
    }
    let log = c
        .find(Locator::Id("log"))
        .await
        .expect("log")
        .text()
        .await
        .expect("text");
    assert!(
        log.contains("guest 2100: <b>stopping</b>"),
        "markup in a log line must stay text: {log}"
    );
    shot(&c, "job-running").await;
    assert!(
        s.store
            .transition(job, "w1", JobState::Succeeded, None)
            .await
            .expect("transition")
    );
    wait_source(&c, "the end of the job", |src| {
        src.contains("class=\"state succeeded\"")
    })
    .await;
    shot(&c, "job-done").await;
    c.close().await.expect("close");
}

/// The newest job of `kind`, waited for.
async fn job_of_kind(s: &TestApp, kind: &str) -> atoll::store::Job {
    let started = Instant::now();
    loop {
        let jobs = s.store.list_jobs(50).await.expect("jobs");
        if let Some(j) = jobs.into_iter().find(|j| j.kind == kind) {
            return j;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no {kind} job was queued"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `(value, max)` of the job page's progress bar, `None` while it is hidden.
async fn progress_bar(c: &Client) -> Option<(u32, u32)> {
    let box_ = c.find(Locator::Id("progress")).await.expect("progress box");
    if box_.attr("hidden").await.expect("hidden").is_some() {
        return None;
    }
    let bar = c.find(Locator::Id("progress-bar")).await.expect("bar");
    let num = |v: Option<String>| v.and_then(|v| v.parse::<f64>().ok());
    let value = num(bar.attr("value").await.expect("value"))?;
    let max = num(bar.attr("max").await.expect("max"))?;
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "small whole numbers set by the page"
    )]
    Some((value as u32, max as u32))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_apply_log_grows_and_its_progress_bar_moves() {
    // Every simulator task takes 1.5 s: `quick` needs one (create), `slow` two (create, start).
    let s = start_with_forge(Duration::from_millis(1500)).await;
    let w = &s;
    let files = format!(
        "{}{}",
        Container::new("quick").cores(1).started(false).hcl(),
        Container::new("slow").cores(1).started(true).hcl()
    );
    let pr = w
        .fake()
        .open_pr(REPO, "alice", "two-guests", &[("envs/dev/main.tf", &files)])
        .await
        .expect("open pr");
    w.comment_containing(pr, "Plan:").await;
    w.fake().set_permission(REPO, "alice", "write");
    w.fake().set_permission(REPO, "bob", "write");
    w.fake()
        .review(REPO, pr, "bob", fakeforge::ReviewAction::Approve)
        .await
        .expect("approve");
    let (_driver, c) = browser().await;
    log_in(&c, &s).await;
    w.fake()
        .comment(REPO, pr, "alice", "atlantis apply")
        .await
        .expect("comment");
    let job = job_of_kind(&s, "apply").await;
    c.goto(&s.url(&format!("/jobs/{}", job.id)))
        .await
        .expect("goto");
    let lines = |src: &str| src.matches("<span>").count();
    let first = c.source().await.expect("source");
    assert!(
        !first.contains("class=\"state succeeded\""),
        "the apply ended before the page opened; make the simulator slower"
    );
    let first_lines = lines(&first);
    let mut seen: Vec<(u32, u32)> = Vec::new();
    let mut applying = false;
    let started = Instant::now();
    loop {
        if let Some(bar) = progress_bar(&c).await
            && seen.last() != Some(&bar)
        {
            seen.push(bar);
            if bar.0 > 0 && bar.0 < bar.1 {
                shot(&c, "job-apply-running").await;
            }
        }
        let src = c.source().await.expect("source");
        applying |= src.contains("class=\"state applying\"");
        if src.contains("class=\"state succeeded\"") || src.contains("class=\"state failed\"") {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the apply did not end; bar values seen: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let end = wait_source(&c, "the job to succeed", |src| {
        src.contains("class=\"state succeeded\"")
    })
    .await;
    if let Some(bar) = progress_bar(&c).await
        && seen.last() != Some(&bar)
    {
        seen.push(bar);
    }
    assert_eq!(seen.last(), Some(&(2, 2)), "the bar ends full: {seen:?}");
    assert!(
        seen.iter().any(|&(done, total)| total == 2 && done < 2),
        "the bar was never seen short of full while the apply ran: {seen:?}"
    );
    assert!(
        seen.len() >= 2,
        "the bar did not move without a reload: {seen:?}"
    );
    assert!(applying, "the state badge never showed `applying` live");
    assert!(
        lines(&end) > first_lines,
        "the log did not grow live ({first_lines} lines at first)"
    );
    assert!(end.contains("progress: 2 of 2 guest(s) finished"), "{end}");
    shot(&c, "job-apply-done").await;
    c.goto(&s.url("/jobs")).await.expect("goto");
    let list = wait_source(&c, "the jobs list", |src| src.contains("<h1>Jobs")).await;
    assert!(
        list.contains("<progress max=\"2\" value=\"2\">"),
        "the jobs list shows the apply's progress bar"
    );
    shot(&c, "jobs-with-progress").await;
    c.close().await.expect("close");
}

/// Without a session every page sends the browser to the login and `/api` answers 401; with
/// one, a form posted without its CSRF token is refused and changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anonymous_pages_and_api_are_closed_and_a_form_without_its_csrf_token_is_refused() {
    let s = start().await;
    let (_driver, c) = browser().await;
    for page in [
        "/jobs",
        "/apply",
        "/protect",
        "/pulls/github.com/acme/infra/7",
    ] {
        c.goto(&s.url(page)).await.expect("goto");
        let at = c.current_url().await.expect("url");
        assert_eq!(at.path(), "/login", "{page} without a session");
    }
    c.goto(&s.url("/api/locks")).await.expect("goto api");
    let status: serde_json::Value = c
        .execute("return fetch('/api/locks').then(r => r.status);", vec![])
        .await
        .expect("fetch status");
    assert_eq!(status, json!(401), "/api without the bearer token");
    let body = c.source().await.expect("source");
    assert!(
        !body.contains("\"locks\""),
        "no data without the token: {body}"
    );

    log_in(&c, &s).await;
    c.goto(&s.url("/apply")).await.expect("goto apply");
    c.execute(
        "document.querySelector('form[action=\"/apply\"] input[name=csrf]').remove();",
        vec![],
    )
    .await
    .expect("strip the token");
    c.find(Locator::Css("form[action='/apply'] button[type=submit]"))
        .await
        .expect("switch button")
        .click()
        .await
        .expect("click");
    let src = wait_source(&c, "the refusal", |src| src.contains("Form expired")).await;
    assert!(src.contains("security token"), "{src}");
    shot(&c, "csrf-refused").await;
    let switch = s.store.audit().apply_switch().await.expect("switch");
    assert!(switch.enabled, "the refused form changed nothing");
}
