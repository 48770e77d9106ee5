locals {
  tags = ["a", "b"]
}

output "desc" {
  value = "tags: ${local.tags}"
}
