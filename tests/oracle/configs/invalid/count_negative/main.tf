resource "terraform_data" "vm" {
  count = -1
  input = count.index
}
