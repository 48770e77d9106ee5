use std::collections::BTreeMap;

use super::super::{ClusterGuest, DataRead, Facts, ReadError, answer};
use crate::diag::Span;
use crate::value::{Type, Value};

fn guest(vm_id: u32, node: &str, name: &str, tags: &str, template: bool) -> ClusterGuest {
    ClusterGuest {
        vm_id,
        node: node.to_owned(),
        qemu: true,
        name: Some(name.to_owned()).filter(|n| !n.is_empty()),
        tags: Some(tags.to_owned()),
        template,
        status: if template { "stopped" } else { "running" }.to_owned(),
    }
}

fn cluster() -> Facts {
    Facts {
        guests: guests(),
        readings: BTreeMap::new(),
    }
}

fn guests() -> Vec<ClusterGuest> {
    let mut container = guest(150, "pve", "ct", "web", false);
    container.qemu = false;
    vec![
        guest(9001, "pve2", "noble-cloud", "", true),
        guest(9000, "pve", "noble-cloud", "image;ubuntu", true),
        guest(201, "pve", "k3s-a", "k3s;web", false),
        guest(202, "pve2", "k3s-b", "web;k3s", false),
        guest(300, "pve", "", "", false),
        container,
    ]
}

fn read(data_type: &str, arguments: Vec<(&str, Value)>) -> DataRead {
    DataRead {
        data_type: data_type.to_owned(),
        address: format!("data.{data_type}.x"),
        arguments: Value::Object(
            arguments
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        ),
        subject: Span {
            file: 0,
            range: 0..1,
        },
        declared_at: "main.tf:1".to_owned(),
    }
}

fn strings(items: &[&str]) -> Value {
    Value::List(
        Type::String,
        items.iter().map(|s| Value::string(*s)).collect(),
    )
}

fn filter(name: &str, values: &[&str], regex: bool) -> Value {
    Value::Object(BTreeMap::from([
        ("name".to_owned(), Value::string(name)),
        ("values".to_owned(), strings(values)),
        ("regex".to_owned(), Value::Bool(regex)),
    ]))
}

fn filters(blocks: Vec<Value>) -> (&'static str, Value) {
    ("filter", Value::List(Type::Dynamic, blocks))
}

/// The VMIDs a `proxmox_virtual_environment_vms` read finds.
fn found(arguments: Vec<(&str, Value)>) -> Result<Vec<f64>, ReadError> {
    let got = answer(
        &read("proxmox_virtual_environment_vms", arguments),
        &cluster(),
    )?;
    let vms = got["vms"].as_seq().expect("a list").to_vec();
    Ok(vms
        .iter()
        .map(|vm| {
            vm.get_attr("vm_id")
                .and_then(Value::as_number)
                .expect("vm_id")
        })
        .collect())
}

#[test]
fn one_vm_gives_its_name_sorted_tags_template_and_status() {
    let args = vec![
        ("node_name", Value::string("pve")),
        ("vm_id", Value::Number(9000.0)),
    ];
    let got = answer(&read("proxmox_virtual_environment_vm", args), &cluster()).expect("found");
    assert_eq!(got["name"], Value::string("noble-cloud"));
    assert_eq!(got["tags"], strings(&["image", "ubuntu"]));
    assert_eq!(got["template"], Value::Bool(true));
    assert_eq!(got["status"], Value::string("stopped"));
}

#[test]
fn one_vm_without_name_or_tags_gives_empty_ones() {
    let args = vec![
        ("node_name", Value::string("pve")),
        ("vm_id", Value::Number(300.0)),
    ];
    let got = answer(&read("proxmox_virtual_environment_vm", args), &cluster()).expect("found");
    assert_eq!(got["name"], Value::string(""));
    assert_eq!(got["tags"], strings(&[]));
}

#[test]
fn one_vm_on_another_node_or_a_container_is_not_found_in_bpgs_words() {
    let on = |node: &str, id: f64| {
        let args = vec![
            ("node_name", Value::string(node)),
            ("vm_id", Value::Number(id)),
        ];
        answer(&read("proxmox_virtual_environment_vm", args), &cluster())
    };
    assert_eq!(
        on("pve2", 9000.0),
        Err(ReadError::new("VM 9000 not found on node \"pve2\""))
    );
    assert!(on("pve", 150.0).is_err(), "a container is not a VM");
    assert!(on("pve", 999.0).is_err());
}

#[test]
fn vms_lists_qemu_guests_by_node_then_vmid() {
    assert_eq!(found(vec![]), Ok(vec![201.0, 300.0, 9000.0, 202.0, 9001.0]));
    let on_pve2 = vec![("node_name", Value::string("pve2"))];
    assert_eq!(found(on_pve2), Ok(vec![202.0, 9001.0]));
}

#[test]
fn vms_keeps_those_with_every_tag_asked_for() {
    assert_eq!(
        found(vec![("tags", strings(&[" web ", "k3s"]))]),
        Ok(vec![201.0, 202.0])
    );
    assert_eq!(
        found(vec![("tags", strings(&["web", "image"]))]),
        Ok(vec![])
    );
    assert_eq!(
        found(vec![("tags", strings(&["", " "]))]).map(|v| v.len()),
        Ok(5)
    );
}

#[test]
fn filters_are_anded_across_blocks_and_ored_within_values() {
    let templates = filters(vec![filter("template", &["true"], false)]);
    assert_eq!(found(vec![templates]), Ok(vec![9000.0, 9001.0]));
    let either = filters(vec![filter("name", &["k3s-a", "k3s-b"], false)]);
    assert_eq!(found(vec![either]), Ok(vec![201.0, 202.0]));
    let both = filters(vec![
        filter("name", &["noble-cloud"], false),
        filter("node_name", &["pve"], false),
    ]);
    assert_eq!(found(vec![both]), Ok(vec![9000.0]));
    let running = filters(vec![filter("status", &["running"], false)]);
    assert_eq!(found(vec![running]), Ok(vec![201.0, 300.0, 202.0]));
}

#[test]
fn regex_filters_match_anywhere_unless_anchored() {
    let unanchored = filters(vec![filter("name", &["3s"], true)]);
    assert_eq!(found(vec![unanchored]), Ok(vec![201.0, 202.0]));
    let anchored = filters(vec![filter("name", &["^3s"], true)]);
    assert_eq!(found(vec![anchored]), Ok(vec![]));
    let exact = filters(vec![filter("name", &["3s"], false)]);
    assert_eq!(found(vec![exact]), Ok(vec![]));
}

#[test]
fn unknown_filter_names_and_bad_patterns_fail_the_read() {
    let vmid = filters(vec![filter("vm_id", &["201"], false)]);
    assert_eq!(
        found(vec![vmid]),
        Err(ReadError::new(
            "unknown filter name 'vm_id', should be one of [name, template, status, node_name]"
        ))
    );
    let bad = filters(vec![filter("name", &["(unclosed"], true)]);
    let err = found(vec![bad]).expect_err("a bad pattern");
    assert!(
        err.summary
            .starts_with("error interpreting filter 'name' value '(unclosed' as regex"),
        "{err}"
    );
}

#[test]
fn vms_elements_carry_every_attribute_of_one_vm() {
    let only = filters(vec![filter("name", &["k3s-b"], false)]);
    let got = answer(
        &read("proxmox_virtual_environment_vms", vec![only]),
        &cluster(),
    )
    .expect("read");
    let vm = &got["vms"].as_seq().expect("list")[0];
    assert_eq!(vm.get_attr("node_name"), Some(&Value::string("pve2")));
    assert_eq!(vm.get_attr("tags"), Some(&strings(&["k3s", "web"])));
    assert_eq!(vm.get_attr("template"), Some(&Value::Bool(false)));
    assert_eq!(vm.get_attr("status"), Some(&Value::string("running")));
    assert_eq!(vm.get_attr("name"), Some(&Value::string("k3s-b")));
}

#[test]
fn containers_are_read_like_vms_but_only_from_the_lxc_guests() {
    let got = answer(
        &read("proxmox_virtual_environment_containers", vec![]),
        &cluster(),
    )
    .expect("read");
    let listed = got["containers"].as_seq().expect("a list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].get_attr("vm_id"), Some(&Value::Number(150.0)));
    assert_eq!(listed[0].get_attr("tags"), Some(&strings(&["web"])));

    let one = |id: f64| {
        let args = vec![
            ("node_name", Value::string("pve")),
            ("vm_id", Value::Number(id)),
        ];
        answer(
            &read("proxmox_virtual_environment_container", args),
            &cluster(),
        )
    };
    assert_eq!(one(150.0).expect("found")["name"], Value::string("ct"));
    assert_eq!(
        one(201.0),
        Err(ReadError::new(
            "error retrieving container status: Configuration file 'nodes/pve/lxc/201.conf' does not exist"
        ))
    );
}
