variable "node" {
  type = string
}

variable "cores" {
  type    = number
  default = 1
}
