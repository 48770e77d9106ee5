variable "names" {
  type = lists(string)
}
