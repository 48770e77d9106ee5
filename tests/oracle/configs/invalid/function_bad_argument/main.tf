output "host" {
  value = cidrhost("10.0.0.0/33", 1)
}
