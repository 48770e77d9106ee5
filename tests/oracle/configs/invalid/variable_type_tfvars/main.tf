variable "cores" {
  type = number
}

output "cores" {
  value = var.cores
}
