//! Container volumes: `rootfs` (`pve-ct-rootfs`) and `mp<N>` (`pve-ct-mountpoint`).

use std::fmt;
use std::str::FromStr;

use super::PropertyError;
use super::propstring::{DiskSize, PropPrinter, RawProps, split_list};

/// Options shared by `rootfs` and `mp<N>`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VolumeOptions {
    /// `storage:volname`, `storage:<GB>` (allocate on create), `/host/path` or `/dev/x`.
    pub volume: String,
    pub acl: Option<bool>,
    pub idmap: Option<String>,
    pub mountoptions: Vec<String>,
    pub quota: Option<bool>,
    pub replicate: Option<bool>,
    pub ro: Option<bool>,
    pub shared: Option<bool>,
    /// Informational (read-only); change it with `resize`.
    pub size: Option<DiskSize>,
}

/// The container's root volume.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RootFs {
    pub options: VolumeOptions,
}

/// A mount point `mp<N>`: the volume options plus `mp` (required), `backup`, `keepattrs`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MountPoint {
    pub options: VolumeOptions,
    pub mp: String,
    pub backup: Option<bool>,
    pub keepattrs: Option<bool>,
}

/// Refuses `/./`, `/../`, a trailing `/.` or `/..`, and a leading `../` (`verify_lxc_mp_string`).
fn mp_string_ok(s: &str) -> bool {
    !(s.contains("/./")
        || s.contains("/../")
        || s.ends_with("/.")
        || s.ends_with("/..")
        || s.starts_with("../"))
}

impl VolumeOptions {
    fn take(what: &'static str, p: &mut RawProps) -> Result<Self, PropertyError> {
        let volume = p.take_required("volume")?;
        if !mp_string_ok(&volume) {
            return Err(PropertyError::new(
                what,
                format!("{volume} contains illegal character sequences"),
            ));
        }
        let size = p.take("size").map(|s| DiskSize::parse(&s)).transpose()?;
        Ok(Self {
            volume,
            acl: p.take_bool("acl")?,
            idmap: p.take("idmap"),
            mountoptions: split_list(p.take("mountoptions")),
            quota: p.take_bool("quota")?,
            replicate: p.take_bool("replicate")?,
            ro: p.take_bool("ro")?,
            shared: p.take_bool("shared")?,
            size,
        })
    }

    fn print(&self, printer: PropPrinter) -> PropPrinter {
        printer
            .default_value(&self.volume)
            .opt_bool("acl", self.acl)
            .opt("idmap", self.idmap.as_ref())
            .opt_list("mountoptions", &self.mountoptions)
            .opt_bool("quota", self.quota)
            .opt_bool("replicate", self.replicate)
            .opt_bool("ro", self.ro)
            .opt_bool("shared", self.shared)
            .opt("size", self.size)
    }

    /// The storage part of `storage:volname` (none for bind and device mounts).
    pub fn storage(&self) -> Option<&str> {
        if self.volume.starts_with('/') {
            return None;
        }
        self.volume.split_once(':').map(|(s, _)| s)
    }
}

impl FromStr for RootFs {
    type Err = PropertyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut p = RawProps::parse("rootfs", s, Some("volume"))?;
        let options = VolumeOptions::take("rootfs", &mut p)?;
        p.finish()?;
        Ok(Self { options })
    }
}

impl fmt::Display for RootFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.options.print(PropPrinter::default()).finish())
    }
}

impl FromStr for MountPoint {
    type Err = PropertyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut p = RawProps::parse("mount point", s, Some("volume"))?;
        let options = VolumeOptions::take("mount point", &mut p)?;
        let mp = p.take_required("mp")?;
        if !mp_string_ok(&mp) {
            return Err(PropertyError::new(
                "mount point",
                format!("{mp} contains illegal character sequences"),
            ));
        }
        let point = Self {
            options,
            mp,
            backup: p.take_bool("backup")?,
            keepattrs: p.take_bool("keepattrs")?,
        };
        p.finish()?;
        Ok(point)
    }
}

impl fmt::Display for MountPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let printer = PropPrinter::default()
            .required("mp", &self.mp)
            .opt_bool("backup", self.backup)
            .opt_bool("keepattrs", self.keepattrs);
        f.write_str(&self.options.print(printer).finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rootfs_example_round_trips() {
        let text = "local-lvm:vm-123-disk-0,size=8G";
        let root: RootFs = text.parse().expect("test value");
        assert_eq!(root.options.size, Some(DiskSize::from_gib(8)));
        assert_eq!(root.options.storage(), Some("local-lvm"));
        assert_eq!(root.to_string(), text);
    }

    #[test]
    fn rootfs_explicit_volume_key_prints_as_default_value() {
        let root: RootFs = "size=8192M,volume=local:8,mountoptions=noatime;nodev,acl=on"
            .parse()
            .expect("test value");
        assert_eq!(
            root.to_string(),
            "local:8,acl=1,mountoptions=noatime;nodev,size=8G"
        );
    }

    #[test]
    fn mount_point_prints_volume_then_mp_then_alphabetical() {
        let mp: MountPoint = "local-lvm:vm-123-disk-1,size=10G,backup=1,mp=/mnt/data"
            .parse()
            .expect("test value");
        assert_eq!(
            mp.to_string(),
            "local-lvm:vm-123-disk-1,mp=/mnt/data,backup=1,size=10G"
        );
        let bind: MountPoint = "/mnt/bindmounts/shared,mp=/mnt/shared"
            .parse()
            .expect("test value");
        assert_eq!(bind.options.storage(), None);
    }

    #[test]
    fn volumes_reject_missing_or_unsafe_parts() {
        assert!("local:8".parse::<MountPoint>().is_err(), "mp is required");
        assert!("local:8,mp=/mnt/../etc".parse::<MountPoint>().is_err());
        assert!("size=8G".parse::<RootFs>().is_err(), "volume is required");
        assert!(
            "local:8,backup=1".parse::<RootFs>().is_err(),
            "backup is mp-only"
        );
        assert!("local:8,size=big".parse::<RootFs>().is_err());
    }
}
