variable "node" {
  type = string
}
