module "lxc" {
  source = "./lxc"
}

output "id" {
  value = module.lxc.vm_id
}
