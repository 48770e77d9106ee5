locals {
  vms = [
    { name = "web", cores = 2 },
    { name = "web", cores = 4 },
  ]
}

resource "terraform_data" "vm" {
  for_each = { for v in local.vms : v.name => v }
  input    = each.value.cores
}
