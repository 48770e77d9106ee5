//! Forge client and workdir costs on loopback, against the fake forges: API round trips
//! (get PR, post comment, set status) and checkout of a PR head (first fetch, then reuse
//! after a new commit). Prints p50/p95; asserts nothing.

use std::time::{Duration, Instant};

use atoll::forge::{
    CommitSha, CommitStatus, Forge, GiteaApi, GiteaApiSettings, GithubApi, GithubApiSettings,
    GithubAuth, RepoName, StatusKind, StatusState,
};
use atoll::workdir::{PrCheckout, Workdir};
use fakeforge::{FAKE_TOKEN, FakeForge};
use model::ForgeKind;
use secrecy::SecretString;

const REPO: &str = "acme/infra";
const ROUNDS: usize = 200;

fn client(fake: &FakeForge) -> Box<dyn Forge> {
    let token = SecretString::from(FAKE_TOKEN);
    match fake.kind() {
        ForgeKind::Github => Box::new(
            GithubApi::new(&GithubApiSettings {
                api_url: fake.api_url(),
                auth: GithubAuth::Token(token),
                timeout: Duration::from_secs(10),
            })
            .expect("client"),
        ),
        ForgeKind::Gitea => {
            Box::new(GiteaApi::new(&GiteaApiSettings::new(&fake.api_url(), token)).expect("client"))
        }
    }
}

fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "{what:<40} n={:<4} p50={:>9.3?} p95={:>9.3?}",
        samples.len(),
        at(0.5),
        at(0.95)
    );
}

async fn api(kind: ForgeKind) {
    let fake = match kind {
        ForgeKind::Github => FakeForge::github().await,
        ForgeKind::Gitea => FakeForge::gitea().await,
    }
    .expect("fake");
    fake.create_repo(REPO).await.expect("repo");
    let n = fake
        .open_pr(REPO, "alice", "b", &[("a.tf", "x")])
        .await
        .expect("pr");
    let forge = client(&fake);
    let repo = RepoName::parse(REPO).expect("repo");
    let sha = CommitSha::parse(&fake.head_sha(REPO, n).expect("sha")).expect("sha");
    let (mut get, mut post, mut status) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..ROUNDS {
        let t = Instant::now();
        forge.pull_request(&repo, n).await.expect("get");
        get.push(t.elapsed());
        let t = Instant::now();
        forge
            .create_comment(&repo, n, &format!("plan {i}"))
            .await
            .expect("comment");
        post.push(t.elapsed());
        let s = CommitStatus::aggregate(StatusKind::Plan, StatusState::Pending, "planning");
        let t = Instant::now();
        forge.set_status(&repo, &sha, &s).await.expect("status");
        status.push(t.elapsed());
    }
    let name = kind.as_str();
    report(&format!("{name}: get pull request"), get);
    report(&format!("{name}: create comment"), post);
    report(&format!("{name}: set status"), status);
}

async fn checkouts() {
    let fake = FakeForge::github().await.expect("fake");
    fake.create_repo(REPO).await.expect("repo");
    let names: Vec<String> = (0..200)
        .map(|i| format!("stacks/s{i:03}/main.tf"))
        .collect();
    let files: Vec<(&str, &str)> = names
        .iter()
        .map(|n| (n.as_str(), "resource \"x\" \"y\" {}\n"))
        .collect();
    let url = fake.clone_url(REPO).expect("url");
    let repo = RepoName::parse(REPO).expect("repo");
    let data = tempfile::tempdir().expect("tmp");
    let wd = Workdir::new(data.path());
    let (mut first, mut reuse) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        let n = fake
            .open_pr(REPO, "alice", &format!("b{}", first.len()), &files)
            .await
            .expect("pr");
        let sha = CommitSha::parse(&fake.head_sha(REPO, n).expect("sha")).expect("sha");
        let req = PrCheckout {
            host: "github.com",
            repo: &repo,
            number: n,
            clone_url: &url,
            sha: &sha,
            auth_header: None,
        };
        let t = Instant::now();
        wd.checkout(&req).await.expect("checkout");
        first.push(t.elapsed());
        let next = CommitSha::parse(
            &fake
                .push(REPO, n, &[("stacks/s000/main.tf", "changed\n")])
                .await
                .expect("push"),
        )
        .expect("sha");
        let req = PrCheckout { sha: &next, ..req };
        let t = Instant::now();
        wd.checkout(&req).await.expect("checkout");
        reuse.push(t.elapsed());
    }
    report("checkout, new directory (201 files)", first);
    report("checkout, reused after a new commit", reuse);
}

#[tokio::main]
async fn main() {
    api(ForgeKind::Github).await;
    api(ForgeKind::Gitea).await;
    checkouts().await;
}
