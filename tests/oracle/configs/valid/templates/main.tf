variable "users" {
  type = list(object({
    name = string
    keys = list(string)
  }))
  default = [
    { name = "alice", keys = ["ssh-ed25519 AAAA alice@a"] },
    { name = "bob", keys = [] },
  ]
}

locals {
  cloud_init = <<-EOT
    #cloud-config
    users:
    %{~for u in var.users}
      - name: ${u.name}
    %{~if length(u.keys) > 0}
        ssh_authorized_keys:
    %{~for k in u.keys}
          - ${k}
    %{~endfor}
    %{~endif}
    %{~endfor}
  EOT
}

resource "terraform_data" "init" {
  input = {
    user_data = local.cloud_init
    summary   = "%{for i, u in var.users}${i > 0 ? ", " : ""}${u.name}%{endfor}"
    json      = jsonencode({ users = [for u in var.users : u.name] })
  }
}

output "user_data" {
  value = local.cloud_init
}
