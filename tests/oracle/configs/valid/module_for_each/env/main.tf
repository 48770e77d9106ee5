variable "name" {
  type = string
}

variable "size" {
  type = number
}

variable "prefix" {
  type    = string
  default = "x"
}

resource "terraform_data" "node" {
  count = var.size
  input = {
    name  = "${var.prefix}-${var.name}-${count.index}"
    index = count.index
  }
}

output "names" {
  value = terraform_data.node[*].input.name
}

output "ids" {
  value = [for n in terraform_data.node : n.input.index]
}
