//! LXC `features` (`nesting=1,keyctl=1,mount=nfs;cifs`), printed alphabetically.

use std::fmt;
use std::str::FromStr;

use super::PropertyError;
use super::propstring::{PropPrinter, RawProps, split_list};

/// Container feature flags; `None` means "not set" (PVE default off).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Features {
    pub force_rw_sys: Option<bool>,
    pub fuse: Option<bool>,
    pub keyctl: Option<bool>,
    pub mknod: Option<bool>,
    /// File system types allowed for `mount` inside the container.
    pub mount: Vec<String>,
    pub nesting: Option<bool>,
}

impl Features {
    /// Whether any flag is on or any mount type allowed; every flag not set reads as off.
    pub fn is_empty(&self) -> bool {
        let on = |f: Option<bool>| f == Some(true);
        !(on(self.force_rw_sys)
            || on(self.fuse)
            || on(self.keyctl)
            || on(self.mknod)
            || on(self.nesting)
            || !self.mount.is_empty())
    }
}

impl FromStr for Features {
    type Err = PropertyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut p = RawProps::parse("features", s, None)?;
        let mount = split_list(p.take("mount"));
        if let Some(bad) = mount
            .iter()
            .find(|m| !m.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        {
            return Err(PropertyError::new(
                "features",
                format!("invalid file system type '{bad}' in 'mount'"),
            ));
        }
        let features = Self {
            force_rw_sys: p.take_bool("force_rw_sys")?,
            fuse: p.take_bool("fuse")?,
            keyctl: p.take_bool("keyctl")?,
            mknod: p.take_bool("mknod")?,
            mount,
            nesting: p.take_bool("nesting")?,
        };
        p.finish()?;
        Ok(features)
    }
}

impl fmt::Display for Features {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = PropPrinter::default()
            .opt_bool("force_rw_sys", self.force_rw_sys)
            .opt_bool("fuse", self.fuse)
            .opt_bool("keyctl", self.keyctl)
            .opt_bool("mknod", self.mknod)
            .opt_list("mount", &self.mount)
            .opt_bool("nesting", self.nesting)
            .finish();
        f.write_str(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_compare_by_value_and_print_alphabetically() {
        let a: Features = "nesting=1,keyctl=1".parse().expect("test value");
        let b: Features = "keyctl=yes,nesting=on".parse().expect("test value");
        assert_eq!(a, b);
        assert_eq!(a.to_string(), "keyctl=1,nesting=1");
        let m: Features = "mount=nfs;cifs,fuse=0".parse().expect("test value");
        assert_eq!(m.mount, ["nfs", "cifs"]);
        assert_eq!(m.to_string(), "fuse=0,mount=nfs;cifs");
        assert!(Features::default().is_empty());
        assert!("fuse=0".parse::<Features>().expect("test value").is_empty());
    }

    #[test]
    fn features_reject_unknown_flags_and_bad_values() {
        assert!("nesting=2".parse::<Features>().is_err());
        assert!("docker=1".parse::<Features>().is_err());
        assert!("1".parse::<Features>().is_err());
        assert!("mount=nfs/x".parse::<Features>().is_err());
    }
}
