locals {
  envs = {
    dev  = { size = 1, prefix = "d" }
    prod = { size = 2, prefix = "p" }
  }
}

module "env" {
  source   = "./env"
  for_each = local.envs
  name     = each.key
  size     = each.value.size
  prefix   = each.value.prefix
}

module "single" {
  source = "./env"
  count  = 1
  name   = "shared"
  size   = 1
}

output "ids" {
  value = { for k, m in module.env : k => m.ids }
}

output "shared" {
  value = module.single[0].names
}

output "all_names" {
  value = flatten([for m in module.env : m.names])
}
