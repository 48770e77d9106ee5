locals {
  a = local.b
  b = local.c
  c = local.a
}

output "a" {
  value = local.a
}
