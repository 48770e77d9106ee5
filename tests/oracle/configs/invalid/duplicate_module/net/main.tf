output "id" {
  value = "vmbr0"
}
