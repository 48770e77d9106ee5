//! Terraform files (bpg/proxmox) to desired resources, with Terraform-style diagnostics. Pure:
//! never reads outside the checkout.
