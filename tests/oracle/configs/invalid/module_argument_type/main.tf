module "lxc" {
  source = "./lxc"
  cores  = "many"
}
