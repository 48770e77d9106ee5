locals {
  node = "pve"
}

locals {
  node = "pve2"
}
