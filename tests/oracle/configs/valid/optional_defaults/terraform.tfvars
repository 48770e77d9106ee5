vms = {
  web = {
    cores = 4
    disk  = { size = 32 }
    net = {
      eth0 = {}
      eth1 = { vlan = 20, bridge = "vmbr1" }
    }
  }
  db = {
    memory = 8192
    tags   = ["db", "prod"]
  }
}
