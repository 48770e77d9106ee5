# Disks only on allowed datastores: a container's rootfs (`disk.datastore_id`), a VM's disks
# (`disk[scsi0].datastore_id`, ...), EFI disk and TPM state created or moved by a plan must be
# on one of `allowed_datastores`. Edit the list for your cluster.
#
# Use it as a policy set in atoll's configuration:
#   policies:
#     policy_sets:
#       - name: datastores
#         path: /etc/atoll/policies/datastores
package main

import rego.v1

allowed_datastores := {"local-lvm", "local-zfs"}

disk_datastore(path) if path == "disk.datastore_id"

disk_datastore(path) if path in {"efi_disk.datastore_id", "tpm_state.datastore_id"}

disk_datastore(path) if vm_disk_path(path)

# `disk[scsi0].datastore_id`, `disk[virtio1].datastore_id`, ... (atoll is built without the
# regex built-ins, so the path is matched by its ends).
vm_disk_path(path) if {
	startswith(path, "disk[")
	endswith(path, "].datastore_id")
}

deny contains msg if {
	some change in input.resource_changes
	some action in change.actions
	action in {"create", "update"}
	some attribute in change.attributes
	disk_datastore(attribute.path)
	attribute.after != null
	not attribute.after in allowed_datastores
	msg := sprintf(
		"%s: %s is on datastore %s, which is not allowed; use one of: %s",
		[change.address, attribute.path, attribute.after, concat(", ", sort(allowed_datastores))],
	)
}
