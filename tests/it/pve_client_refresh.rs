//! The plan's refresh at the request floor: `cluster/resources` once, then one `pending` per
//! guest atoll reads (pve-guest-common `config_with_pending_array` holds each key's current
//! value, pending value and queued delete), never `config` as well.

use crate::pve_client_support;

use std::collections::BTreeMap;

use atoll::proxmox::client::ProxmoxClient;
use atoll::proxmox::inventory;
use atoll::proxmox::plan::{PendingEntry, Power, StateEntry};
use atoll::proxmox::types::GuestKind;
use pve_client_support::*;
use serde_json::json;

fn cluster() -> Fake {
    Fake::new(|seen, _| match seen.path.as_str() {
        "/api2/json/cluster/resources" => ok(json!([
            {"id": "lxc/100", "type": "lxc", "vmid": 100, "node": "pve", "status": "running"},
            {"id": "qemu/200", "type": "qemu", "vmid": 200, "node": "pve", "status": "stopped"},
            {"id": "lxc/101", "type": "lxc", "vmid": 101, "node": "pve", "status": "running"},
        ])),
        "/api2/json/nodes/pve/lxc/100/pending" => ok(json!([
            {"key": "cores", "value": 2, "pending": 4},
            {"key": "hostname", "value": "web"},
            {"key": "mp0", "value": "local-lvm:vm-100-disk-1,mp=/srv,size=8G", "delete": 1},
            {"key": "digest", "value": "0b5f"},
            {"key": "swap", "pending": 512},
        ])),
        "/api2/json/nodes/pve/qemu/200/pending" => ok(json!([
            {"key": "memory", "value": "2048"},
            {"key": "onboot", "value": 1},
            {"key": "cipassword", "value": "**********"},
            {"key": "digest", "value": "77aa"},
        ])),
        _ => fail(500, "not expected", json!({"data": null})),
    })
}

fn in_state(kind: GuestKind, vm_id: u32) -> StateEntry {
    StateEntry::Guest {
        address: format!("proxmox_virtual_environment_container.g{vm_id}"),
        resource_type: "proxmox_virtual_environment_container".to_owned(),
        kind,
        node: "pve".to_owned(),
        vm_id,
        attributes: BTreeMap::new(),
    }
}

fn text(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[tokio::test]
async fn refresh_reads_each_guest_once_through_its_pending_list() {
    let fake = cluster();
    let client = ProxmoxClient::new(&settings(&serve(&fake).await, token())).expect("client");
    let state = [
        in_state(GuestKind::Lxc, 100),
        in_state(GuestKind::Qemu, 200),
    ];
    let inventory = inventory::refresh(&client, &state, &[])
        .await
        .expect("refresh");

    let mut sent: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    sent.sort();
    assert_eq!(
        sent,
        [
            "GET /api2/json/cluster/resources",
            "GET /api2/json/nodes/pve/lxc/100/pending",
            "GET /api2/json/nodes/pve/qemu/200/pending",
        ],
        "one request per guest read, none for the guest atoll does not manage"
    );

    let ct = &inventory.guests[&100];
    assert_eq!(
        ct.config,
        text(&[
            ("cores", "2"),
            ("hostname", "web"),
            ("mp0", "local-lvm:vm-100-disk-1,mp=/srv,size=8G"),
        ]),
        "current values as config?current=1 gave them, the digest left out"
    );
    let queued: Vec<&PendingEntry> = ct
        .pending
        .iter()
        .filter(|e| e.pending.is_some() || e.delete)
        .collect();
    assert_eq!(
        queued,
        [
            &PendingEntry {
                key: "cores".to_owned(),
                value: Some("2".to_owned()),
                pending: Some("4".to_owned()),
                delete: false,
            },
            &PendingEntry {
                key: "mp0".to_owned(),
                value: Some("local-lvm:vm-100-disk-1,mp=/srv,size=8G".to_owned()),
                pending: None,
                delete: true,
            },
            &PendingEntry {
                key: "swap".to_owned(),
                value: None,
                pending: Some("512".to_owned()),
                delete: false,
            },
        ]
    );
    assert_eq!(ct.power, Power::Running);

    let vm = &inventory.guests[&200];
    assert_eq!(
        vm.config,
        text(&[
            ("cipassword", "**********"),
            ("memory", "2048"),
            ("onboot", "1")
        ])
    );
    assert_eq!(vm.power, Power::Stopped);
    assert!(
        inventory.guests[&101].config.is_empty() && inventory.guests[&101].pending.is_empty(),
        "a guest atoll neither manages nor declares is known from cluster/resources only"
    );
}
