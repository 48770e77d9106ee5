module "net" {
  source = "./net"
}

module "net" {
  source = "./net"
}
