locals {
  vms = {
    web = { cores = 2 }
  }
}

resource "terraform_data" "vm" {
  for_each = local.vms
  input    = each.value.memory
}
