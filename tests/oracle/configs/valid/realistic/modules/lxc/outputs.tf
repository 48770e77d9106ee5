output "container_ids" {
  value = { for k, c in terraform_data.lxc : k => c.input.vm_id }
}

output "root_passwords" {
  value     = local.passwords
  sensitive = true
}

output "template_ids" {
  value = values(local.template_ids)
}
