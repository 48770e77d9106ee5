//! Conformance of the simulated access control API (`PVE::API2::User`, `Group`, `Role`,
//! `ACL`): users with groups, roles with PVE's privileges and built-in roles, ACL entries for
//! users, groups and tokens, tokens whose secret is answered once and then authenticates;
//! every refusal in PVE's words.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use support::{Api, Resp};

fn died(r: &Resp, msg: &str) {
    assert_eq!(
        (r.status, r.message()),
        (500, msg.to_owned()),
        "{:?}",
        r.body
    );
}

#[tokio::test]
async fn users_and_groups_are_created_read_changed_and_deleted() {
    let api = Api::start().await;
    api.post(
        "/access/groups",
        &[("groupid", "ops"), ("comment", "operators")],
    )
    .await
    .ok();
    api.post(
        "/access/users",
        &[
            ("userid", "alice@pve"),
            ("password", "long-enough"),
            ("groups", "ops"),
            ("email", "alice@example.com"),
        ],
    )
    .await
    .ok();
    let alice = api.get("/access/users/alice@pve").await.ok();
    assert_eq!(alice.data()["groups"], serde_json::json!(["ops"]));
    assert_eq!(alice.data()["enable"], 1);
    assert_eq!(alice.data()["email"], "alice@example.com");
    let group = api.get("/access/groups/ops").await.ok();
    assert_eq!(group.data()["members"], serde_json::json!(["alice@pve"]));
    assert_eq!(group.data()["comment"], "operators");

    api.put(
        "/access/users/alice@pve",
        &[("enable", "0"), ("groups", "")],
    )
    .await
    .ok();
    let alice = api.get("/access/users/alice@pve").await.ok();
    assert_eq!(alice.data()["enable"], 0);
    assert_eq!(alice.data()["groups"], serde_json::json!([]));

    died(
        &api.post("/access/users", &[("userid", "alice@pve")]).await,
        "create user failed: user 'alice@pve' already exists",
    );
    died(
        &api.post(
            "/access/users",
            &[("userid", "bob@pve"), ("groups", "nope")],
        )
        .await,
        "create user failed: no such group 'nope'",
    );
    let bad = api.post("/access/users", &[("userid", "bob")]).await;
    assert_eq!(bad.status, 400, "{:?}", bad.body);
    assert!(
        bad.error("userid").contains("invalid format"),
        "{:?}",
        bad.body
    );
    let short = api
        .post(
            "/access/users",
            &[("userid", "bob@pve"), ("password", "short")],
        )
        .await;
    assert_eq!(short.status, 400, "{:?}", short.body);

    api.delete("/access/users/alice@pve", &[]).await.ok();
    died(
        &api.get("/access/users/alice@pve").await,
        "no such user ('alice@pve')",
    );
    api.delete("/access/groups/ops", &[]).await.ok();
    died(
        &api.get("/access/groups/ops").await,
        "group 'ops' does not exist",
    );
}

#[tokio::test]
async fn roles_take_only_pve_privileges_and_built_in_roles_stay() {
    let api = Api::start().await;
    api.post(
        "/access/roles",
        &[("roleid", "Deployer"), ("privs", "VM.Audit,VM.PowerMgmt")],
    )
    .await
    .ok();
    let role = api.get("/access/roles/Deployer").await.ok();
    assert_eq!(
        role.data(),
        &serde_json::json!({"VM.Audit": 1, "VM.PowerMgmt": 1})
    );
    api.put("/access/roles/Deployer", &[("privs", "Sys.Audit")])
        .await
        .ok();
    let role = api.get("/access/roles/Deployer").await.ok();
    assert_eq!(role.data(), &serde_json::json!({"Sys.Audit": 1}));
    let bad = api
        .post("/access/roles", &[("roleid", "X"), ("privs", "VM.Nope")])
        .await;
    assert_eq!(bad.status, 400);
    assert!(bad.error("privs").contains("invalid privilege 'VM.Nope'"));
    died(
        &api.put("/access/roles/PVEAdmin", &[("privs", "VM.Audit")])
            .await,
        "auto-generated role 'PVEAdmin' cannot be modified",
    );
    died(
        &api.post("/access/roles", &[("roleid", "PVEAuditor")]).await,
        "create role failed: role 'PVEAuditor' already exists",
    );
    let roles = api.get("/access/roles").await.ok();
    let listed = roles.data().as_array().unwrap();
    let auditor = listed.iter().find(|r| r["roleid"] == "PVEAuditor").unwrap();
    assert_eq!(auditor["special"], 1);
    assert!(auditor["privs"].as_str().unwrap().contains("Sys.Audit"));
}

#[tokio::test]
async fn acl_entries_name_users_groups_and_tokens_and_go_with_them() {
    let api = Api::start().await;
    api.post("/access/users", &[("userid", "ci@pve")])
        .await
        .ok();
    api.post("/access/groups", &[("groupid", "ops")]).await.ok();
    let made = api
        .post("/access/users/ci@pve/token/deploy", &[("privsep", "0")])
        .await
        .ok();
    assert_eq!(made.data()["full-tokenid"], "ci@pve!deploy");
    assert_eq!(made.data()["info"]["privsep"], 0);
    let secret = made.data()["value"].as_str().unwrap().to_owned();

    for (key, who) in [
        ("users", "ci@pve"),
        ("groups", "ops"),
        ("tokens", "ci@pve!deploy"),
    ] {
        api.put(
            "/access/acl",
            &[("path", "/vms/100"), ("roles", "PVEVMUser"), (key, who)],
        )
        .await
        .ok();
    }
    let acl = api.get("/access/acl").await.ok();
    let entries = acl.data().as_array().unwrap();
    assert_eq!(entries.len(), 3, "{entries:?}");
    assert!(
        entries
            .iter()
            .all(|e| e["propagate"] == 1 && e["roleid"] == "PVEVMUser")
    );

    // the token made above authenticates
    let mut as_token = Api::start().await;
    as_token.base = api.base.clone();
    as_token.auth = Some(format!("PVEAPIToken=ci@pve!deploy={secret}"));
    as_token.get("/version").await.ok();

    let bad_path = api
        .put(
            "/access/acl",
            &[
                ("path", "/nope"),
                ("roles", "PVEVMUser"),
                ("users", "ci@pve"),
            ],
        )
        .await;
    assert_eq!(bad_path.error("path"), "invalid ACL path '/nope'");
    died(
        &api.put(
            "/access/acl",
            &[("path", "/"), ("roles", "Nope"), ("users", "ci@pve")],
        )
        .await,
        "ACL update failed: role 'Nope' does not exist",
    );
    died(
        &api.put(
            "/access/acl",
            &[("path", "/"), ("roles", "PVEAuditor"), ("users", "x@pve")],
        )
        .await,
        "ACL update failed: user 'x@pve' does not exist",
    );
    let nobody = api
        .put("/access/acl", &[("path", "/"), ("roles", "PVEAuditor")])
        .await;
    assert_eq!(nobody.status, 400);

    api.put(
        "/access/acl",
        &[
            ("path", "/vms/100"),
            ("roles", "PVEVMUser"),
            ("groups", "ops"),
            ("delete", "1"),
        ],
    )
    .await
    .ok();
    assert_eq!(
        api.get("/access/acl")
            .await
            .data()
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // deleting the user takes its token (and the token's secret) and their entries with it
    api.delete("/access/users/ci@pve", &[]).await.ok();
    assert_eq!(api.get("/access/acl").await.data(), &serde_json::json!([]));
    let refused = as_token.get("/version").await;
    assert_eq!(refused.status, 401, "{:?}", refused.body);
}

#[tokio::test]
async fn tokens_are_read_changed_and_removed() {
    let api = Api::start().await;
    api.post("/access/users", &[("userid", "ci@pve")])
        .await
        .ok();
    api.post(
        "/access/users/ci@pve/token/deploy",
        &[("comment", "pipelines"), ("expire", "2019765600")],
    )
    .await
    .ok();
    let again = api.post("/access/users/ci@pve/token/deploy", &[]).await;
    assert_eq!(again.error("tokenid"), "Token already exists.");
    let token = api.get("/access/users/ci@pve/token/deploy").await.ok();
    assert_eq!(
        token.data(),
        &serde_json::json!({"comment": "pipelines", "expire": 2019765600, "privsep": 1})
    );
    api.put(
        "/access/users/ci@pve/token/deploy",
        &[("privsep", "0"), ("delete", "comment")],
    )
    .await
    .ok();
    let token = api.get("/access/users/ci@pve/token/deploy").await.ok();
    assert_eq!(token.data()["privsep"], 0);
    assert!(token.data().get("comment").is_none());
    api.delete("/access/users/ci@pve/token/deploy", &[])
        .await
        .ok();
    died(
        &api.get("/access/users/ci@pve/token/deploy").await,
        "no such token 'deploy' for user 'ci@pve'",
    );
}
