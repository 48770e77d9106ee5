resource "terraform_data" "vm" {
  for_each = toset([1, 2])
  input    = each.key
}
