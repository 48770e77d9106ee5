//! The cluster data sources answered from PVE's responses as the API documents them.

use std::collections::BTreeMap;

use serde_json::json;

use super::{DataRead, Facts, Query, ReadError, answer, cluster_types, queries};
use crate::diag::Span;
use crate::value::{Type, Value};

fn read(data_type: &str, arguments: &[(&str, Value)]) -> DataRead {
    DataRead {
        data_type: data_type.to_owned(),
        address: format!("data.{data_type}.x"),
        arguments: Value::Object(
            arguments
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        ),
        subject: Span {
            file: 0,
            range: 0..1,
        },
        declared_at: "main.tf:1".to_owned(),
    }
}

fn on(node: &str) -> [(&'static str, Value); 1] {
    [("node_name", Value::string(node))]
}

/// Answers `read` from PVE's `data` for each of its queries, in order.
fn answered(
    read: &DataRead,
    data: Vec<serde_json::Value>,
) -> Result<BTreeMap<String, Value>, ReadError> {
    let asked = queries(read);
    assert_eq!(asked.len(), data.len(), "{asked:?}");
    let facts = Facts {
        guests: Vec::new(),
        readings: asked.into_iter().zip(data.into_iter().map(Ok)).collect(),
    };
    answer(read, &facts)
}

fn strings(items: &[&str]) -> Value {
    Value::List(
        Type::String,
        items.iter().map(|s| Value::string(*s)).collect(),
    )
}

#[test]
fn every_cluster_data_source_has_a_schema_and_is_listed() {
    for name in cluster_types() {
        assert!(crate::schema::data_source(name).is_some(), "{name}");
        assert!(crate::schema::DATA_SOURCES.contains(&name), "{name}");
    }
}

#[test]
fn nodes_are_parallel_lists_in_pves_order_with_bpgs_fallbacks() {
    let r = read("proxmox_virtual_environment_nodes", &[]);
    assert_eq!(queries(&r), [Query::Nodes]);
    let got = answered(
        &r,
        vec![json!([
            {"node": "pve2", "status": "online", "cpu": 0.12345, "maxcpu": 16, "mem": 100, "maxmem": 1000,
             "uptime": 42, "level": "c", "ssl_fingerprint": "AA:BB"},
            {"node": "pve1", "status": "offline"}
        ])],
    )
    .expect("answer");
    assert_eq!(got["names"], strings(&["pve2", "pve1"]));
    assert_eq!(
        got["online"],
        Value::List(Type::Bool, vec![Value::Bool(true), Value::Bool(false)])
    );
    let numbers =
        |v: &[f64]| Value::List(Type::Number, v.iter().map(|n| Value::Number(*n)).collect());
    assert_eq!(got["cpu_count"], numbers(&[16.0, 1.0]));
    assert_eq!(got["cpu_utilization"], numbers(&[0.12, 0.0]));
    assert_eq!(got["memory_available"], numbers(&[1000.0, 0.0]));
    assert_eq!(got["ssl_fingerprints"], strings(&["AA:BB", "0"]));
    assert_eq!(got["support_levels"], strings(&["c", ""]));
}

#[test]
fn one_node_reads_its_status() {
    let r = read("proxmox_virtual_environment_node", &on("pve"));
    assert_eq!(queries(&r), [Query::NodeStatus { node: "pve".into() }]);
    let status = json!({"cpu": 0.016, "uptime": 9, "cpuinfo": {"cores": 8, "cpus": 16, "sockets": 1, "model": "EPYC"},
                        "memory": {"total": 64, "used": 4, "free": 60}});
    let got = answered(&r, vec![status]).expect("answer");
    assert_eq!(got["cpu_model"], Value::string("EPYC"));
    assert_eq!(got["cpu_count"], Value::Number(16.0));
    assert_eq!(got["cpu_utilization"], Value::Number(0.02));
    assert_eq!(got["memory_available"], Value::Number(60.0));
    assert_eq!(got["memory_total"], Value::Number(64.0));
}

#[test]
fn version_is_read_under_both_names() {
    for name in ["proxmox_version", "proxmox_virtual_environment_version"] {
        let r = read(name, &[]);
        let got = answered(
            &r,
            vec![json!({"version": "9.2.11", "release": "9.2", "repoid": "14a22df3"})],
        )
        .expect("answer");
        assert_eq!(got["release"], Value::string("9.2"));
        assert_eq!(got["repository_id"], Value::string("14a22df3"));
        assert_eq!(got["version"], Value::string("9.2.11"));
    }
}

#[test]
fn dns_lists_the_servers_that_are_set_in_order() {
    let r = read("proxmox_virtual_environment_dns", &on("pve"));
    let got = answered(
        &r,
        vec![json!({"search": "lan", "dns1": "192.0.2.1", "dns3": "192.0.2.3"})],
    )
    .expect("answer");
    assert_eq!(got["domain"], Value::string("lan"));
    assert_eq!(got["servers"], strings(&["192.0.2.1", "192.0.2.3"]));
    let none = answered(&r, vec![json!({})]).expect("answer");
    assert_eq!(none["domain"], Value::string(""));
    assert_eq!(none["servers"], strings(&[]));
}

#[test]
fn hosts_are_parsed_as_bpg_parses_them() {
    let r = read("proxmox_virtual_environment_hosts", &on("pve"));
    let file = "127.0.0.1 localhost\n# comment\n192.0.2.10\tpve.lan  pve\n ::1 indented\n\n";
    let got = answered(&r, vec![json!({"data": file, "digest": "abc"})]).expect("answer");
    assert_eq!(got["addresses"], strings(&["127.0.0.1", "192.0.2.10"]));
    assert_eq!(got["digest"], Value::string("abc"));
    let second = &got["hostnames"].as_seq().expect("list")[1];
    assert_eq!(second, &strings(&["pve.lan", "pve"]));
    let entry = &got["entries"].as_seq().expect("list")[0];
    assert_eq!(entry.get_attr("address"), Some(&Value::string("127.0.0.1")));
    assert_eq!(entry.get_attr("hostnames"), Some(&strings(&["localhost"])));
}

#[test]
fn time_gives_utc_and_the_nodes_offset_in_rfc3339() {
    let r = read("proxmox_virtual_environment_time", &on("pve"));
    let got = answered(
        &r,
        vec![
            json!({"timezone": "Europe/Berlin", "time": 1_700_000_000, "localtime": 1_700_003_600}),
        ],
    )
    .expect("answer");
    assert_eq!(got["utc_time"], Value::string("2023-11-14T22:13:20Z"));
    assert_eq!(
        got["local_time"],
        Value::string("2023-11-14T23:13:20+01:00")
    );
    assert_eq!(got["time_zone"], Value::string("Europe/Berlin"));
}

#[test]
fn datastores_pass_filters_to_pve_and_keep_what_is_absent_null() {
    let filters = Value::Object(BTreeMap::from([
        ("content_types".to_owned(), strings(&["images", "rootdir"])),
        ("id".to_owned(), Value::null()),
        ("target".to_owned(), Value::null()),
    ]));
    for name in [
        "proxmox_datastores",
        "proxmox_virtual_environment_datastores",
    ] {
        let r = read(
            name,
            &[
                ("node_name", Value::string("pve")),
                ("filters", filters.clone()),
            ],
        );
        assert_eq!(
            queries(&r),
            [Query::Storages {
                node: "pve".into(),
                content: Some("images,rootdir".into()),
                storage: None,
                target: None
            }]
        );
        let got = answered(
            &r,
            vec![json!([{"storage": "local-lvm", "type": "lvmthin", "content": "rootdir,images",
                         "active": 1, "enabled": 1, "shared": 0, "avail": 10, "total": 20, "used": 10,
                         "used_fraction": 0.5}, {"storage": "nfs", "type": "nfs"}])],
        )
        .expect("answer");
        let stores = got["datastores"].as_seq().expect("list");
        assert_eq!(stores[0].get_attr("node_name"), Some(&Value::string("pve")));
        assert_eq!(stores[0].get_attr("active"), Some(&Value::Bool(true)));
        assert_eq!(stores[0].get_attr("shared"), Some(&Value::Bool(false)));
        assert_eq!(
            stores[0].get_attr("content_types"),
            Some(&Value::Set(
                Type::String,
                vec![Value::string("images"), Value::string("rootdir")]
            ))
        );
        assert_eq!(
            stores[1].get_attr("space_total"),
            Some(&Value::Null(Type::Number))
        );
    }
}

fn volumes() -> serde_json::Value {
    json!([
        {"volid": "local:iso/noble.iso", "content": "iso", "format": "iso", "size": 3000},
        {"volid": "local:vztmpl/debian-12.tar.zst", "content": "vztmpl", "format": "tzst", "size": 100},
        {"volid": "local:backup/vzdump-lxc-100.tar", "content": "backup", "format": "tar", "size": 7, "vmid": 100}
    ])
}

#[test]
fn a_file_is_found_by_name_or_is_bpgs_file_not_found() {
    let args = |name: &str| {
        [
            ("node_name", Value::string("pve")),
            ("datastore_id", Value::string("local")),
            ("content_type", Value::string("iso")),
            ("file_name", Value::string(name)),
        ]
    };
    let r = read("proxmox_file", &args("noble.iso"));
    assert_eq!(
        queries(&r),
        [Query::Content {
            node: "pve".into(),
            storage: "local".into(),
            content: Some("iso".into())
        }]
    );
    let got = answered(&r, vec![volumes()]).expect("answer");
    assert_eq!(got["id"], Value::string("local:iso/noble.iso"));
    assert_eq!(got["file_size"], Value::Number(3000.0));
    assert_eq!(got["vmid"], Value::Null(Type::Number));
    let missing = answered(
        &read("proxmox_virtual_environment_file", &args("gone.iso")),
        vec![volumes()],
    );
    let err = missing.expect_err("not found");
    assert_eq!(err.summary, "File Not Found");
    assert_eq!(
        err.detail,
        "File 'gone.iso' with content type 'iso' not found in datastore 'local' on node 'pve'"
    );
}

#[test]
fn files_match_the_name_pattern_anywhere() {
    let r = read(
        "proxmox_files",
        &[
            ("node_name", Value::string("pve")),
            ("datastore_id", Value::string("local")),
            ("file_name_regex", Value::string("\\.tar")),
        ],
    );
    let got = answered(&r, vec![volumes()]).expect("answer");
    let names: Vec<&str> = got["files"]
        .as_seq()
        .expect("list")
        .iter()
        .filter_map(|f| f.get_attr("file_name").and_then(Value::as_str))
        .collect();
    assert_eq!(names, ["debian-12.tar.zst", "vzdump-lxc-100.tar"]);
    let bad = read(
        "proxmox_files",
        &[
            ("node_name", Value::string("pve")),
            ("datastore_id", Value::string("local")),
            ("file_name_regex", Value::string("(")),
        ],
    );
    let err = answered(&bad, vec![volumes()]).expect_err("bad pattern");
    assert!(err.detail.starts_with("Invalid file_name_regex"), "{err:?}");
}

#[test]
fn pools_and_one_pools_members_sorted_by_id() {
    let r = read("proxmox_virtual_environment_pools", &[]);
    let got = answered(
        &r,
        vec![json!([{"poolid": "prod"}, {"poolid": "dev", "comment": "x"}])],
    )
    .expect("answer");
    assert_eq!(got["pool_ids"], strings(&["prod", "dev"]));
    let one = read(
        "proxmox_virtual_environment_pool",
        &[("pool_id", Value::string("prod"))],
    );
    assert_eq!(
        queries(&one),
        [Query::Pool {
            pool: "prod".into()
        }]
    );
    let members = json!([{"poolid": "prod", "members": [
        {"id": "storage/pve/local", "node": "pve", "storage": "local", "type": "storage"},
        {"id": "lxc/100", "node": "pve", "type": "lxc", "vmid": 100}
    ]}]);
    let got = answered(&one, vec![members]).expect("answer");
    assert_eq!(got["comment"], Value::string(""));
    let first = &got["members"].as_seq().expect("list")[0];
    assert_eq!(first.get_attr("id"), Some(&Value::string("lxc/100")));
    assert_eq!(first.get_attr("datastore_id"), Some(&Value::string("")));
    assert_eq!(first.get_attr("vm_id"), Some(&Value::Number(100.0)));
}

#[test]
fn a_failed_request_is_the_reads_error_with_pves_message() {
    let r = read("proxmox_virtual_environment_dns", &on("nope"));
    let facts = Facts {
        guests: Vec::new(),
        readings: BTreeMap::from([(
            Query::Dns {
                node: "nope".into(),
            },
            Err("hostname lookup 'nope' failed".to_owned()),
        )]),
    };
    assert_eq!(
        answer(&r, &facts),
        Err(ReadError::new(
            "error retrieving DNS configuration: hostname lookup 'nope' failed"
        ))
    );
}
