output "a" {
  description = "nothing"
}
