output "node" {
  value = "pve"
}

output "node" {
  value = "pve2"
}
