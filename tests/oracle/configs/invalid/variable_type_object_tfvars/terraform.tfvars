vms = {
  web = {
    memory = 2048
  }
}
