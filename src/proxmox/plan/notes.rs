//! What an existing guest's change does beyond its effect, said under the change: a disk that
//! cannot shrink, a mount point that gets a new volume on another storage, a container
//! address switched to DHCP. Each note reads the attribute changes only; the effects
//! themselves are `effect`'s.

use serde_json::Value as Json;

use super::change::AttributeChange;
use super::effect::{Effect, Power};
use super::model::{GuestKind, LiveGuest};
use super::normalize::{allocation, volume_storage};

/// The notes for one existing guest's attribute changes, in attribute order.
pub(crate) fn guest_notes(live: &LiveGuest, attributes: &[AttributeChange]) -> Vec<String> {
    attributes
        .iter()
        .filter_map(|a| {
            shrink(a)
                .or_else(|| new_template(live, a))
                .or_else(|| moved_mount_point(live, a))
                .or_else(|| dhcp_without_address(live, attributes, a))
        })
        .collect()
}

/// PVE's `resize` only grows a volume (`unable to shrink disk size`): a smaller disk replaces
/// the guest.
fn shrink(a: &AttributeChange) -> Option<String> {
    let volume = a.pve_key == "rootfs" || a.pve_key.starts_with("mp");
    (a.effect == Some(Effect::Replace) && a.path.ends_with(".size") && volume).then(|| {
        format!(
            "{} cannot shrink in place ({} -> {}): Proxmox VE refuses with \"unable to shrink \
             disk size\", so the guest is replaced and the data on that volume is lost; keep \
             the size, or move the data first",
            a.path, a.before, a.after
        )
    })
}

/// A container made anew from another template (or OCI image) loses the volumes it has: the
/// replace destroys it (`destroy-unreferenced-disks` aside, its own volumes go with it) before
/// the new one is created. Bind mounts (host directories) are not volumes and survive.
fn new_template(live: &LiveGuest, a: &AttributeChange) -> Option<String> {
    if live.kind != GuestKind::Lxc || a.pve_key != "ostemplate" || a.effect != Some(Effect::Replace)
    {
        return None;
    }
    let mut volumes: Vec<String> = live
        .config
        .iter()
        .filter(|(key, _)| *key == "rootfs" || key.starts_with("mp"))
        .filter_map(|(key, value)| {
            let volume = value.split(',').next()?;
            (!volume.starts_with('/')).then(|| format!("{key} ({volume})"))
        })
        .collect();
    volumes.sort();
    Some(format!(
        "the container is made anew from {}: its volumes are destroyed with it ({}); data that \
         must survive belongs on a bind mount, or copy it off first",
        a.after.as_str().unwrap_or_default(),
        volumes.join(", ")
    ))
}

/// A mount point given another volume keeps its path but not its data: pve-container
/// `apply_pending_mountpoint` allocates the new volume (`storage:size`) when the change is
/// applied and keeps the old one as `unusedN` (`add_unused_volume`), copying nothing.
fn moved_mount_point(live: &LiveGuest, a: &AttributeChange) -> Option<String> {
    if live.kind != GuestKind::Lxc || !a.pve_key.starts_with("mp") || !a.path.ends_with(".volume") {
        return None;
    }
    let (Json::String(before), Json::String(after)) = (&a.before, &a.after) else {
        return None;
    };
    let mount_point = a.path.trim_end_matches(".volume");
    let old_storage = volume_storage(before);
    let Some((storage, _)) = allocation(after) else {
        return Some(format!(
            "{mount_point} mounts {after} instead of {before}: nothing is copied from {before}"
        ));
    };
    if old_storage == Some(storage) {
        return None;
    }
    let keep = if before.starts_with('/') {
        format!("{before} is left as it is")
    } else {
        format!("{before} stays attached as an unused disk until you delete it")
    };
    Some(format!(
        "{mount_point} moves to {storage}: Proxmox VE gives it a new, empty volume there and \
         copies no data; {keep}. To keep the data, move the volume first (`pct move-volume {} \
         {} {storage}`); the next plan then shows no change",
        live.vm_id, a.pve_key
    ))
}

/// pve-container `update_ipconfig`: on a running container the static address is removed at
/// once and no DHCP client is started unless the interface is `host-managed`; the guest's own
/// client asks for an address when its network starts again.
fn dhcp_without_address(
    live: &LiveGuest,
    attributes: &[AttributeChange],
    a: &AttributeChange,
) -> Option<String> {
    if live.kind != GuestKind::Lxc || live.power != Power::Running || a.effect != Some(Effect::Live)
    {
        return None;
    }
    let family = if a.path.ends_with(".ipv4.address") {
        "IPv4"
    } else if a.path.ends_with(".ipv6.address") {
        "IPv6"
    } else {
        return None;
    };
    let (Json::String(before), Json::String(after)) = (&a.before, &a.after) else {
        return None;
    };
    let dynamic = |ip: &str| matches!(ip, "dhcp" | "auto" | "manual");
    if dynamic(before) || !matches!(after.as_str(), "dhcp" | "auto") {
        return None;
    }
    // the interface as it will be: its `host-managed` flag changed by this plan, or as it is
    let changed = attributes
        .iter()
        .find(|other| other.pve_key == a.pve_key && other.path.ends_with(".host_managed"));
    let host_managed = match changed {
        Some(flag) => matches!(&flag.after, Json::Bool(true)) || flag.after == "1",
        None => live
            .config
            .get(&a.pve_key)
            .is_some_and(|net| net.split(',').any(|f| f == "host-managed=1")),
    };
    if host_managed {
        return None;
    }
    let interface = live
        .config
        .get(&a.pve_key)
        .and_then(|net| net.split(',').find_map(|f| f.strip_prefix("name=")))
        .unwrap_or(&a.pve_key);
    Some(format!(
        "{}: the container loses {before} at once and has no {family} address on {interface} \
         until a DHCP client inside it asks for one (at the latest when it next starts); \
         Proxmox VE starts none",
        a.path
    ))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn live(power: Power, config: &[(&str, &str)]) -> LiveGuest {
        LiveGuest {
            vm_id: 100,
            node: "pve".to_owned(),
            kind: GuestKind::Lxc,
            name: None,
            power,
            config: config
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>(),
            pending: Vec::new(),
        }
    }

    fn attr(path: &str, key: &str, before: &str, after: &str, effect: Effect) -> AttributeChange {
        let mut a = super::super::attrs::change(
            path.to_owned(),
            key,
            Json::from(before),
            Json::from(after),
        );
        a.effect = Some(effect);
        a
    }

    #[test]
    fn a_mount_point_on_another_storage_says_its_data_stays_behind() {
        let a = attr(
            "mount_point[0].volume",
            "mp0",
            "local-lvm:vm-100-disk-1",
            "fast:8",
            Effect::Restart,
        );
        let notes = guest_notes(&live(Power::Running, &[]), &[a]);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("mount_point[0] moves to fast")
                && notes[0].contains("copies no data")
                && notes[0].contains("local-lvm:vm-100-disk-1 stays attached as an unused disk")
                && notes[0].contains("pct move-volume 100 mp0 fast"),
            "{}",
            notes[0]
        );
    }

    #[test]
    fn a_new_template_names_the_volumes_the_replace_destroys() {
        let a = attr(
            "operating_system.template_file_id",
            "ostemplate",
            "local:vztmpl/nginx_alpine.tar",
            "local:vztmpl/nginx_1.29-alpine.tar",
            Effect::Replace,
        );
        let running = live(
            Power::Running,
            &[
                ("rootfs", "local-lvm:vm-100-disk-0,size=2G"),
                ("mp0", "local-lvm:vm-100-disk-1,mp=/data,size=8G"),
                ("mp1", "/srv/shared,mp=/shared"),
            ],
        );
        let notes = guest_notes(&running, &[a]);
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("(mp0 (local-lvm:vm-100-disk-1), rootfs (local-lvm:vm-100-disk-0))")
                && !notes[0].contains("/srv/shared"),
            "{}",
            notes[0]
        );
    }

    #[test]
    fn static_to_dhcp_on_a_running_container_says_it_has_no_address_until_its_client_asks() {
        let a = attr(
            "initialization.ip_config[0].ipv4.address",
            "net0",
            "10.0.0.5/24",
            "dhcp",
            Effect::Live,
        );
        let running = live(
            Power::Running,
            &[("net0", "name=eth0,bridge=vmbr0,ip=10.0.0.5/24")],
        );
        let notes = guest_notes(&running, std::slice::from_ref(&a));
        assert_eq!(notes.len(), 1);
        assert!(notes[0].contains("loses 10.0.0.5/24 at once and has no IPv4 address on eth0"));
        let managed = live(
            Power::Running,
            &[(
                "net0",
                "name=eth0,bridge=vmbr0,ip=10.0.0.5/24,host-managed=1",
            )],
        );
        assert!(guest_notes(&managed, std::slice::from_ref(&a)).is_empty());
        let mut stopped = a;
        stopped.effect = Some(Effect::Deferred);
        assert!(guest_notes(&live(Power::Stopped, &[]), &[stopped]).is_empty());
    }
}
