variable "vms" {
  type = map(object({
    cores  = optional(number, 2)
    memory = optional(number, 1024)
    tags   = optional(list(string), [])
    disk = optional(object({
      size      = optional(number, 8)
      datastore = optional(string, "local-lvm")
    }), {})
    net = optional(map(object({
      bridge = optional(string, "vmbr0")
      vlan   = optional(number)
    })), {})
  }))
}

resource "terraform_data" "vm" {
  for_each = var.vms
  input = {
    name   = each.key
    cores  = each.value.cores
    memory = each.value.memory
    tags   = each.value.tags
    disk   = each.value.disk
    net    = each.value.net
  }
}

output "memory_total" {
  value = sum([for v in var.vms : v.memory])
}

output "vms" {
  value = var.vms
}
