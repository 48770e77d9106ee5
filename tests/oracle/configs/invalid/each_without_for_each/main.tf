resource "terraform_data" "vm" {
  input = each.key
}
