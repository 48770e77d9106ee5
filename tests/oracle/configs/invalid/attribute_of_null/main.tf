variable "net" {
  type = object({
    bridge = string
  })
  default = null
}

output "bridge" {
  value = var.net.bridge
}
