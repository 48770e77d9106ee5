variable "vms" {
  type = map(object({
    cores  = number
    memory = optional(number, 1024)
  }))
}

output "vms" {
  value = var.vms
}
