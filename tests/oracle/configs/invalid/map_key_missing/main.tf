locals {
  sizes = { small = 1, large = 4 }
}

output "medium" {
  value = local.sizes["medium"]
}
