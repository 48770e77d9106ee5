//! Wire-level behaviour of the Proxmox VE client against a scripted HTTP server on port 0: what
//! goes over the wire (auth headers, CSRF, form bodies), how PVE's two error formats are read,
//! which failures are retried, and the per-node limit. Behaviour of PVE itself is tested against
//! the simulator in `pve_client.rs`.

use crate::pve_client_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use atoll::proxmox::client::{
    Auth, ConfigChange, ConflictKind, CreateOutcome, DeleteOptions, GuestCreate, PowerAction,
    ProxmoxClient, PveError,
};
use atoll::proxmox::types::NodeName;
use pve_client_support::*;
use serde_json::{Value, json};

#[tokio::test]
async fn token_is_sent_as_pveapitoken_header_and_data_is_unwrapped() {
    let fake = Fake::new(|_, _| ok(json!({"version": "9.2.1", "release": "9.2", "repoid": "abc"})));
    let client = ProxmoxClient::new(&settings(&serve(&fake).await, token())).expect("client");
    let version = client.version().await.expect("version");
    assert_eq!(version.version, "9.2.1");
    let seen = &fake.requests()[0];
    assert_eq!(seen.path, "/api2/json/version");
    assert_eq!(
        seen.headers["authorization"],
        "PVEAPIToken=root@pam!atoll=s3cr3t-token"
    );
    assert!(seen.headers.get("csrfpreventiontoken").is_none());
}

#[tokio::test]
async fn ticket_login_sends_cookie_everywhere_and_csrf_only_on_writes() {
    let fake = Fake::new(|seen, _| match seen.path.as_str() {
        "/api2/json/access/ticket" => ok(json!({
            "username": "root@pam", "ticket": "PVE:root@pam:66F0A2B1::c2ln", "CSRFPreventionToken": "66F0A2B1:Y3NyZg"
        })),
        p if p.ends_with("/config") => ok(Value::Null),
        _ => ok(json!([])),
    });
    let auth = Auth::Password {
        username: "root@pam".into(),
        password: "hunter22".to_owned().into(),
    };
    let client = ProxmoxClient::new(&settings(&serve(&fake).await, auth)).expect("client");
    client.nodes().await.expect("nodes");
    let mut change = ConfigChange::default();
    change.set.insert("memory".into(), "1024".into());
    change.delete.push("swap".into());
    client
        .guest_update_config(
            &node(),
            atoll::proxmox::types::GuestKind::Lxc,
            vmid(100),
            &change,
        )
        .await
        .expect("put");

    let seen = fake.requests();
    assert_eq!(
        fake.count("POST", "/api2/json/access/ticket"),
        1,
        "one login, reused"
    );
    assert_eq!(seen[0].body, "username=root%40pam&password=hunter22");
    assert_eq!(
        seen[1].headers["cookie"],
        "PVEAuthCookie=PVE:root@pam:66F0A2B1::c2ln"
    );
    assert!(
        seen[1].headers.get("csrfpreventiontoken").is_none(),
        "no CSRF on GET"
    );
    assert_eq!(seen[2].method, "PUT");
    assert_eq!(seen[2].headers["csrfpreventiontoken"], "66F0A2B1:Y3NyZg");
    assert_eq!(seen[2].body, "memory=1024&delete=swap");
}

#[tokio::test]
async fn legacy_error_message_is_read_from_the_status_line() {
    let fake = Fake::new(|_, _| fail(500, "CT is locked (disk)", json!({"data": null})));
    let client = ProxmoxClient::new(&settings(&serve(&fake).await, token())).expect("client");
    let err = client
        .guest_power(
            &node(),
            atoll::proxmox::types::GuestKind::Lxc,
            vmid(100),
            PowerAction::Start,
        )
        .await
        .expect_err("locked");
    assert!(
        matches!(
            err,
            PveError::Conflict {
                kind: ConflictKind::Locked,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "POST /nodes/pve/lxc/100/status/start: CT is locked (disk)"
    );
}

#[tokio::test]
async fn lock_timeout_is_retried_and_then_succeeds() {
    let fake = Fake::new(|_, i| match i {
        0 => fail(
            500,
            "can't lock file '/run/lock/lxc/pve-config-100.lock' - got timeout",
            json!({"data": null}),
        ),
        _ => ok(Value::Null),
    });
    let client = ProxmoxClient::new(&settings(&serve(&fake).await, token())).expect("client");
    let mut change = ConfigChange {
        digest: Some("abc".into()),
        ..ConfigChange::default()
    };
    change.set.insert("cores".into(), "2".into());
    client
        .guest_update_config(
            &node(),
            atoll::proxmox::types::GuestKind::Lxc,
            vmid(100),
            &change,
        )
        .await
        .expect("second try succeeds");
    assert_eq!(fake.count("PUT", "/api2/json/nodes/pve/lxc/100/config"), 2);
}

#[tokio::test]
async fn a_write_that_may_have_been_applied_is_not_repeated() {
    let fake = Fake::new(|_, _| fail(503, "Service Unavailable", json!({"data": null})));
    let client = ProxmoxClient::new(&settings(&serve(&fake).await, token())).expect("client");
    let err = client
        .guest_power(
            &node(),
            atoll::proxmox::types::GuestKind::Lxc,
            vmid(100),
            PowerAction::Start,
        )
        .await
        .expect_err("503");
    assert!(err.is_transient());
    assert_eq!(
        fake.count("POST", "/api2/json/nodes/pve/lxc/100/status/start"),
        1
    );
    // A read is repeated up to the retry budget.
    let _ = client.nodes().await.expect_err("503");
    assert_eq!(fake.count("GET", "/api2/json/nodes"), 4);
}

#[tokio::test]
async fn create_whose_response_was_lost_is_not_sent_twice() {
    let status_calls = Arc::new(AtomicUsize::new(0));
    let calls = status_calls.clone();
    let fake = Fake::new(
        move |seen, _| match (seen.method.as_str(), seen.path.as_str()) {
            // The create reached PVE, but the answer never came back.
            ("POST", "/api2/json/nodes/pve/lxc") => {
                fail(504, "Gateway Timeout", json!({"data": null}))
            }
            ("GET", "/api2/json/nodes/pve/lxc/100/status/current") => {
                let lock = (calls.fetch_add(1, Ordering::SeqCst) < 2).then_some("create");
                ok(json!({"status": "stopped", "vmid": 100, "lock": lock}))
            }
            _ => fail(501, "not implemented", json!({"data": null})),
        },
    );
    let client = ProxmoxClient::new(&settings(&serve(&fake).await, token())).expect("client");
    let req = GuestCreate {
        vmid: vmid(100),
        options: [(
            "ostemplate".to_owned(),
            "local:vztmpl/debian-12.tar.zst".to_owned(),
        )]
        .into(),
        password: Some("rootpw-secret".to_owned().into()),
    };
    let outcome = client
        .guest_create_and_wait(&node(), atoll::proxmox::types::GuestKind::Lxc, &req)
        .await
        .expect("recovered");
    assert_eq!(outcome, CreateOutcome::Recovered);
    assert_eq!(
        fake.count("POST", "/api2/json/nodes/pve/lxc"),
        1,
        "create sent once"
    );
    assert!(
        status_calls.load(Ordering::SeqCst) >= 3,
        "waited for the create lock to clear"
    );
    assert!(!format!("{req:?}").contains("rootpw-secret"));
}

#[tokio::test]
async fn failed_task_reports_exit_status_and_log_tail() {
    let fake = Fake::new(|seen, _| {
        if seen.path.ends_with("/status") {
            ok(
                json!({"status": "stopped", "exitstatus": "unable to create CT 100 - no space", "upid": UPID}),
            )
        } else {
            let lines: Vec<Value> = (1..=30)
                .map(|n| json!({"n": n, "t": format!("line {n}")}))
                .collect();
            ok(Value::Array(lines))
        }
    });
    let client = ProxmoxClient::new(&settings(&serve(&fake).await, token())).expect("client");
    let err = client
        .wait_task(&UPID.parse().expect("upid"))
        .await
        .expect_err("failed");
    let PveError::Task {
        exitstatus,
        log_tail,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(exitstatus, "unable to create CT 100 - no space");
    assert_eq!(log_tail.len(), 20);
    assert_eq!(log_tail.last().map(String::as_str), Some("line 30"));
    let log = fake
        .requests()
        .into_iter()
        .find(|s| s.path.ends_with("/log"))
        .expect("log read");
    assert_eq!(
        log.path,
        "/api2/json/nodes/pve/tasks/UPID%3Apve%3A0000A1B2%3A0012C3D4%3A66F0A2B1%3Avzcreate%3A100%3Aroot%40pam%21atoll%3A/log"
    );
}

#[tokio::test]
async fn requests_to_one_node_never_exceed_three_at_once() {
    let fake = Fake::new(|_, _| Reply {
        delay: Duration::from_millis(100),
        ..ok(json!({"status": "running"}))
    });
    let client = ProxmoxClient::new(&settings(&serve(&fake).await, token())).expect("client");
    let (a, b): (NodeName, NodeName) = ("a".parse().expect("a"), "b".parse().expect("b"));
    let calls = (0..8).flat_map(|i| {
        let client = client.clone();
        [a.clone(), b.clone()].map(|n| {
            let client = client.clone();
            tokio::spawn(async move {
                client
                    .guest_status(&n, atoll::proxmox::types::GuestKind::Lxc, vmid(100 + i))
                    .await
            })
        })
    });
    for call in calls.collect::<Vec<_>>() {
        call.await.expect("join").expect("status");
    }
    assert_eq!(fake.max_in_flight("a"), 3);
    assert_eq!(fake.max_in_flight("b"), 3);
    assert!(
        fake.max_total.load(Ordering::SeqCst) > 3,
        "the limit is per node, not global"
    );
}

#[tokio::test]
async fn errors_never_contain_the_token() {
    let fake = Fake::new(|_, _| fail(401, "authentication failure", json!({"data": null})));
    let client = ProxmoxClient::new(&settings(&serve(&fake).await, token())).expect("client");
    let err = client.version().await.expect_err("401");
    assert!(matches!(err, PveError::Unauthorized(_)));
    let text = format!("{err} {err:?} {client:?}");
    assert!(!text.contains("s3cr3t-token"), "{text}");
}

#[tokio::test]
async fn delete_sends_purge_and_disk_flags_in_the_query() {
    let fake = Fake::new(|_, _| ok(json!(UPID)));
    let client = ProxmoxClient::new(&settings(&serve(&fake).await, token())).expect("client");
    let options = DeleteOptions {
        purge: true,
        destroy_unreferenced_disks: true,
        force: false,
    };
    let upid = client
        .guest_delete(
            &node(),
            atoll::proxmox::types::GuestKind::Lxc,
            vmid(100),
            options,
        )
        .await
        .expect("delete");
    assert_eq!(upid.task_type(), "vzcreate");
    let seen = &fake.requests()[0];
    assert_eq!(
        (seen.method.as_str(), seen.path.as_str()),
        ("DELETE", "/api2/json/nodes/pve/lxc/100")
    );
    assert_eq!(seen.query, "purge=1&destroy-unreferenced-disks=1");
}

#[tokio::test]
async fn an_old_ticket_is_renewed_by_posting_it_as_the_password() {
    let logins = Arc::new(AtomicUsize::new(0));
    let counter = logins.clone();
    let fake = Fake::new(move |seen, _| match seen.path.as_str() {
        "/api2/json/access/ticket" => {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            ok(
                json!({"ticket": format!("PVE:root@pam:T{n}::sig"), "CSRFPreventionToken": format!("C{n}")}),
            )
        }
        _ => ok(json!([])),
    });
    let auth = Auth::Password {
        username: "root@pam".into(),
        password: "hunter22".to_owned().into(),
    };
    let mut s = settings(&serve(&fake).await, auth);
    s.ticket_renew_after = Duration::ZERO;
    let client = ProxmoxClient::new(&s).expect("client");
    client.nodes().await.expect("first");
    client.nodes().await.expect("second");
    let logins: Vec<Seen> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path == "/api2/json/access/ticket")
        .collect();
    assert_eq!(logins.len(), 2);
    assert_eq!(
        logins[1].body,
        "username=root%40pam&password=PVE%3Aroot%40pam%3AT0%3A%3Asig"
    );
    let last = fake.requests().pop().expect("request");
    assert_eq!(last.headers["cookie"], "PVEAuthCookie=PVE:root@pam:T1::sig");
}

#[tokio::test]
async fn a_refused_login_is_reported_once_without_the_password() {
    let fake = Fake::new(|_, _| fail(401, "authentication failure", json!({"data": null})));
    let auth = Auth::Password {
        username: "root@pam".into(),
        password: "hunter22".to_owned().into(),
    };
    let client = ProxmoxClient::new(&settings(&serve(&fake).await, auth)).expect("client");
    let err = client.nodes().await.expect_err("refused");
    assert!(
        matches!(&err, PveError::Unauthorized(d) if d.op == "POST /access/ticket"),
        "{err:?}"
    );
    assert_eq!(
        fake.requests().len(),
        1,
        "no second login, no request without a ticket"
    );
    assert!(!format!("{err} {err:?}").contains("hunter22"));
}

#[tokio::test]
async fn an_expired_ticket_is_replaced_once_by_a_new_login() {
    // Request 1 (the first /nodes) is refused as if PVE no longer accepted the ticket.
    let fake = Fake::new(|seen, i| match (seen.path.as_str(), i) {
        ("/api2/json/access/ticket", _) => {
            ok(json!({"ticket": "PVE:t", "CSRFPreventionToken": "c"}))
        }
        (_, 1) => fail(401, "invalid PVE ticket", json!({"data": null})),
        _ => ok(json!([])),
    });
    let auth = Auth::Password {
        username: "root@pam".into(),
        password: "hunter22".to_owned().into(),
    };
    let client = ProxmoxClient::new(&settings(&serve(&fake).await, auth)).expect("client");
    client.nodes().await.expect("second login works");
    assert_eq!(fake.count("POST", "/api2/json/access/ticket"), 2);
    assert_eq!(fake.count("GET", "/api2/json/nodes"), 2);
}

#[tokio::test]
async fn a_ticket_is_renewed_with_itself_once_it_is_older_than_renew_after() {
    let logins = AtomicUsize::new(0);
    let fake = Fake::new(move |seen, _| match seen.path.as_str() {
        "/api2/json/access/ticket" => {
            let n = logins.fetch_add(1, Ordering::SeqCst);
            ok(json!({"ticket": format!("PVE:t{n}"), "CSRFPreventionToken": "c"}))
        }
        _ => ok(json!([])),
    });
    let auth = Auth::Password {
        username: "root@pam".into(),
        password: "hunter22".to_owned().into(),
    };
    let hand = model::ManualClock::new();
    let mut s = settings(&serve(&fake).await, auth);
    s.clock = hand.shared();
    let client = ProxmoxClient::new(&s).expect("client");
    client.nodes().await.expect("first");
    hand.advance(s.ticket_renew_after - Duration::from_secs(1));
    client.nodes().await.expect("still young");
    assert_eq!(fake.count("POST", "/api2/json/access/ticket"), 1);
    hand.advance(Duration::from_secs(1));
    client.nodes().await.expect("renewed");
    let logins: Vec<Seen> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path == "/api2/json/access/ticket")
        .collect();
    assert_eq!(logins.len(), 2, "{logins:?}");
    assert!(
        logins[0].body.contains("password=hunter22"),
        "{}",
        logins[0].body
    );
    // PVE renews a ticket posted as the password; the password itself is not sent again.
    assert!(
        logins[1].body.contains("password=PVE%3At0"),
        "{}",
        logins[1].body
    );
    let last = fake.requests().pop().expect("a request");
    let cookie = last.headers.get("cookie").and_then(|v| v.to_str().ok());
    assert_eq!(cookie, Some("PVEAuthCookie=PVE:t1"));
}

#[tokio::test]
async fn empty_or_malformed_config_changes_are_refused_before_sending() {
    let fake = Fake::new(|_, _| ok(Value::Null));
    let client = ProxmoxClient::new(&settings(&serve(&fake).await, token())).expect("client");
    let empty = client
        .guest_update_config(
            &node(),
            atoll::proxmox::types::GuestKind::Lxc,
            vmid(100),
            &ConfigChange::default(),
        )
        .await;
    assert!(
        matches!(&empty, Err(PveError::Validation { detail, .. }) if detail.message == "no options specified"),
        "{empty:?}"
    );
    let mut control = ConfigChange::default();
    control.set.insert("digest".into(), "abc".into());
    let err = client
        .guest_update_config(
            &node(),
            atoll::proxmox::types::GuestKind::Lxc,
            vmid(100),
            &control,
        )
        .await
        .expect_err("control key");
    assert!(matches!(err, PveError::Validation { .. }), "{err:?}");
    assert!(fake.requests().is_empty(), "nothing was sent");
}
