resource "terraform_data" "vm" {
  for_each = toset(["web"])
  input    = each.key
}

output "db" {
  value = terraform_data.vm["db"].input
}
