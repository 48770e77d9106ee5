//! Self-discovery over HTTP: the local MACs are matched against the live config of every
//! running guest, in a scripted cluster and in the simulator (two containers, one VM, one stopped
//! container sharing the VM's MAC).

use crate::pve_client_support;

use atoll::proxmox::client::ProxmoxClient;
use atoll::proxmox::discover::{LocalMacs, NoMatch, discover_self};
use atoll::proxmox::types::{GuestKind, Mac};
use pve_client_support::*;
use serde_json::json;

/// A cluster with two running containers, one running VM and one stopped container that
/// shares the VM's MAC (stopped guests are not candidates).
fn cluster() -> Fake {
    Fake::new(|seen, _| match seen.path.as_str() {
        "/api2/json/cluster/resources" => ok(json!([
            {"id": "lxc/100", "type": "lxc", "vmid": 100, "node": "pve", "status": "running", "name": "atoll"},
            {"id": "lxc/101", "type": "lxc", "vmid": 101, "node": "pve2", "status": "running"},
            {"id": "qemu/200", "type": "qemu", "vmid": 200, "node": "pve", "status": "running"},
            {"id": "lxc/102", "type": "lxc", "vmid": 102, "node": "pve", "status": "stopped"},
            {"id": "storage/pve/local", "type": "storage", "node": "pve", "status": "available"},
        ])),
        "/api2/json/nodes/pve/lxc/100/config" => ok(json!({
            "net0": "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:01:00,ip=dhcp,type=veth", "digest": "d"})),
        "/api2/json/nodes/pve2/lxc/101/config" => ok(json!({
            "net0": "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:01:01,type=veth",
            "net1": "name=eth1,bridge=vmbr1,hwaddr=BC:24:11:00:00:99,type=veth"})),
        "/api2/json/nodes/pve/qemu/200/config" => ok(json!({
            "net0": "virtio=BC:24:11:00:02:00,bridge=vmbr0", "net1": "e1000=BC:24:11:00:00:99,bridge=vmbr1"})),
        "/api2/json/nodes/pve/lxc/102/config" => ok(json!({
            "net0": "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:02:00,type=veth"})),
        _ => fail(500, "does not exist", json!({"data": null})),
    })
}

fn macs(list: &[&str]) -> LocalMacs {
    LocalMacs::Fixed(
        list.iter()
            .map(|m| m.parse::<Mac>().expect("mac"))
            .collect(),
    )
}

async fn discover(local: &[&str]) -> (Result<atoll::proxmox::discover::SelfGuest, NoMatch>, Fake) {
    let fake = cluster();
    let client = ProxmoxClient::new(&settings(&serve(&fake).await, token())).expect("client");
    let found = discover_self(&client, &macs(local))
        .await
        .expect("api reachable");
    (found, fake)
}

#[tokio::test]
async fn the_one_container_with_a_local_mac_is_found_using_live_config() {
    let (found, fake) = discover(&["bc:24:11:00:01:00", "02:42:ac:11:00:02"]).await;
    let guest = found.expect("one match");
    assert_eq!(
        (guest.kind, guest.vmid.get(), guest.node.as_str()),
        (GuestKind::Lxc, 100, "pve")
    );
    let config_reads: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/config"))
        .collect();
    assert_eq!(config_reads.len(), 3, "only running guests are read");
    assert!(config_reads.iter().all(|r| r.query == "current=1"));
}

#[tokio::test]
async fn a_qemu_guest_is_matched_by_its_model_mac() {
    let (found, _) = discover(&["BC:24:11:00:02:00"]).await;
    let guest = found.expect("vm match");
    assert_eq!((guest.kind, guest.vmid.get()), (GuestKind::Qemu, 200));
}

#[tokio::test]
async fn no_matching_guest_is_reported_with_the_count_checked() {
    let (found, _) = discover(&["BC:24:11:FF:FF:FF"]).await;
    assert!(
        matches!(found, Err(NoMatch::NoGuest { checked: 3, .. })),
        "{found:?}"
    );
}

#[tokio::test]
async fn two_matching_guests_are_refused() {
    let (found, _) = discover(&["BC:24:11:00:00:99"]).await;
    let Err(NoMatch::Ambiguous { candidates }) = found else {
        panic!("{found:?}")
    };
    let ids: Vec<u32> = candidates.iter().map(|c| c.vmid.get()).collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.contains(&101) && ids.contains(&200));
}

mod against_the_simulator {
    use atoll::proxmox::client::{Auth, ClientSettings, ProxmoxClient};
    use atoll::proxmox::discover::{LocalMacs, NoMatch, discover_self};
    use atoll::proxmox::types::{GuestKind, Mac};
    use pvesim::{Scenario, SimOptions, Simulator};

    const CLUSTER: &str = r#"
nodes:
  - name: pve
  - name: pve2
guests:
  - vmid: 100
    status: running
    config: {hostname: atoll, memory: 512, ostype: debian, rootfs: "local-lvm:vm-100-disk-0,size=8G",
             net0: "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:01:00,ip=dhcp,type=veth"}
  - vmid: 101
    node: pve2
    status: running
    config: {hostname: other, memory: 512, ostype: debian, rootfs: "local-lvm:vm-101-disk-0,size=8G",
             net0: "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:01:01,type=veth",
             net1: "name=eth1,bridge=vmbr0,hwaddr=BC:24:11:00:00:99,type=veth"}
  - vmid: 200
    type: qemu
    status: running
    config: {name: vm, memory: 2048, net0: "virtio=BC:24:11:00:02:00,bridge=vmbr0",
             net1: "e1000=BC:24:11:00:00:99,bridge=vmbr0"}
  - vmid: 102
    status: stopped
    config: {hostname: off, memory: 512, ostype: debian, rootfs: "local-lvm:vm-102-disk-0,size=8G",
             net0: "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:02:00,type=veth"}
"#;

    async fn discover(local: &[&str]) -> Result<atoll::proxmox::discover::SelfGuest, NoMatch> {
        let scenario: Scenario = serde_yaml_ng::from_str(CLUSTER).expect("scenario");
        let sim = Simulator::start(&scenario, SimOptions::default())
            .await
            .expect("simulator");
        let auth = Auth::ApiToken("root@pam!atoll=secret".to_owned().into());
        let client = ProxmoxClient::new(&ClientSettings::new(sim.url(), auth)).expect("client");
        let macs = local
            .iter()
            .map(|m| m.parse::<Mac>().expect("mac"))
            .collect();
        discover_self(&client, &LocalMacs::Fixed(macs))
            .await
            .expect("cluster readable")
    }

    #[tokio::test]
    async fn one_container_matches() {
        let guest = discover(&["bc:24:11:00:01:00"]).await.expect("one match");
        assert_eq!(
            (guest.kind, guest.vmid.get(), guest.node.as_str()),
            (GuestKind::Lxc, 100, "pve")
        );
    }

    #[tokio::test]
    async fn a_qemu_guest_matches_by_model_mac() {
        let guest = discover(&["bc:24:11:00:02:00"]).await.expect("vm");
        assert_eq!((guest.kind, guest.vmid.get()), (GuestKind::Qemu, 200));
    }

    #[tokio::test]
    async fn no_guest_matches() {
        let found = discover(&["bc:24:11:ff:ff:ff"]).await;
        assert!(
            matches!(found, Err(NoMatch::NoGuest { checked: 3, .. })),
            "{found:?}"
        );
    }

    #[tokio::test]
    async fn two_matches_are_refused() {
        let found = discover(&["bc:24:11:00:00:99"]).await;
        assert!(
            matches!(&found, Err(NoMatch::Ambiguous { candidates }) if candidates.len() == 2),
            "{found:?}"
        );
    }
}
