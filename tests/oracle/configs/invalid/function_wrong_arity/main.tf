output "joined" {
  value = join(",")
}
