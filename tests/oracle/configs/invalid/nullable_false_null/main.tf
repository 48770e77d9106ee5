variable "node" {
  type     = string
  nullable = false
}

output "node" {
  value = var.node
}
