variable "item" {
  type = string
}

resource "terraform_data" "this" {
  input = {
    item   = var.item
    length = length(var.item)
  }
}

output "value" {
  value = terraform_data.this.input
}
