proxmox_node = "pve"

lxc_configs = {
  "dev-nextcloud" = {
    vm_id    = 200
    hostname = "nextcloud"
    cores    = 4
    memory   = 4096
    features = { keyctl = true }
    ip       = "10.0.10.20/24"
  }
  "dev-gitea" = {
    vm_id    = 201
    hostname = "gitea"
  }
}
