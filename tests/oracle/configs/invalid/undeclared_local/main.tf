locals {
  region = "eu"
}

output "region" {
  value = local.regoin
}
