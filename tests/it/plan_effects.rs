//! Every key of PVE's container hotplug table (reference/proxmox.md section 3b), on a running
//! and on a stopped guest: the effect atoll predicts for each field-level change.

use atoll::proxmox::plan::{Effect, Power, classify_lxc, worst_lxc};

use Effect::{Deferred, LinkReset, Live, Replace, Restart};

const NET: &str = "bridge=vmbr0,gw=10.0.0.1,hwaddr=BC:24:11:00:00:01,ip=10.0.0.5/24,name=eth0";
const MP: &str = "backup=1,mp=/data,size=10G,volume=local-lvm:vm-100-disk-1";
const ROOTFS: &str = "size=8G,volume=local-lvm:vm-100-disk-0";

type Row = (
    &'static str,
    Option<String>,
    Option<String>,
    Option<&'static str>,
    Effect,
);

fn net(field: &str, value: &str) -> Option<String> {
    let prefix = format!("{field}=");
    let mut fields: Vec<String> = NET
        .split(',')
        .filter(|f| !f.starts_with(&prefix))
        .map(str::to_owned)
        .collect();
    fields.push(format!("{field}={value}"));
    fields.sort();
    Some(fields.join(","))
}

fn s(value: &str) -> Option<String> {
    Some(value.to_owned())
}

fn with(base: &str, from: &str, to: &str) -> Option<String> {
    Some(base.replace(from, to))
}

/// (key, before, after, changed field, effect on a running guest).
fn table() -> Vec<Row> {
    let mut rows = plain_rows();
    rows.extend(net_rows());
    rows.extend(volume_rows());
    rows
}

fn plain_rows() -> Vec<Row> {
    vec![
        ("description", s("old"), s("new"), None, Live),
        ("onboot", s("0"), s("1"), None, Live),
        ("startup", s("order=1"), s("order=2"), Some("order"), Live),
        ("protection", s("0"), s("1"), None, Live),
        ("tags", s("a"), s("a;b"), None, Live),
        (
            "hookscript",
            s("local:snippets/a.sh"),
            s("local:snippets/b.sh"),
            None,
            Live,
        ),
        ("hostname", s("a"), s("b"), None, Deferred),
        ("cores", s("1"), s("2"), None, Live),
        ("memory", s("512"), s("1024"), None, Live),
        ("swap", s("512"), s("0"), None, Live),
        ("swap", s("512"), None, None, Live),
        ("cpulimit", s("0"), s("1.5"), None, Live),
        ("cpulimit", s("2"), None, None, Live),
        ("cpuunits", s("100"), s("200"), None, Live),
        ("cpuunits", s("200"), None, None, Live),
        ("features", s(""), s("nesting=1"), Some("nesting"), Restart),
        (
            "features",
            s("nesting=1"),
            s("keyctl=1,nesting=1"),
            Some("keyctl"),
            Restart,
        ),
        ("features", s(""), s("fuse=1"), Some("fuse"), Restart),
        ("features", s(""), s("mknod=1"), Some("mknod"), Restart),
        ("features", s(""), s("mount=nfs"), Some("mount"), Restart),
        ("ostype", s("debian"), s("ubuntu"), None, Restart),
        ("arch", s("amd64"), s("arm64"), None, Restart),
        ("console", s("1"), s("0"), None, Restart),
        ("cmode", s("tty"), s("shell"), None, Restart),
        ("tty", s("2"), s("4"), None, Restart),
        ("nameserver", s("1.1.1.1"), s("9.9.9.9"), None, Restart),
        ("searchdomain", s("a.test"), s("b.test"), None, Restart),
        ("timezone", s("UTC"), s("Europe/Berlin"), None, Restart),
        ("entrypoint", s("/sbin/init"), s("/bin/sh"), None, Restart),
        ("env", s("A=1"), s("A=2"), None, Restart),
        ("debug", s("0"), s("1"), None, Restart),
        ("template", s("0"), s("1"), None, Replace),
        ("unprivileged", s("0"), s("1"), None, Replace),
        (
            "ostemplate",
            s("local:vztmpl/a.tar.zst"),
            s("local:vztmpl/b.tar.zst"),
            None,
            Replace,
        ),
        ("password", s("x"), s("y"), None, Replace),
        (
            "ssh-public-keys",
            s("ssh-ed25519 A"),
            s("ssh-ed25519 B"),
            None,
            Replace,
        ),
        ("pool", s("dev"), s("prod"), None, Replace),
    ]
}

fn net_rows() -> Vec<Row> {
    vec![
        ("net1", None, s("bridge=vmbr0,name=eth1"), None, Live),
        ("net1", s("bridge=vmbr0,name=eth1"), None, None, LinkReset),
        (
            "net0",
            s(NET),
            net("hwaddr", "BC:24:11:00:00:02"),
            Some("hwaddr"),
            LinkReset,
        ),
        ("net0", s(NET), net("name", "eth9"), Some("name"), LinkReset),
        (
            "net0",
            s(NET),
            net("bridge", "vmbr1"),
            Some("bridge"),
            LinkReset,
        ),
        ("net0", s(NET), net("tag", "20"), Some("tag"), LinkReset),
        (
            "net0",
            s(NET),
            net("firewall", "1"),
            Some("firewall"),
            LinkReset,
        ),
        (
            "net0",
            s(NET),
            net("link_down", "1"),
            Some("link_down"),
            LinkReset,
        ),
        ("net0", s(NET), net("rate", "10"), Some("rate"), Live),
        ("net0", s(NET), net("ip", "10.0.0.6/24"), Some("ip"), Live),
        ("net0", s(NET), net("gw", "10.0.0.254"), Some("gw"), Live),
        ("net0", s(NET), net("ip6", "fd00::5/64"), Some("ip6"), Live),
        ("net0", s(NET), net("gw6", "fd00::1"), Some("gw6"), Live),
        ("net0", s(NET), net("mtu", "1400"), Some("mtu"), Deferred),
        (
            "net0",
            s(NET),
            net("host-managed", "1"),
            Some("host-managed"),
            Deferred,
        ),
        (
            "net0",
            s(NET),
            net("trunks", "10;20"),
            Some("trunks"),
            Deferred,
        ),
    ]
}

fn volume_rows() -> Vec<Row> {
    let dev = "mode=0660,path=/dev/ttyUSB0";
    vec![
        ("mp1", None, s("mp=/srv,volume=local-lvm:4"), None, Live),
        ("mp0", s(MP), None, None, Restart),
        (
            "mp0",
            s(MP),
            with(MP, "backup=1,", ""),
            Some("backup"),
            Restart,
        ),
        (
            "mp0",
            s(MP),
            with(MP, "mp=/data", "mp=/srv"),
            Some("mp"),
            Restart,
        ),
        (
            "mp0",
            s(MP),
            with(MP, "size=10G", "size=20G"),
            Some("size"),
            Live,
        ),
        (
            "mp0",
            s(MP),
            with(MP, "size=10G", "size=5G"),
            Some("size"),
            Replace,
        ),
        // another volume is mounted when the change is applied, which waits for the restart
        // (pve-container `vmconfig_hotplug_pending`: "don't try to hotplug over existing mp")
        (
            "mp0",
            s(MP),
            with(MP, "disk-1", "disk-7"),
            Some("volume"),
            Restart,
        ),
        (
            "mp0",
            s(MP),
            with(MP, "local-lvm:vm-100-disk-1", "fast:8"),
            Some("volume"),
            Restart,
        ),
        ("dev1", None, s("path=/dev/ttyUSB0"), None, Live),
        (
            "dev0",
            s(dev),
            with(dev, "0660", "0600"),
            Some("mode"),
            Restart,
        ),
        ("dev0", s(dev), None, None, Restart),
        ("unused0", s("local-lvm:vm-100-disk-2"), None, None, Live),
        (
            "rootfs",
            s(ROOTFS),
            with(ROOTFS, "8G", "16G"),
            Some("size"),
            Live,
        ),
        (
            "rootfs",
            s(ROOTFS),
            with(ROOTFS, "8G", "4G"),
            Some("size"),
            Replace,
        ),
        (
            "rootfs",
            s(ROOTFS),
            with(ROOTFS, "local-lvm:vm", "zfs:subvol"),
            Some("volume"),
            Replace,
        ),
        (
            "rootfs",
            s(ROOTFS),
            s(&format!("acl=1,{ROOTFS}")),
            Some("acl"),
            Restart,
        ),
        (
            "rootfs",
            s(ROOTFS),
            s(&format!("quota=1,{ROOTFS}")),
            Some("quota"),
            Restart,
        ),
        (
            "rootfs",
            s(ROOTFS),
            s(&format!("mountoptions=noatime,{ROOTFS}")),
            Some("mountoptions"),
            Restart,
        ),
        (
            "rootfs",
            s(ROOTFS),
            s(&format!("replicate=0,{ROOTFS}")),
            Some("replicate"),
            Restart,
        ),
    ]
}

fn check(power: Power, expected: impl Fn(Effect) -> Effect) {
    let mut failures = Vec::new();
    for (key, before, after, field, running) in table() {
        let changes = classify_lxc(key, before.as_deref(), after.as_deref(), power);
        let got: Vec<(Option<&str>, Effect)> = changes
            .iter()
            .map(|c| (c.field.as_deref(), c.effect))
            .collect();
        let want = vec![(field, expected(running))];
        if got != want {
            failures.push(format!(
                "{key} {before:?} -> {after:?}: got {got:?}, want {want:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{power:?}:\n{}", failures.join("\n"));
}

#[test]
fn each_key_has_pve_effect_on_a_running_container() {
    check(Power::Running, |running| running);
}

#[test]
fn every_in_place_change_to_a_stopped_container_is_deferred() {
    check(Power::Stopped, |running| {
        if running == Replace {
            Replace
        } else {
            Deferred
        }
    });
}

#[test]
fn changing_several_net_fields_reports_each_field() {
    let after =
        "bridge=vmbr1,gw=10.0.0.1,hwaddr=BC:24:11:00:00:01,ip=10.0.0.9/24,mtu=1400,name=eth0";
    let changes = classify_lxc("net0", Some(NET), Some(after), Power::Running);
    let got: Vec<(&str, Effect)> = changes
        .iter()
        .map(|c| (c.field.as_deref().unwrap_or(""), c.effect))
        .collect();
    assert_eq!(
        got,
        vec![("bridge", LinkReset), ("ip", Live), ("mtu", Deferred)]
    );
}

#[test]
fn unknown_new_values_assume_the_worst_effect_of_the_key() {
    assert_eq!(worst_lxc("net0", Power::Running), LinkReset);
    assert_eq!(worst_lxc("features", Power::Running), Restart);
    assert_eq!(worst_lxc("memory", Power::Running), Live);
    assert_eq!(worst_lxc("rootfs", Power::Running), Replace);
    assert_eq!(worst_lxc("features", Power::Stopped), Deferred);
}

#[test]
fn effects_are_ordered_by_disruption() {
    assert!(Live < Deferred && Deferred < LinkReset && LinkReset < Restart && Restart < Replace);
}
