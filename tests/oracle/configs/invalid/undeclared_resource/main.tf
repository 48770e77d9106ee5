resource "terraform_data" "web" {
  input = "web"
}

output "web" {
  value = terraform_data.wbe.output
}
