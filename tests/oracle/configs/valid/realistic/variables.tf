variable "proxmox_node" {
  type = string
}

variable "lxc_configs" {
  type = map(object({
    vm_id    = number
    hostname = string
    cores    = optional(number, 2)
    memory   = optional(number, 1024)
    disk_gb  = optional(number, 8)
    template = optional(string, "debian-12-standard_12.7-1_amd64.tar.zst")
    features = optional(object({
      nesting = optional(bool, true)
      keyctl  = optional(bool, false)
    }), {})
    ip = optional(string)
  }))
}
