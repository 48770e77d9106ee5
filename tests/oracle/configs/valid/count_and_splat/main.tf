variable "replicas" {
  type    = number
  default = 3
}

resource "terraform_data" "worker" {
  count = var.replicas
  input = {
    name  = format("worker-%02d", count.index + 1)
    vm_id = 300 + count.index
    first = count.index == 0
  }
}

resource "terraform_data" "lb" {
  input = {
    backends = terraform_data.worker[*].input.name
    ids      = [for w in terraform_data.worker : w.input.vm_id]
  }
}

output "backends" {
  value = terraform_data.lb.input.backends
}

output "first" {
  value = terraform_data.worker[0].input
}
