module "lxc" {
  source = "./lxc"
  node   = "pve"
  cpus   = 2
}
