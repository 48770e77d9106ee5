variable "cores" {
  type    = number
  default = "four"
}

output "cores" {
  value = var.cores
}
