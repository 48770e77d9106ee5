output "name" {
  value = var.nmae
}
