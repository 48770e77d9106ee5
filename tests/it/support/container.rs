//! The one container fixture: a `proxmox_virtual_environment_container` on the simulator's
//! node `pve` (unprivileged, Debian, an 8 GB disk on `local-lvm`), with what a test varies.

use std::fmt::Write as _;

/// The template every fixture container is created from (the simulator has it).
pub(crate) const TEMPLATE: &str = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst";

/// A container resource block, built up: `Container::new("web").cores(2).hcl()`.
#[derive(Debug, Clone)]
pub(crate) struct Container {
    name: String,
    count: Option<u32>,
    vm_id: Option<u32>,
    started: Option<bool>,
    cores: Option<u32>,
    body: String,
}

impl Container {
    pub(crate) fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            count: None,
            vm_id: None,
            started: None,
            cores: None,
            body: String::new(),
        }
    }

    /// `count = n` (none when `None`).
    pub(crate) fn count(mut self, n: impl Into<Option<u32>>) -> Self {
        self.count = n.into();
        self
    }

    /// `vm_id = id` (none when `None`: PVE picks the next free id).
    pub(crate) fn vm_id(mut self, id: impl Into<Option<u32>>) -> Self {
        self.vm_id = id.into();
        self
    }

    pub(crate) fn started(mut self, started: bool) -> Self {
        self.started = Some(started);
        self
    }

    /// A `cpu { cores = n }` block.
    pub(crate) fn cores(mut self, cores: u32) -> Self {
        self.cores = Some(cores);
        self
    }

    /// More arguments and blocks, as HCL, at the end of the resource.
    pub(crate) fn body(mut self, hcl: &str) -> Self {
        self.body.push_str(hcl);
        if !self.body.ends_with('\n') {
            self.body.push('\n');
        }
        self
    }

    /// The resource block.
    pub(crate) fn hcl(&self) -> String {
        let mut out = format!(
            "resource \"proxmox_virtual_environment_container\" \"{}\" {{\n",
            self.name
        );
        if let Some(n) = self.count {
            let _ = writeln!(out, "  count = {n}");
        }
        out.push_str("  node_name = \"pve\"\n");
        if let Some(id) = self.vm_id {
            let _ = writeln!(out, "  vm_id = {id}");
        }
        out.push_str("  unprivileged = true\n");
        if let Some(started) = self.started {
            let _ = writeln!(out, "  started = {started}");
        }
        let _ = write!(
            out,
            "  operating_system {{\n    template_file_id = \"{TEMPLATE}\"\n    type             = \"debian\"\n  }}\n  \
             disk {{\n    datastore_id = \"local-lvm\"\n    size         = 8\n  }}\n"
        );
        if let Some(cores) = self.cores {
            let _ = write!(out, "  cpu {{\n    cores = {cores}\n  }}\n");
        }
        out.push_str(&self.body);
        out.push_str("}\n");
        out
    }
}
