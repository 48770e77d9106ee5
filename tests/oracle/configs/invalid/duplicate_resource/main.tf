resource "terraform_data" "web" {
  input = 1
}

resource "terraform_data" "web" {
  input = 2
}
