//! Conformance: snippets in a storage's real directory, the API's `upload` (which refuses
//! snippets, as PVE does) and pve-guest-common's `check_hookscript` on a guest's `hookscript`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt as _;

use crate::pvesim_support as support;
use support::Api;

fn scenario(dir: &std::path::Path) -> String {
    format!(
        "nodes:\n- name: pve\n  storages:\n  - {{id: local, type: dir, content: [vztmpl, iso, snippets], path: {}, templates: [{}]}}\n  - {{id: local-lvm, type: lvmthin, content: [rootdir, images]}}\n",
        dir.display(),
        support::TEMPLATE.trim_start_matches("local:vztmpl/")
    )
}

/// `PUT .../config` as root@pam (hookscript is root-only), answering PVE's message or "".
async fn set_hookscript_as_root(api: &Api, vmid: u32, volid: &str) -> String {
    let r = api
        .post(
            "/access/ticket",
            &[("username", "root@pam"), ("password", "secret")],
        )
        .await
        .ok();
    let cookie = format!("PVEAuthCookie={}", r.data()["ticket"].as_str().unwrap());
    let csrf = r.data()["CSRFPreventionToken"].as_str().unwrap().to_owned();
    let res = api
        .client
        .put(format!("{}/nodes/pve/lxc/{vmid}/config", api.base))
        .header("Cookie", cookie)
        .header("CSRFPreventionToken", csrf)
        .form(&[("hookscript", volid)])
        .send()
        .await
        .unwrap();
    let ok = res.status().is_success();
    let body: serde_json::Value = res.json().await.unwrap_or_default();
    if ok {
        String::new()
    } else {
        body["message"]
            .as_str()
            .unwrap_or_default()
            .trim()
            .to_owned()
    }
}

#[tokio::test]
async fn a_hookscript_must_be_an_executable_snippet_that_exists() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("snippets")).unwrap();
    let api = Api::scenario(&scenario(dir.path())).await;
    api.create_ct(100, &[]).await;
    assert_eq!(
        set_hookscript_as_root(&api, 100, "local:snippets/hook.sh").await,
        "script 'local:snippets/hook.sh' does not exist"
    );
    let path = dir.path().join("snippets/hook.sh");
    std::fs::write(&path, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(
        set_hookscript_as_root(&api, 100, "local:snippets/hook.sh").await,
        "script 'local:snippets/hook.sh' is not executable"
    );
    assert_eq!(
        set_hookscript_as_root(&api, 100, "local:iso/hook.sh").await,
        "'local:iso/hook.sh' is not in the snippets directory"
    );
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(
        set_hookscript_as_root(&api, 100, "local:snippets/hook.sh").await,
        ""
    );
    assert_eq!(
        api.config(100, true).await["hookscript"],
        "local:snippets/hook.sh"
    );
}

#[tokio::test]
async fn snippets_in_the_directory_are_listed_and_deleted_and_dotfiles_are_not_listed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("snippets")).unwrap();
    std::fs::write(dir.path().join("snippets/user.yaml"), "#cloud-config\n").unwrap();
    std::fs::write(dir.path().join("snippets/.partial"), "x").unwrap();
    let api = Api::scenario(&scenario(dir.path())).await;
    let r = api
        .get_q(
            "/nodes/pve/storage/local/content",
            &[("content", "snippets")],
        )
        .await
        .ok();
    let list = r.data().as_array().unwrap();
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["volid"], "local:snippets/user.yaml");
    assert_eq!(list[0]["format"], "snippet");
    assert_eq!(list[0]["size"], 14);
    let r = api.get("/storage/local").await.ok();
    assert_eq!(r.data()["path"], dir.path().display().to_string());
    api.run_ok(
        reqwest::Method::DELETE,
        "/nodes/pve/storage/local/content/local:snippets%2Fuser.yaml",
        &[],
    )
    .await;
    assert!(!dir.path().join("snippets/user.yaml").exists());
}

#[tokio::test]
async fn upload_refuses_snippets_and_content_the_storage_does_not_hold() {
    let api = Api::start().await;
    // multipart/form-data as pve-http-server reads it: the params, then the file `filename`
    let form = |content: &str, name: &str| {
        format!(
            "--XX\r\nContent-Disposition: form-data; name=\"content\"\r\n\r\n{content}\r\n--XX\r\nContent-Disposition: form-data; name=\"filename\"; filename=\"{name}\"\r\nContent-Type: application/octet-stream\r\n\r\ndata\r\n--XX--\r\n"
        )
    };
    let upload = |storage: &str, body: String| {
        api.client
            .post(format!("{}/nodes/pve/storage/{storage}/upload", api.base))
            .header("Authorization", support::TOKEN)
            .header("Content-Type", "multipart/form-data; boundary=XX")
            .body(body)
            .send()
    };
    let r = upload("local", form("snippets", "a.sh")).await.unwrap();
    assert_eq!(r.status(), 400);
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(
        body["errors"]["content"],
        "value 'snippets' does not have a value in the enumeration 'iso, vztmpl, import'"
    );
    let r = upload("local-lvm", form("iso", "a.iso")).await.unwrap();
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(
        body["message"].as_str().map(str::trim),
        Some("can't upload to storage type 'lvmthin'")
    );
    let r = upload("local", form("import", "a.qcow2")).await.unwrap();
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(
        body["message"].as_str().map(str::trim),
        Some("storage 'local' does not support 'import' content")
    );
}
