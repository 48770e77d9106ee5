//! Shared fixtures for the plan tests: a realistic bpg container as desired config, the same
//! container as PVE stores it after apply, and atoll's state after that apply.
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;

use atoll::proxmox::plan::{
    Desired, DesiredDownload, DesiredGuest, DesiredValue, GuestKind, Inventory, Lifecycle,
    LiveGuest, PendingEntry, Plan, PlanInput, PlanSource, Power, Secret, StateEntry, StateValue,
    plan,
};

pub const CT: &str = "proxmox_virtual_environment_container";
pub const DL: &str = "proxmox_virtual_environment_download_file";
pub const PASSWORD: &str = "hunter2-very-secret";
pub const TEMPLATE: &str = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst";

pub fn address(key: &str) -> String {
    format!("module.dev_lxcs.{CT}.lxc[\"{key}\"]")
}

/// The desired config keys of a container named `name`, as the loader would send them.
pub fn desired_config(name: &str) -> BTreeMap<String, DesiredValue> {
    let known = [
        ("cores", "2"),
        ("memory", "2048"),
        ("swap", "512"),
        ("cpuunits", "100"),
        ("hostname", name),
        ("net0", "name=eth0,bridge=vmbr0,ip=dhcp,firewall=0"),
        ("rootfs", "local-lvm:8"),
        ("features", "nesting=0"),
        ("ostype", "debian"),
        ("unprivileged", "1"),
        ("onboot", "1"),
        ("tags", "terraform;Dev"),
        ("description", "Managed by atoll"),
        ("ostemplate", TEMPLATE),
        ("ssh-public-keys", "ssh-ed25519 AAAAC3Nza atoll@test"),
    ];
    let mut config: BTreeMap<String, DesiredValue> = known
        .iter()
        .map(|(k, v)| ((*k).to_owned(), DesiredValue::Known((*v).to_owned())))
        .collect();
    config.insert(
        "password".to_owned(),
        DesiredValue::Sensitive(Secret::new(PASSWORD)),
    );
    config
}

pub fn desired_guest(key: &str, vm_id: u32) -> DesiredGuest {
    DesiredGuest {
        address: address(key),
        resource_type: CT.to_owned(),
        kind: GuestKind::Lxc,
        node: "mk33".to_owned(),
        vm_id: Some(vm_id),
        config: desired_config(key),
        started: true,
        lifecycle: Lifecycle::default(),
        uses: Vec::new(),
    }
}

/// The container as `GET config?current=1` returns it after atoll applied `desired_guest`.
pub fn live_guest(key: &str, vm_id: u32) -> LiveGuest {
    let config = [
        ("arch", "amd64".to_owned()),
        ("cores", "2".to_owned()),
        ("memory", "2048".to_owned()),
        ("swap", "512".to_owned()),
        ("cpuunits", "100".to_owned()),
        ("hostname", key.to_owned()),
        (
            "net0",
            "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:5E:7A:01,ip=dhcp,type=veth".to_owned(),
        ),
        ("rootfs", format!("local-lvm:vm-{vm_id}-disk-0,size=8G")),
        ("ostype", "debian".to_owned()),
        ("unprivileged", "1".to_owned()),
        ("onboot", "1".to_owned()),
        ("tags", "dev;terraform".to_owned()),
        ("description", "Managed by atoll\n".to_owned()),
    ];
    LiveGuest {
        vm_id,
        node: "mk33".to_owned(),
        kind: GuestKind::Lxc,
        name: Some(key.to_owned()),
        power: Power::Running,
        config: config.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        pending: Vec::new(),
    }
}

/// atoll's state after applying `desired`.
pub fn state_for(desired: &DesiredGuest, vm_id: u32) -> StateEntry {
    let attributes = desired
        .config
        .iter()
        .filter_map(|(k, v)| {
            let value = match v {
                DesiredValue::Known(text) => StateValue::Plain(text.clone()),
                DesiredValue::Sensitive(secret) => StateValue::Fingerprint(secret.fingerprint()),
                DesiredValue::Unknown => return None,
            };
            Some((k.clone(), value))
        })
        .collect();
    StateEntry::Guest {
        address: desired.address.clone(),
        resource_type: desired.resource_type.clone(),
        kind: GuestKind::Lxc,
        node: desired.node.clone(),
        vm_id,
        attributes,
    }
}

/// One applied, running container: (desired, state, inventory).
pub struct World {
    pub desired: Vec<Desired>,
    pub state: Vec<StateEntry>,
    pub inventory: Inventory,
}

impl World {
    /// `dev-nextcloud` (2100) applied and running.
    pub fn applied() -> Self {
        let guest = desired_guest("dev-nextcloud", 2100);
        let state = vec![state_for(&guest, 2100)];
        let mut inventory = Inventory::default();
        inventory
            .guests
            .insert(2100, live_guest("dev-nextcloud", 2100));
        Self {
            desired: vec![Desired::Guest(guest)],
            state,
            inventory,
        }
    }

    pub fn guest_mut(&mut self) -> &mut DesiredGuest {
        match &mut self.desired[0] {
            Desired::Guest(guest) => guest,
            _ => unreachable!("the first desired resource is the guest"),
        }
    }

    pub fn set(&mut self, key: &str, value: &str) {
        self.guest_mut()
            .config
            .insert(key.to_owned(), DesiredValue::Known(value.to_owned()));
    }

    pub fn live_mut(&mut self) -> &mut LiveGuest {
        self.inventory
            .guests
            .get_mut(&2100)
            .expect("the fixture guest 2100 is in the inventory")
    }

    pub fn pending(&mut self, key: &str, value: &str, pending: &str) {
        self.live_mut().pending.push(PendingEntry {
            key: key.to_owned(),
            value: Some(value.to_owned()),
            pending: Some(pending.to_owned()),
            delete: false,
        });
    }

    pub fn plan(&self) -> Plan {
        self.try_plan().expect("the fixture plans without errors")
    }

    pub fn try_plan(&self) -> Result<Plan, atoll::proxmox::plan::PlanErrors> {
        let source = PlanSource {
            sha: "4f2a9c1".to_owned(),
            config_hash: "c0ffee".to_owned(),
            state_fingerprint: "5tate".to_owned(),
        };
        plan(PlanInput {
            desired: &self.desired,
            state: &self.state,
            inventory: &self.inventory,
            source: &source,
        })
    }
}

pub fn download(key: &str) -> DesiredDownload {
    DesiredDownload {
        address: format!("{DL}.template[\"{key}\"]"),
        resource_type: DL.to_owned(),
        node: "mk33".to_owned(),
        datastore: "local".to_owned(),
        content_type: "vztmpl".to_owned(),
        file_name: "debian-12-standard_12.7-1_amd64.tar.zst".to_owned(),
        arguments: [(
            "url".to_owned(),
            "http://download.proxmox.com/images/system/debian-12-standard_12.7-1_amd64.tar.zst"
                .to_owned(),
        )]
        .into_iter()
        .collect(),
        lifecycle: Lifecycle::default(),
        source: atoll::proxmox::plan::VolumeSource::Url,
    }
}
