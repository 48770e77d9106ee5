//! Terraform files (bpg/proxmox) to desired resources, with Terraform-style diagnostics. Pure:
//! never reads outside the checkout.

pub mod diag;
pub mod eval;
pub mod funcs;
pub mod types;
pub mod value;
