vm "web" {
  cores = 2
}
