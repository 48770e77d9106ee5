resource "terraform_data" "seed" {
  input = "x"
}

resource "terraform_data" "vm" {
  for_each = toset([terraform_data.seed.id])
  input    = each.key
}
