variable "flag" {
  type    = bool
  default = true
}

output "v" {
  value = var.flag ? { a = 1 } : [1]
}
