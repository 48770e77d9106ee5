//! Conformance: `PUT config` checks and the pending lifecycle (pve-container
//! `update_pct_config`, `cleanup_pending`, `vmconfig_apply_pending`), digests, validation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::pvesim_support as support;

use support::Api;

#[tokio::test]
async fn stop_and_start_apply_pending_changes() {
    let api = Api::start().await;
    api.running_ct().await;
    api.set(100, &[("ostype", "ubuntu")]).await.ok();
    api.run_ok(reqwest::Method::POST, "/nodes/pve/lxc/100/status/stop", &[])
        .await;
    assert!(api.pending_keys(100).await.is_empty());
    assert_eq!(api.config(100, true).await["ostype"], "ubuntu");
}

#[tokio::test]
async fn stopped_ct_applies_everything_at_once() {
    let api = Api::start().await;
    api.create_ct(100, &[]).await;
    api.set(100, &[("features", "nesting=1"), ("ostype", "alpine")])
        .await
        .ok();
    assert!(api.pending_keys(100).await.is_empty());
    assert_eq!(api.config(100, true).await["features"], "nesting=1");
}

#[tokio::test]
async fn changing_unprivileged_is_refused() {
    let api = Api::start().await;
    api.running_ct().await;
    let r = api.set(100, &[("unprivileged", "0")]).await;
    assert_eq!(
        (r.status, r.message()),
        (
            500,
            "unable to modify read-only option: 'unprivileged'".to_owned()
        )
    );
    let r = api.set(100, &[("delete", "unprivileged")]).await;
    assert_eq!(
        r.message(),
        "unable to delete read-only option: 'unprivileged'"
    );
}

#[tokio::test]
async fn deleting_required_options_is_refused() {
    let api = Api::start().await;
    api.running_ct().await;
    for key in ["memory", "rootfs", "ostype"] {
        let r = api.set(100, &[("delete", key)]).await;
        assert_eq!(
            r.message(),
            format!("unable to delete required option '{key}'")
        );
    }
}

#[tokio::test]
async fn deleting_unset_key_only_warns() {
    let api = Api::start().await;
    api.running_ct().await;
    let digest = api.config(100, false).await["digest"].clone();
    let r = api.set(100, &[("delete", "mp7")]).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        api.config(100, false).await["digest"],
        digest,
        "nothing changed, the file is the same"
    );
}

#[tokio::test]
async fn stale_digest_is_refused_with_file_changed_message() {
    let api = Api::start().await;
    api.running_ct().await;
    let digest = api.config(100, false).await["digest"]
        .as_str()
        .unwrap()
        .to_owned();
    api.set(100, &[("cores", "2"), ("digest", &digest)])
        .await
        .ok();
    let r = api.set(100, &[("cores", "3"), ("digest", &digest)]).await;
    assert_eq!(
        (r.status, r.message()),
        (
            500,
            "detected modified configuration - file changed by other user? Try again.".to_owned()
        )
    );
}

#[tokio::test]
async fn setting_the_current_value_clears_its_pending_change() {
    let api = Api::start().await;
    api.running_ct().await;
    let ostype = api.config(100, true).await["ostype"]
        .as_str()
        .unwrap()
        .to_owned();
    api.set(100, &[("ostype", "alpine")]).await.ok();
    assert_eq!(api.pending_keys(100).await, ["ostype"]);
    api.set(100, &[("ostype", &ostype)]).await.ok();
    assert!(api.pending_keys(100).await.is_empty());
}

#[tokio::test]
async fn put_validation_errors_match_pve() {
    let api = Api::start().await;
    api.running_ct().await;
    let r = api.set(100, &[("ostemplate", "x")]).await;
    assert_eq!(
        r.error("ostemplate"),
        "property is not defined in schema and the schema does not allow additional properties"
    );
    let r = api.set(100, &[("delete", "bogus")]).await;
    assert_eq!(r.error("delete"), "unknown option 'bogus'");
    let r = api.set(100, &[("cores", "2"), ("delete", "cores")]).await;
    assert_eq!(
        r.error("delete"),
        "you can't use '-cores' and -delete cores' at the same time"
    );
    let r = api.set(100, &[]).await;
    assert_eq!(
        (r.status, r.message()),
        (500, "no options specified".to_owned())
    );
    let r = api.set(100, &[("memory", "lots")]).await;
    assert_eq!(
        r.error("memory"),
        "type check ('integer') failed - got 'lots'"
    );
}

#[tokio::test]
async fn token_is_not_root_for_root_only_settings() {
    let api = Api::start().await;
    api.running_ct().await;
    let r = api.set(100, &[("features", "nesting=1,fuse=1")]).await;
    assert_eq!((r.status, r.message()), (403, "Permission check failed (changing feature flags (except nesting) is only allowed for root@pam)".to_owned()));
    let r = api.set(100, &[("dev0", "/dev/null")]).await;
    assert_eq!(r.status, 403);
    api.set(100, &[("features", "nesting=1")]).await.ok();
}

/// The values of `GET pending` as a JSON object, key → current value (keys with only a pending
/// value or a queued delete have none).
fn current_values(entries: &serde_json::Value) -> serde_json::Value {
    let values = entries
        .as_array()
        .expect("pending is an array")
        .iter()
        .filter_map(|e| Some((e["key"].as_str()?.to_owned(), e.get("value")?.clone())))
        .collect();
    serde_json::Value::Object(values)
}

/// pve-guest-common `config_with_pending_array` lists the same `load_config` that
/// `vm_config` returns with `current=1` (pve-container `API2/LXC.pm` `vm_pending`,
/// `API2/LXC/Config.pm` `vm_config`): each key's `value` is its current value, the digest among
/// them. atoll's refresh reads `pending` alone on the strength of this.
#[tokio::test]
async fn a_containers_pending_values_are_its_current_config() {
    let api = Api::start().await;
    api.running_ct().await;
    api.set(
        100,
        &[
            ("ostype", "ubuntu"),
            ("cores", "2"),
            ("description", ""),
            ("delete", "hostname"),
        ],
    )
    .await
    .ok();
    assert!(!api.pending_keys(100).await.is_empty(), "changes wait");
    let pending = api.get("/nodes/pve/lxc/100/pending").await.ok();
    assert_eq!(
        current_values(pending.data()),
        api.config(100, true).await,
        "pending: {}",
        pending.data()
    );
}

/// qemu-server masks a cloud-init password in both (`API2/Qemu.pm` `vm_config`: `**********`;
/// `vm_pending`: the same, and a pending one with a trailing space).
#[tokio::test]
async fn a_vms_pending_values_are_its_current_config_with_the_password_masked() {
    let vm = "guests:\n  - vmid: 200\n    type: qemu\n    status: running\n    config: {name: db, cores: 2, memory: 4096, cipassword: hunter2, ciuser: ops, net0: 'virtio=BC:24:11:00:00:C8,bridge=vmbr0'}\n";
    let api = Api::scenario(vm).await;
    let r = api
        .put("/nodes/pve/qemu/200/config", &[("cipassword", "s3cret")])
        .await;
    r.ok();
    let config = api
        .get_q("/nodes/pve/qemu/200/config", &[("current", "1")])
        .await
        .ok();
    assert_eq!(config.data()["cipassword"], "**********");
    let pending = api.get("/nodes/pve/qemu/200/pending").await.ok();
    assert_eq!(current_values(pending.data()), *config.data());
    let text = pending.data().to_string();
    assert!(
        !text.contains("hunter2") && !text.contains("s3cret"),
        "{text}"
    );
}
