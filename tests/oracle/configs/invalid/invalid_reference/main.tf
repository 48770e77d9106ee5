resource "terraform_data" "web" {
  input = 1
}

output "web" {
  value = terraform_data
}
