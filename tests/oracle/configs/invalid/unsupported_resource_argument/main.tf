resource "terraform_data" "web" {
  inputs = 1
}
