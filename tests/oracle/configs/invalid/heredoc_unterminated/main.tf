output "script" {
  value = <<EOT
echo hello
