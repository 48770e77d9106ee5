//! After an apply, the next plan is clean: for each value PVE stores differently from how it
//! was sent (re-printed property strings, case, order, defaults), the plan shows no change.

use crate::plan_support;

use plan_support::World;

/// (key, as sent by atoll, as PVE returns it in `config?current=1`; `None` = key absent).
const STORED_DIFFERENTLY: &[(&str, &str, Option<&str>)] = &[
    ("tags", "Terraform;dev;dev", Some("dev;terraform")),
    (
        "description",
        "Managed by atoll",
        Some("Managed by atoll\n"),
    ),
    (
        "description",
        "line one\r\nline two",
        Some("line one\nline two\n"),
    ),
    (
        "net0",
        "name=eth0,bridge=vmbr0,hwaddr=bc:24:11:5e:7a:01,ip=dhcp",
        Some("name=eth0,bridge=vmbr0,hwaddr=BC:24:11:5E:7A:01,ip=dhcp,type=veth"),
    ),
    (
        "net0",
        "bridge=vmbr0,firewall=0,name=eth0,ip=dhcp,rate=1.50",
        Some("name=eth0,bridge=vmbr0,hwaddr=BC:24:11:5E:7A:01,ip=dhcp,rate=1.5,type=veth"),
    ),
    ("features", "nesting=1,keyctl=1", Some("keyctl=1,nesting=1")),
    ("features", "nesting=0,keyctl=0", None),
    (
        "startup",
        "order=3,up=60,down=60",
        Some("order=3,up=60,down=60"),
    ),
    ("nameserver", "1.1.1.1,9.9.9.9", Some("1.1.1.1 9.9.9.9")),
    (
        "rootfs",
        "local-lvm:8,acl=1",
        Some("local-lvm:vm-2100-disk-0,acl=1,size=8G"),
    ),
    (
        "rootfs",
        "local-lvm:8,replicate=1",
        Some("local-lvm:vm-2100-disk-0,size=8G"),
    ),
    (
        "mp0",
        "local-lvm:10,mp=/data,backup=1",
        Some("local-lvm:vm-2100-disk-1,mp=/data,backup=1,size=10G"),
    ),
    ("mp1", "/mnt/bind,mp=/srv,ro=0", Some("/mnt/bind,mp=/srv")),
    ("cpulimit", "0", None),
    ("cpulimit", "1.50", Some("1.5")),
    ("cpuunits", "20000", Some("10000")),
    ("swap", "512", None),
    ("onboot", "true", Some("1")),
    ("protection", "0", None),
    ("env", "B=2\0A=1", Some("A=1\0B=2")),
    ("hookscript", "", None),
    (
        "dev0",
        "/dev/ttyUSB0,deny-write=0,mode=0660",
        Some("path=/dev/ttyUSB0,mode=0660"),
    ),
];

#[test]
fn values_pve_stores_differently_plan_no_change() {
    let mut failures = Vec::new();
    for (key, sent, stored) in STORED_DIFFERENTLY {
        let mut world = World::applied();
        world.set(key, sent);
        match stored {
            Some(stored) => world
                .live_mut()
                .config
                .insert((*key).to_owned(), (*stored).to_owned()),
            None => world.live_mut().config.remove(*key),
        };
        let plan = world.plan();
        if !plan.is_empty() {
            failures.push(format!(
                "{key}: sent {sent:?}, stored {stored:?}: {:?}",
                plan.resource_changes[0].attributes
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_real_difference_in_the_same_keys_is_still_a_change() {
    let mut world = World::applied();
    world.set("tags", "dev;prod");
    world.set("features", "nesting=1");
    world
        .live_mut()
        .config
        .insert("features".to_owned(), "keyctl=1".to_owned());
    let plan = world.plan();
    let paths: Vec<&str> = plan.resource_changes[0]
        .attributes
        .iter()
        .map(|a| a.path.as_str())
        .collect();
    assert_eq!(paths, vec!["features.keyctl", "features.nesting", "tags"]);
}
