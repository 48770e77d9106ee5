//! The Proxmox VE client against the in-process simulator (`pvesim`) over real HTTP on
//! port 0, and over TLS with the simulator's CA file: the LXC lifecycle, live versus pending
//! changes, PVE's refusals as typed errors, ticket login, storage, QEMU reads.

use crate::pve_client_support;

use atoll::proxmox::client::{
    Auth, ClientSettings, ConfigChange, ConflictKind, DeleteOptions, PowerAction, ProxmoxClient,
    PveError, RunState, Tls,
};
use atoll::proxmox::types::{Features, GuestKind, StorageId};
use pve_client_support::sim::*;
use pve_client_support::vmid;
use pvesim::{DEFAULT_TEMPLATE, Scenario, SimOptions, Simulator};

fn token() -> Auth {
    sim_token()
}

#[tokio::test]
async fn container_lifecycle_runs_end_to_end() {
    let (_sim, client) = start("{}").await;
    assert!(
        client
            .version()
            .await
            .expect("version")
            .version
            .starts_with('9')
    );
    assert_eq!(client.nodes().await.expect("nodes")[0].node, pve());
    let id = client.next_id(None).await.expect("nextid");
    create_running(&client, id.get()).await;

    let config = client
        .guest_config(&pve(), GuestKind::Lxc, id, true)
        .await
        .expect("config");
    let nets = config.lxc_nets().expect("nets parse");
    let mac = nets[0].1.hwaddr.expect("PVE generated a MAC");
    assert_eq!(mac.bytes()[..3], [0xBC, 0x24, 0x11]);
    let interfaces = client
        .lxc_interfaces(&pve(), id)
        .await
        .expect("interfaces")
        .expect("running");
    let eth0 = interfaces.iter().find(|i| i.name == "eth0").expect("eth0");
    assert_eq!(
        eth0.hwaddr.as_deref().map(str::to_uppercase),
        Some(mac.to_string())
    );

    let guests = client.cluster_guests().await.expect("resources");
    let me = guests.iter().find(|g| g.vmid == id).expect("listed");
    assert_eq!((me.kind, me.status), (GuestKind::Lxc, RunState::Running));

    let upid = client
        .guest_resize(
            &pve(),
            atoll::proxmox::types::GuestKind::Lxc,
            id,
            "rootfs",
            "+1G",
            None,
        )
        .await
        .expect("resize");
    client.wait_task(&upid).await.expect("resized");
    let shutdown = PowerAction::Shutdown {
        timeout: Some(10),
        force_stop: true,
    };
    let upid = client
        .guest_power(&pve(), atoll::proxmox::types::GuestKind::Lxc, id, shutdown)
        .await
        .expect("shutdown");
    client.wait_task(&upid).await.expect("stopped");
    let options = DeleteOptions {
        purge: true,
        destroy_unreferenced_disks: true,
        force: false,
    };
    let upid = client
        .guest_delete(&pve(), atoll::proxmox::types::GuestKind::Lxc, id, options)
        .await
        .expect("delete");
    client.wait_task(&upid).await.expect("deleted");
    let gone = client
        .guest_status(&pve(), GuestKind::Lxc, id)
        .await
        .expect_err("gone");
    assert!(matches!(gone, PveError::NotFound(_)), "{gone:?}");
}

#[tokio::test]
async fn live_and_pending_changes_read_back_through_config_and_pending() {
    let (_sim, client) = start("{}").await;
    create_running(&client, 100).await;
    let before = client
        .guest_config(&pve(), GuestKind::Lxc, vmid(100), true)
        .await
        .expect("cfg");
    let mut change = ConfigChange {
        digest: before.digest.clone(),
        ..ConfigChange::default()
    };
    change.set.insert("memory".into(), "1024".into());
    change.set.insert("features".into(), "nesting=1".into());
    client
        .guest_update_config(
            &pve(),
            atoll::proxmox::types::GuestKind::Lxc,
            vmid(100),
            &change,
        )
        .await
        .expect("put");

    let live = client
        .guest_config(&pve(), GuestKind::Lxc, vmid(100), true)
        .await
        .expect("live");
    assert_eq!(
        live.get("memory").as_deref(),
        Some("1024"),
        "memory is hot-applied"
    );
    assert_eq!(live.get("features"), None, "features wait for a restart");
    let pending = client
        .guest_pending(&pve(), atoll::proxmox::types::GuestKind::Lxc, vmid(100))
        .await
        .expect("pending");
    let features = pending
        .iter()
        .find(|e| e.key == "features")
        .expect("features pending");
    let queued: Features = features
        .pending
        .as_ref()
        .and_then(|v| v.as_str())
        .expect("text")
        .parse()
        .expect("features");
    assert_eq!(queued.nesting, Some(true));

    let upid = client
        .guest_power(
            &pve(),
            atoll::proxmox::types::GuestKind::Lxc,
            vmid(100),
            PowerAction::Reboot { timeout: None },
        )
        .await
        .expect("reboot");
    client.wait_task(&upid).await.expect("rebooted");
    let after = client
        .guest_config(&pve(), GuestKind::Lxc, vmid(100), true)
        .await
        .expect("after");
    let applied: Features = after
        .get("features")
        .expect("applied")
        .parse()
        .expect("features");
    assert_eq!(applied.nesting, Some(true));
}

#[tokio::test]
async fn pve_refusals_arrive_as_typed_errors() {
    let (_sim, client) = start("{}").await;
    create_running(&client, 100).await;

    let stale = ConfigChange {
        set: [("memory".to_owned(), "768".to_owned())].into(),
        delete: Vec::new(),
        digest: Some("0000000000000000000000000000000000000000".into()),
    };
    let err = client
        .guest_update_config(
            &pve(),
            atoll::proxmox::types::GuestKind::Lxc,
            vmid(100),
            &stale,
        )
        .await
        .expect_err("stale digest");
    assert!(
        matches!(
            err,
            PveError::Conflict {
                kind: ConflictKind::DigestMismatch,
                ..
            }
        ),
        "{err:?}"
    );

    let err = client
        .guest_create_and_wait(
            &pve(),
            atoll::proxmox::types::GuestKind::Lxc,
            &create_request(100),
        )
        .await
        .expect_err("taken");
    assert!(
        matches!(
            err,
            PveError::Conflict {
                kind: ConflictKind::AlreadyExists,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("CT 100 already exists on node 'pve'"),
        "{err}"
    );

    let err = client
        .guest_power(
            &pve(),
            atoll::proxmox::types::GuestKind::Lxc,
            vmid(100),
            PowerAction::Start,
        )
        .await
        .expect_err("running");
    assert!(
        matches!(
            err,
            PveError::Conflict {
                kind: ConflictKind::PowerState,
                ..
            }
        ),
        "{err:?}"
    );

    let read_only = ConfigChange {
        set: [("unprivileged".to_owned(), "0".to_owned())].into(),
        ..ConfigChange::default()
    };
    let err = client
        .guest_update_config(
            &pve(),
            atoll::proxmox::types::GuestKind::Lxc,
            vmid(100),
            &read_only,
        )
        .await
        .expect_err("read-only");
    assert!(
        err.to_string()
            .contains("unable to modify read-only option: 'unprivileged'"),
        "{err}"
    );

    // A token is never root@pam, so non-nesting feature flags are refused.
    let keyctl = ConfigChange {
        set: [("features".to_owned(), "keyctl=1".to_owned())].into(),
        ..ConfigChange::default()
    };
    let err = client
        .guest_update_config(
            &pve(),
            atoll::proxmox::types::GuestKind::Lxc,
            vmid(100),
            &keyctl,
        )
        .await
        .expect_err("root only");
    assert!(matches!(err, PveError::Forbidden(_)), "{err:?}");

    let err = client
        .guest_config(
            &"other".parse().expect("node"),
            GuestKind::Lxc,
            vmid(100),
            true,
        )
        .await
        .expect_err("node");
    assert!(matches!(err, PveError::NotFound(_)), "{err:?}");
    let err = client.next_id(Some(vmid(100))).await.expect_err("taken id");
    assert!(
        matches!(
            err,
            PveError::Conflict {
                kind: ConflictKind::AlreadyExists,
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn ticket_login_works_against_the_simulator() {
    let scenario = Scenario::default();
    let sim = Simulator::start(&scenario, fast_options())
        .await
        .expect("simulator");
    let auth = Auth::Password {
        username: "root@pam".into(),
        password: "secret".to_owned().into(),
    };
    let client = client_for(&sim, auth);
    create_running(&client, 120).await;
    let bad = Auth::Password {
        username: "root@pam".into(),
        password: "wrong".to_owned().into(),
    };
    let err = client_for(&sim, bad)
        .nodes()
        .await
        .expect_err("bad password");
    assert!(matches!(err, PveError::Unauthorized(_)), "{err:?}");
}

#[tokio::test]
async fn storages_content_and_download_url() {
    let (_sim, client) = start("{}").await;
    let storages = client.storages(&pve()).await.expect("storages");
    let local = storages
        .iter()
        .find(|s| s.storage.as_str() == "local")
        .expect("local");
    assert!(local.allows("vztmpl") && !local.allows("rootdir"));
    let local_id: StorageId = "local".parse().expect("id");
    let templates = client
        .storage_content(&pve(), &local_id, Some("vztmpl"))
        .await
        .expect("content");
    assert!(
        templates
            .iter()
            .any(|v| v.volid == format!("local:vztmpl/{DEFAULT_TEMPLATE}"))
    );
    let req = atoll::proxmox::client::DownloadUrl {
        url: "https://images.example/alpine-3.20-default_20240908_amd64.tar.xz".into(),
        content: "vztmpl".into(),
        filename: "alpine-3.20-default_20240908_amd64.tar.xz".into(),
        checksum: None,
        verify_certificates: Some(true),
    };
    let upid = client
        .download_url(&pve(), &local_id, &req)
        .await
        .expect("download");
    assert_eq!(upid.task_type(), "download");
    client.wait_task(&upid).await.expect("downloaded");
    let after = client
        .storage_content(&pve(), &local_id, Some("vztmpl"))
        .await
        .expect("content");
    assert!(after.iter().any(|v| {
        v.volid
            .ends_with("alpine-3.20-default_20240908_amd64.tar.xz")
    }));
}

#[tokio::test]
async fn tls_with_the_simulator_ca_file() {
    let opts = SimOptions {
        tls: true,
        ..fast_options()
    };
    let sim = Simulator::start(&Scenario::default(), opts)
        .await
        .expect("simulator");
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = dir.path().join("pve-root-ca.pem");
    std::fs::write(&ca, sim.ca_pem().expect("ca")).expect("write");
    let url = sim.url().replace("127.0.0.1", "localhost");
    let mut settings = ClientSettings::new(url.clone(), token());
    settings.tls = Tls::CaFile(ca);
    let client = ProxmoxClient::new(&settings).expect("client");
    assert!(!client.version().await.expect("trusted").version.is_empty());
    let untrusted = ProxmoxClient::new(&ClientSettings::new(url, token())).expect("client");
    let err = untrusted.version().await.expect_err("unknown CA");
    assert!(matches!(err, PveError::Settings(_)), "{err:?}");
}

#[tokio::test]
async fn qemu_config_and_status_are_readable_through_the_api_seam() {
    let (_sim, client) = start(
        r#"
guests:
  - {vmid: 300, type: qemu, status: running,
     config: {name: builder, memory: 4096, cores: 2, net0: "virtio=BC:24:11:AA:BB:CC,bridge=vmbr0"}}
"#,
    )
    .await;
    let api: std::sync::Arc<dyn atoll::proxmox::client::ProxmoxApi> = std::sync::Arc::new(client);
    let config = api
        .guest_config(&pve(), GuestKind::Qemu, vmid(300), true)
        .await
        .expect("config");
    assert_eq!(config.get("memory").as_deref(), Some("4096"));
    assert!(config.digest.is_some());
    let status = api
        .guest_status(&pve(), GuestKind::Qemu, vmid(300))
        .await
        .expect("status");
    assert_eq!(status.status, RunState::Running);
    let wrong_kind = api
        .guest_status(&pve(), GuestKind::Lxc, vmid(300))
        .await
        .expect_err("not a CT");
    assert!(
        matches!(wrong_kind, PveError::NotFound(_)),
        "{wrong_kind:?}"
    );
}
