locals {
  common_tags = ["terraform", terraform.workspace]
}

module "dev_lxcs" {
  source       = "./modules/lxc"
  proxmox_node = var.proxmox_node
  lxc_configs  = var.lxc_configs
  tags         = local.common_tags
  ssh_keys     = [trimspace(file("files/id_ed25519.pub"))]
}

output "container_ids" {
  value = module.dev_lxcs.container_ids
}

output "hostnames" {
  value = { for k, v in var.lxc_configs : k => upper(v.hostname) }
}

output "root_passwords" {
  value     = module.dev_lxcs.root_passwords
  sensitive = true
}

output "template_ids" {
  value = module.dev_lxcs.template_ids
}
