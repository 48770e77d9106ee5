resource "terraform_data" "vm" {
  count    = 2
  for_each = toset(["a"])
  input    = 1
}
