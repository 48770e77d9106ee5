# random_password "lxc_root"
resource "terraform_data" "lxc_root" {
  for_each = var.lxc_configs

  input = {
    length  = 24
    special = true
  }
}

# proxmox_virtual_environment_download_file "lxc_template"
resource "terraform_data" "lxc_template" {
  for_each = var.lxc_configs

  input = {
    content_type = "vztmpl"
    datastore_id = "local"
    node_name    = var.proxmox_node
    url          = "http://download.proxmox.com/images/system/${each.value.template}"
    file_name    = "${each.key}-${each.value.template}"
  }
}

locals {
  # What the real resources export, from the stand-ins' inputs.
  passwords    = { for k, p in terraform_data.lxc_root : k => "${k}-${p.input.length}" }
  template_ids = { for k, t in terraform_data.lxc_template : k => "${t.input.datastore_id}:${t.input.content_type}/${t.input.file_name}" }
}

# proxmox_virtual_environment_container "lxc"
resource "terraform_data" "lxc" {
  for_each = var.lxc_configs

  input = {
    node_name    = var.proxmox_node
    vm_id        = each.value.vm_id
    description  = <<-EOT
      Managed by atoll.
      Host: ${each.value.hostname}
    EOT
    tags         = concat(var.tags, [each.key])
    unprivileged = true

    initialization = [{
      hostname = each.value.hostname
      ip_config = [{
        ipv4 = [{
          address = each.value.ip != null ? each.value.ip : "dhcp"
          gateway = each.value.ip != null ? cidrhost(each.value.ip, 1) : null
        }]
      }]
      user_account = [{
        keys     = var.ssh_keys
        password = local.passwords[each.key]
      }]
    }]

    cpu    = [{ cores = each.value.cores }]
    memory = [{ dedicated = each.value.memory }]
    disk = [{
      datastore_id = var.datastore
      size         = each.value.disk_gb
    }]
    features = [{
      nesting = each.value.features.nesting
      keyctl  = each.value.features.keyctl
    }]
    network_interface = [for name in ["eth0"] : {
      name   = name
      bridge = "vmbr0"
    }]
    operating_system = [{
      template_file_id = local.template_ids[each.key]
      type             = "debian"
    }]
  }

  lifecycle {
    prevent_destroy = true
    ignore_changes  = [input]
  }

  depends_on = [terraform_data.lxc_root]
}
