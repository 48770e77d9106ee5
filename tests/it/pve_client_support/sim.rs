//! Helpers for tests against the in-process simulator: fast task and auth delays, a client with
//! short retry and polling delays, and a standard container create request.

use std::collections::BTreeMap;
use std::time::Duration;

use atoll::proxmox::client::{
    Auth, ClientSettings, CreateOutcome, GuestCreate, PowerAction, ProxmoxClient,
};
use atoll::proxmox::types::NodeName;

use super::vmid;
use pvesim::{DEFAULT_TEMPLATE, Scenario, SimOptions, Simulator};

pub fn pve() -> NodeName {
    "pve".parse().expect("node")
}

pub fn fast_options() -> SimOptions {
    SimOptions {
        task_duration: Duration::from_millis(20),
        auth_failure_delay: Duration::from_millis(10),
        ..SimOptions::default()
    }
}

pub fn client_for(sim: &Simulator, auth: Auth) -> ProxmoxClient {
    let mut s = ClientSettings::new(sim.url(), auth);
    s.retry.base_delay = Duration::from_millis(5);
    s.retry.max_delay = Duration::from_millis(20);
    s.tasks.first_delay = Duration::from_millis(5);
    s.tasks.max_delay = Duration::from_millis(25);
    s.tasks.timeout = Duration::from_secs(20);
    ProxmoxClient::new(&s).expect("client")
}

pub fn sim_token() -> Auth {
    Auth::ApiToken("root@pam!atoll=secret".to_owned().into())
}

pub async fn start(yaml: &str) -> (Simulator, ProxmoxClient) {
    let scenario: Scenario = serde_yaml_ng::from_str(yaml).expect("scenario");
    let sim = Simulator::start(&scenario, fast_options())
        .await
        .expect("simulator");
    let client = client_for(&sim, sim_token());
    (sim, client)
}

pub fn create_request(id: u32) -> GuestCreate {
    let options: BTreeMap<String, String> = [
        ("ostemplate", format!("local:vztmpl/{DEFAULT_TEMPLATE}")),
        ("storage", "local-lvm".to_owned()),
        ("hostname", format!("ct{id}")),
        ("memory", "512".to_owned()),
        ("net0", "name=eth0,bridge=vmbr0,ip=dhcp".to_owned()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    GuestCreate {
        vmid: vmid(id),
        options,
        password: Some("changeme-secret".to_owned().into()),
    }
}

pub async fn create_running(client: &ProxmoxClient, id: u32) {
    let outcome = client
        .guest_create_and_wait(
            &pve(),
            atoll::proxmox::types::GuestKind::Lxc,
            &create_request(id),
        )
        .await
        .expect("create");
    assert!(matches!(outcome, CreateOutcome::Created(_)), "{outcome:?}");
    let upid = client
        .guest_power(
            &pve(),
            atoll::proxmox::types::GuestKind::Lxc,
            vmid(id),
            PowerAction::Start,
        )
        .await
        .expect("start");
    client.wait_task(&upid).await.expect("started");
}
