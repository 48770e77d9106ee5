hosts = {
  web = { ip = "10.0.0.10", aliases = ["www", "static"] }
  db  = { ip = "10.0.0.20", aliases = [] }
}

motd = <<-EOT
    Welcome.
    %{~ for line in ["Backups run at 02:00.", "Ask #ops for access."] }
      * ${line}
    %{~ endfor }

    Maintained by Terraform.
  EOT
