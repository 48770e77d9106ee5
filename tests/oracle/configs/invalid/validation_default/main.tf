variable "vm_id" {
  type    = number
  default = 42

  validation {
    condition     = var.vm_id >= 100
    error_message = "The vm_id must be at least 100."
  }
}

output "vm_id" {
  value = var.vm_id
}
