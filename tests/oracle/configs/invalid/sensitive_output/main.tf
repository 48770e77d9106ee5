variable "password" {
  type      = string
  sensitive = true
  default   = "hunter2"
}

output "password" {
  value = var.password
}
