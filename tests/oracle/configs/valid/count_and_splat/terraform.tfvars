replicas = 2
