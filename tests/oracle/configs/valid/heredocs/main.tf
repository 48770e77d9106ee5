variable "hosts" {
  type = map(object({
    ip      = string
    aliases = list(string)
  }))
}

variable "motd" {
  type = string
}

locals {
  # The shape most cloud-init user data takes: directives indented like the YAML around them.
  user_data = <<-EOT
    #cloud-config
    write_files:
    %{~ for name, h in var.hosts }
      - path: /etc/hosts.d/${name}
        content: |
          ${h.ip} ${name}
    %{~ for a in h.aliases }
          ${h.ip} ${a}
    %{~ endfor }
    %{~ endfor }
    runcmd:
    %{ for name, h in var.hosts ~}
      - [ping, -c1, ${h.ip}]
    %{ endfor ~}
      - [echo, done]
    EOT

  inventory = <<-EOT
    [all]

    %{ for name, h in var.hosts ~}
    ${name} ansible_host=${h.ip}%{ if length(h.aliases) > 0 } # ${join(", ", h.aliases)}%{ endif }

    %{ endfor ~}
    [all:vars]
    %{ if length(var.hosts) > 1 ~}
      cluster=true
    %{~ else ~}
      cluster=false
    %{~ endif }
    EOT
}

module "child" {
  source = "./child"
  names  = keys(var.hosts)
}

resource "terraform_data" "vm" {
  for_each = var.hosts
  input = {
    user_data = local.user_data
    motd      = var.motd
    banner    = <<-EOT
      host: ${each.key}
      %{~ if length(each.value.aliases) > 0 }
      aliases:
      %{~ for a in each.value.aliases }
        - ${a}
      %{~ endfor }
      %{~ endif }
    EOT
  }
}

output "user_data" {
  value = local.user_data
}

output "inventory" {
  value = local.inventory
}

output "child" {
  value = module.child.script
}
