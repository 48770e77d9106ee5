variable "node" {
  type     = string
  nullable = false
}
