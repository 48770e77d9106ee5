resource "terraform_data" "vm" {
  count = 2
  input = count.index
}

output "third" {
  value = terraform_data.vm[2].input
}
