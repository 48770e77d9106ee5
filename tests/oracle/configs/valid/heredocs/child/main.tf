variable "names" {
	type = list(string)
}

# Indented with tabs, as some editors write it.
output "script" {
	value = <<-EOT
		#!/bin/sh
		set -eu
		%{ for n in var.names ~}
		echo "${n}"
		  %{~ if n == "db" ~}
		  systemctl restart postgresql
		  %{~ endif }
		%{ endfor ~}
		exit 0
	EOT
}
