variable "node" {
  type = string
}

output "node" {
  value = var.node
}
