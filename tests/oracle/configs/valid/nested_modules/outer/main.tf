variable "items" {
  type = list(string)
}

module "inner" {
  source   = "../inner"
  for_each = toset(var.items)
  item     = each.value
}

output "result" {
  value = { for k, m in module.inner : k => m.value }
}
