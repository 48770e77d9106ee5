module "lxc" {
  source = "./lxc"
  vm_id  = 5
}
