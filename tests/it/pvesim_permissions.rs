//! The simulator's `GET /access/permissions` (pve-access-control `API2/AccessControl.pm`
//! `permissions`, `RPCEnvironment.pm` `permissions`/`get_effective_permissions`): the caller's
//! own privileges by path, a separated token limited to its own entries within its user's,
//! another user's only with `Sys.Audit` on `/access`, and ACLs granted through the API counted
//! at once.

use crate::pvesim_support::Api;

const SCENARIO: &str = r#"
tokens:
  "root@pam!atoll": secret
  "ops@pve!sep": sep-secret
  "ops@pve!full": full-secret
acl:
  - {path: /vms, role: PVEVMAdmin, user: "ops@pve"}
  - {path: /vms, role: PVEVMUser, token: "ops@pve!sep"}
  - {path: /storage/local, role: PVEDatastoreUser, token: "ops@pve!sep", propagate: false}
privsep_tokens: ["ops@pve!sep"]
"#;

async fn as_token(token: &str) -> Api {
    let mut api = Api::scenario(SCENARIO).await;
    api.auth = Some(format!("PVEAPIToken={token}"));
    api
}

fn held(answer: &serde_json::Value, path: &str) -> Vec<String> {
    answer[path]
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_separated_token_holds_its_own_roles_only_where_its_user_holds_them_too() {
    let api = as_token("ops@pve!sep=sep-secret").await;
    let vm = api
        .get_q("/access/permissions", &[("path", "/vms/100")])
        .await
        .ok();
    let privs = held(vm.data(), "/vms/100");
    assert!(privs.contains(&"VM.PowerMgmt".to_owned()), "{privs:?}");
    assert!(
        !privs.contains(&"VM.Allocate".to_owned()),
        "PVEVMUser lacks it: {privs:?}"
    );
    // the token's own storage grant is cut to nothing: its user holds nothing there
    let storage = api
        .get_q("/access/permissions", &[("path", "/storage/local")])
        .await
        .ok();
    assert_eq!(storage.data()["/storage/local"], serde_json::json!({}));
    let full = as_token("ops@pve!full=full-secret").await;
    let vm = full
        .get_q("/access/permissions", &[("path", "/vms/100")])
        .await
        .ok();
    assert!(held(vm.data(), "/vms/100").contains(&"VM.Allocate".to_owned()));
}

#[tokio::test]
async fn without_a_path_every_path_with_a_privilege_is_listed_with_its_propagate_flag() {
    let api = Api::scenario(SCENARIO).await;
    let all = api
        .get_q("/access/permissions", &[("userid", "ops@pve")])
        .await
        .ok();
    let data = all.data().as_object().expect("object");
    assert!(
        data.contains_key("/vms") && !data.contains_key("/"),
        "{data:?}"
    );
    assert_eq!(data["/vms"]["VM.Allocate"], 1);
    let root = api.get("/access/permissions").await.ok();
    assert!(held(root.data(), "/").contains(&"Sys.Modify".to_owned()));
}

#[tokio::test]
async fn another_users_privileges_need_sys_audit_on_access_and_bad_ids_are_refused() {
    let api = as_token("ops@pve!sep=sep-secret").await;
    let other = api
        .get_q("/access/permissions", &[("userid", "root@pam")])
        .await;
    assert_eq!(other.status, 403, "{:?}", other.body);
    assert_eq!(
        other.message(),
        "Permission check failed (/access, Sys.Audit)"
    );
    let own = api
        .get_q("/access/permissions", &[("userid", "ops@pve!sep")])
        .await;
    assert_eq!(own.status, 200, "{:?}", own.body);
    let bad = api
        .get_q("/access/permissions", &[("userid", "nobody")])
        .await;
    assert_eq!(bad.status, 400);
    assert_eq!(
        bad.error("userid"),
        "value does not match the regex pattern"
    );
}

#[tokio::test]
async fn an_acl_granted_through_the_api_counts_at_once() {
    let api = Api::scenario(SCENARIO).await;
    api.put(
        "/access/acl",
        &[
            ("path", "/nodes"),
            ("roles", "PVEAuditor"),
            ("users", "ops@pve"),
        ],
    )
    .await
    .ok();
    let node = api
        .get_q(
            "/access/permissions",
            &[("userid", "ops@pve"), ("path", "/nodes/pve")],
        )
        .await
        .ok();
    assert!(held(node.data(), "/nodes/pve").contains(&"Sys.Audit".to_owned()));
}
