output "a" {
  value = { x = 1
}
