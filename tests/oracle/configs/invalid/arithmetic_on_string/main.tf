output "sum" {
  value = "two" + 1
}
