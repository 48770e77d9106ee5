# No privileged containers: a container created or changed by a plan must be unprivileged.
#
# The bpg provider's `unprivileged` defaults to false, so a container that leaves it out is
# privileged (root in the container is root on the node). atoll's JSON plan lists
# `unprivileged` among the attributes of every container it creates, and of one whose flag
# changes; this set fails on either when the value after the plan is false.
#
# Use it as a policy set in atoll's configuration:
#   policies:
#     policy_sets:
#       - name: unprivileged
#         path: /etc/atoll/policies/unprivileged
package main

import rego.v1

changed_containers contains change if {
	some change in input.resource_changes
	change.type == "proxmox_virtual_environment_container"
	some action in change.actions
	action in {"create", "update"}
}

privileged(value) if value == false

privileged(value) if value == 0

privileged(value) if value == "0"

deny contains msg if {
	some change in changed_containers
	some attribute in change.attributes
	attribute.path == "unprivileged"
	privileged(attribute.after)
	msg := sprintf(
		"%s: privileged containers are not allowed; set `unprivileged = true`",
		[change.address],
	)
}
