resource "terraform_data" "vm" {
  input = count.index
}
