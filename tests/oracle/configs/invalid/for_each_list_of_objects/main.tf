locals {
  vms = [
    { name = "web", cores = 2 },
    { name = "db", cores = 4 },
  ]
}

resource "terraform_data" "vm" {
  for_each = local.vms
  input    = each.value.cores
}
