locals {
  nodes = ["pve1", "pve2"]
}

output "third" {
  value = local.nodes[2]
}
