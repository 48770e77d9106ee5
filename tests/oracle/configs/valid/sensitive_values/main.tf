variable "password" {
  type      = string
  sensitive = true
  default   = "s3cret"
}

resource "terraform_data" "user" {
  input = {
    name     = "admin"
    password = var.password
  }
}

output "password" {
  value     = var.password
  sensitive = true
}

output "length" {
  value = length(nonsensitive(var.password))
}
