output "name" {
  value = uppercase("web")
}
