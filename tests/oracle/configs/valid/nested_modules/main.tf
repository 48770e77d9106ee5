module "outer" {
  source = "./outer"
  items  = ["a", "b"]
}

output "result" {
  value = module.outer.result
}
