resource "terraform_data" "web" {
  input = 1

  network {
    bridge = "vmbr0"
  }
}
