variable "cores" {
  type = number
}
