module "lxc" {
  source = "./lxc"
  node   = null
}
