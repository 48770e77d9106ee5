locals {
  vm = { name = "web" }
}

output "cores" {
  value = local.vm.cores
}
