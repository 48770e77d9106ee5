//! Data source schemas, pinned to bpg/proxmox v0.111: the guest ones here
//! (`proxmox_virtual_environment_vm`, one VM by node and VMID, deprecated by bpg in favour of
//! `proxmox_vm`; `_vms`, the VMs matching tags and `filter` blocks; `_container` and
//! `_containers`, the same for containers), the rest in `data_cluster`. What each reads is
//! [`crate::data`]'s.

use super::builders::*;
use super::{BlockSchema, BodySchema};
use crate::types::Constraint;

/// A data source type's schema.
#[derive(Clone, Debug)]
pub struct DataSourceSchema {
    pub type_name: &'static str,
    /// Arguments (required or optional) and what the read sets (computed).
    pub body: BodySchema,
    /// The provider deprecated the whole data source: writing one is a warning with this
    /// message, where it is written.
    pub deprecated: Option<&'static str>,
}

/// Every data source atoll reads: from the cluster (both names of those bpg renamed to
/// `proxmox_*`), then from the checkout.
pub const DATA_SOURCES: &[&str] = &[
    "proxmox_virtual_environment_vm",
    "proxmox_virtual_environment_vms",
    "proxmox_virtual_environment_container",
    "proxmox_virtual_environment_containers",
    "proxmox_virtual_environment_nodes",
    "proxmox_virtual_environment_node",
    "proxmox_version",
    "proxmox_virtual_environment_version",
    "proxmox_virtual_environment_dns",
    "proxmox_virtual_environment_hosts",
    "proxmox_virtual_environment_time",
    "proxmox_datastores",
    "proxmox_virtual_environment_datastores",
    "proxmox_file",
    "proxmox_virtual_environment_file",
    "proxmox_files",
    "proxmox_virtual_environment_pools",
    "proxmox_virtual_environment_pool",
    "local_file",
    "local_sensitive_file",
    "proxmox_hagroups",
    "proxmox_virtual_environment_hagroups",
    "proxmox_hagroup",
    "proxmox_virtual_environment_hagroup",
    "proxmox_haresources",
    "proxmox_virtual_environment_haresources",
    "proxmox_haresource",
    "proxmox_virtual_environment_haresource",
    "proxmox_replications",
    "proxmox_virtual_environment_replications",
    "proxmox_replication",
    "proxmox_virtual_environment_replication",
    "proxmox_metrics_server",
    "proxmox_virtual_environment_metrics_server",
    "proxmox_sdn_zone_simple",
    "proxmox_sdn_zone_vlan",
    "proxmox_sdn_zone_qinq",
    "proxmox_sdn_zone_vxlan",
    "proxmox_sdn_zone_evpn",
    "proxmox_sdn_zones",
    "proxmox_sdn_vnet",
    "proxmox_sdn_vnets",
    "proxmox_sdn_subnet",
    "proxmox_virtual_environment_sdn_zone_simple",
    "proxmox_virtual_environment_sdn_zone_vlan",
    "proxmox_virtual_environment_sdn_zone_qinq",
    "proxmox_virtual_environment_sdn_zone_vxlan",
    "proxmox_virtual_environment_sdn_zone_evpn",
    "proxmox_virtual_environment_sdn_zones",
    "proxmox_virtual_environment_sdn_vnet",
    "proxmox_virtual_environment_sdn_vnets",
    "proxmox_virtual_environment_sdn_subnet",
    "proxmox_virtual_environment_user",
    "proxmox_virtual_environment_users",
    "proxmox_virtual_environment_group",
    "proxmox_virtual_environment_groups",
    "proxmox_virtual_environment_role",
    "proxmox_virtual_environment_roles",
];

/// bpg's message on the data sources its `proxmox_*` names replace
/// (`fwprovider/migration/migration.go`).
const MOVED_TO_VM: &str =
    "Use \"proxmox_vm\" instead. This resource / data source will be removed in v1.0.";
const MOVED_TO_VERSION: &str =
    "Use \"proxmox_version\" instead. This resource / data source will be removed in v1.0.";
const MOVED_TO_DATASTORES: &str =
    "Use \"proxmox_datastores\" instead. This resource / data source will be removed in v1.0.";
const MOVED_TO_FILE: &str =
    "Use \"proxmox_file\" instead. This resource / data source will be removed in v1.0.";

/// The schema of a data source, if atoll reads it.
pub fn data_source(type_name: &str) -> Option<DataSourceSchema> {
    use super::data_access as a;
    use super::data_cluster as c;
    let (type_name, body, deprecated) = match type_name {
        "proxmox_virtual_environment_vm" => (
            "proxmox_virtual_environment_vm",
            guest_body(),
            Some(MOVED_TO_VM),
        ),
        "proxmox_virtual_environment_vms" => {
            ("proxmox_virtual_environment_vms", guests_body("vms"), None)
        }
        "proxmox_virtual_environment_container" => {
            ("proxmox_virtual_environment_container", guest_body(), None)
        }
        "proxmox_virtual_environment_containers" => (
            "proxmox_virtual_environment_containers",
            guests_body("containers"),
            None,
        ),
        "proxmox_virtual_environment_nodes" => {
            ("proxmox_virtual_environment_nodes", c::nodes(), None)
        }
        "proxmox_virtual_environment_node" => ("proxmox_virtual_environment_node", c::node(), None),
        "proxmox_version" => ("proxmox_version", c::version(), None),
        "proxmox_virtual_environment_version" => (
            "proxmox_virtual_environment_version",
            c::version(),
            Some(MOVED_TO_VERSION),
        ),
        "proxmox_virtual_environment_dns" => ("proxmox_virtual_environment_dns", c::dns(), None),
        "proxmox_virtual_environment_hosts" => {
            ("proxmox_virtual_environment_hosts", c::hosts(), None)
        }
        "proxmox_virtual_environment_time" => ("proxmox_virtual_environment_time", c::time(), None),
        "proxmox_datastores" => ("proxmox_datastores", c::datastores(), None),
        "proxmox_virtual_environment_datastores" => (
            "proxmox_virtual_environment_datastores",
            c::datastores(),
            Some(MOVED_TO_DATASTORES),
        ),
        "proxmox_file" => ("proxmox_file", c::file(), None),
        "proxmox_virtual_environment_file" => (
            "proxmox_virtual_environment_file",
            c::file(),
            Some(MOVED_TO_FILE),
        ),
        "proxmox_files" => ("proxmox_files", c::files(), None),
        "proxmox_virtual_environment_pools" => {
            ("proxmox_virtual_environment_pools", c::pools(), None)
        }
        "proxmox_virtual_environment_pool" => ("proxmox_virtual_environment_pool", c::pool(), None),
        t if super::data_ha::NAMES.contains(&t) => super::data_ha::schema(t)?,
        t if t.contains("_sdn_") => super::data_sdn::schema(t)?,
        "proxmox_virtual_environment_user" => ("proxmox_virtual_environment_user", a::user(), None),
        "proxmox_virtual_environment_users" => {
            ("proxmox_virtual_environment_users", a::users(), None)
        }
        "proxmox_virtual_environment_group" => {
            ("proxmox_virtual_environment_group", a::group(), None)
        }
        "proxmox_virtual_environment_groups" => {
            ("proxmox_virtual_environment_groups", a::groups(), None)
        }
        "proxmox_virtual_environment_role" => ("proxmox_virtual_environment_role", a::role(), None),
        "proxmox_virtual_environment_roles" => {
            ("proxmox_virtual_environment_roles", a::roles(), None)
        }
        _ => return None,
    };
    Some(DataSourceSchema {
        type_name,
        body,
        deprecated,
    })
}

/// One VM or container by node and VMID.
fn guest_body() -> BodySchema {
    BodySchema {
        attrs: vm_attrs(true),
        blocks: Vec::new(),
    }
}

/// The VMs or containers matching tags and `filter` blocks, under `list`.
fn guests_body(list: &'static str) -> BodySchema {
    BodySchema {
        attrs: vec![
            opt("node_name", s()),
            opt("tags", ls()),
            ro(list, list_of(vm_object())),
        ],
        blocks: vec![filter()],
    }
}

/// The singular data source's attributes: `node_name` and `vm_id` identify the VM (required
/// when it is read alone), the rest the read sets. bpg declares `template` and `status`
/// optional, but the read overwrites them.
fn vm_attrs(alone: bool) -> Vec<super::AttrSchema> {
    let key = |name, ty| if alone { req(name, ty) } else { ro(name, ty) };
    vec![
        key("node_name", s()),
        key("vm_id", n()),
        ro("name", s()),
        ro("tags", ls()),
        oc("template", b()),
        oc("status", s()),
    ]
}

/// One element of `vms`: the singular data source's attributes as an object.
fn vm_object() -> Constraint {
    Constraint::Object(
        vm_attrs(false)
            .into_iter()
            .map(|a| {
                let attr = crate::types::ObjectAttr {
                    ty: a.ty,
                    optional: false,
                    default: None,
                };
                (a.name.to_owned(), attr)
            })
            .collect(),
    )
}

/// `filter { name = "template", values = ["true"], regex = false }`.
fn filter() -> BlockSchema {
    block(
        "filter",
        None,
        vec![req("name", s()), req("values", ls()), db("regex", false)],
        Vec::new(),
    )
}

#[cfg(test)]
mod tests {
    use super::data_source;

    #[test]
    fn singular_vm_data_source_needs_node_and_vmid_and_is_deprecated() {
        let vm = data_source("proxmox_virtual_environment_vm").expect("schema");
        let required: Vec<&str> = vm
            .body
            .attrs
            .iter()
            .filter(|a| a.required)
            .map(|a| a.name)
            .collect();
        assert_eq!(required, ["node_name", "vm_id"]);
        assert!(vm.deprecated.is_some_and(|m| m.contains("proxmox_vm")));
        assert!(vm.body.attr("tags").is_some_and(|a| a.read_only));
    }

    #[test]
    fn vms_data_source_takes_filters_and_gives_a_computed_list() {
        let vms = data_source("proxmox_virtual_environment_vms").expect("schema");
        assert!(vms.deprecated.is_none());
        assert!(vms.body.attrs.iter().all(|a| !a.required));
        assert!(vms.body.attr("vms").is_some_and(|a| a.read_only));
        let filter = vms.body.block("filter").expect("filter block");
        assert!(
            filter
                .body
                .attr("regex")
                .is_some_and(|a| a.default.is_some())
        );
        assert!(data_source("proxmox_virtual_environment_no_such_thing").is_none());
    }
}
