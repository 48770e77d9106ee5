variable "proxmox_node" {
  type        = string
  description = "Node that hosts the containers."
}

variable "lxc_configs" {
  type = map(object({
    vm_id    = number
    hostname = string
    cores    = number
    memory   = number
    disk_gb  = number
    template = string
    features = object({ nesting = bool, keyctl = bool })
    ip       = string
  }))

  validation {
    condition     = alltrue([for k, v in var.lxc_configs : v.vm_id >= 100])
    error_message = "Every vm_id must be at least 100."
  }
}

variable "tags" {
  type    = list(string)
  default = []
}

variable "ssh_keys" {
  type    = list(string)
  default = []
}

variable "datastore" {
  type    = string
  default = "local-lvm"
}
