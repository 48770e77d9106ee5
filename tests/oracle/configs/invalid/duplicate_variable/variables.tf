variable "node" {
  type    = string
  default = "pve"
}
