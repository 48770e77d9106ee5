variable "node" {
  type    = string
  default = "pve"
}

output "node" {
  value = var.node
}
