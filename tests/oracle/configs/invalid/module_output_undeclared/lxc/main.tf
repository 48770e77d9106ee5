output "id" {
  value = 100
}
