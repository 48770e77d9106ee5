module "lxc" {
  source = "./lxc"
}
