//! Fake forges with a client pointed at them, for the `forge_*` and `workdir_*` tests.

#![allow(dead_code, reason = "each test crate uses part of the support module")]

use std::sync::Arc;
use std::time::Duration;

use atoll::forge::{
    Forge, GiteaApi, GiteaApiSettings, GithubApi, GithubApiSettings, GithubAuth, RepoName,
};
use fakeforge::{FAKE_TOKEN, FakeForge};
use model::ForgeKind;
use secrecy::SecretString;

pub(crate) const REPO: &str = "acme/infra";

pub(crate) struct Setup {
    pub(crate) fake: FakeForge,
    pub(crate) forge: Arc<dyn Forge>,
    pub(crate) repo: RepoName,
}

pub(crate) fn client_for(fake: &FakeForge, token: &str) -> Arc<dyn Forge> {
    let token = SecretString::from(token.to_owned());
    match fake.kind() {
        ForgeKind::Github => Arc::new(
            GithubApi::new(&GithubApiSettings {
                api_url: fake.api_url(),
                auth: GithubAuth::Token(token),
                timeout: Duration::from_secs(10),
            })
            .expect("github client"),
        ),
        ForgeKind::Gitea => {
            let mut settings = GiteaApiSettings::new(&fake.api_url(), token);
            settings.timeout = Duration::from_secs(10);
            Arc::new(GiteaApi::new(&settings).expect("gitea client"))
        }
    }
}

/// A fake forge of `kind` with repository `acme/infra`, and a client using the fake's token.
pub(crate) async fn setup(kind: ForgeKind) -> Setup {
    let fake = match kind {
        ForgeKind::Github => FakeForge::github().await,
        ForgeKind::Gitea => FakeForge::gitea().await,
    }
    .expect("fake forge starts");
    fake.create_repo(REPO).await.expect("repo created");
    if kind == ForgeKind::Gitea {
        // Gitea tells only repository admins other users' permissions.
        fake.set_permission(REPO, "atoll-bot", "admin");
    }
    let forge = client_for(&fake, FAKE_TOKEN);
    Setup {
        fake,
        forge,
        repo: RepoName::parse(REPO).expect("valid repo"),
    }
}

/// Runs an async test body once per forge, naming the forge on failure.
#[macro_export]
macro_rules! per_forge {
    ($($name:ident),* $(,)?) => {
        mod github {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(model::ForgeKind::Github).await;
                }
            )*
        }
        mod gitea {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(model::ForgeKind::Gitea).await;
                }
            )*
        }
    };
}
