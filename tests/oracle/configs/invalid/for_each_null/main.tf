variable "vms" {
  type    = map(string)
  default = null
}

resource "terraform_data" "vm" {
  for_each = var.vms
  input    = each.value
}
