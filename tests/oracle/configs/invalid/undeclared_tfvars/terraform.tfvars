nodes = "pve"
