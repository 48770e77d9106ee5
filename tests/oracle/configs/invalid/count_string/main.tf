resource "terraform_data" "vm" {
  count = "two"
  input = count.index
}
