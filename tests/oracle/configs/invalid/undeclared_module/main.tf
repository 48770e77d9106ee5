output "ids" {
  value = module.network.ids
}
