cores = "four"
