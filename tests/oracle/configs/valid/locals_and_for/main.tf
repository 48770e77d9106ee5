locals {
  nodes = ["pve1", "pve2", "pve3"]
  vms = {
    for i, name in ["web", "api", "db", "cache"] :
    name => {
      node  = local.nodes[i % length(local.nodes)]
      vm_id = 100 + i
      ip    = cidrhost("10.0.10.0/24", 10 + i)
    }
  }
  by_node = { for name, vm in local.vms : vm.node => name... }
  ids     = [for name, vm in local.vms : vm.vm_id if vm.vm_id % 2 == 0]
}

resource "terraform_data" "vm" {
  for_each = local.vms
  input = merge(each.value, {
    name        = each.key
    description = "${upper(each.key)} on ${each.value.node}"
  })
}

output "by_node" {
  value = local.by_node
}

output "even_ids" {
  value = local.ids
}

output "names" {
  value = sort(keys(local.vms))
}
