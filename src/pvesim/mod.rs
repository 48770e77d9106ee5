//! The Proxmox VE API simulator behind `atoll pve-sim`. Never used by production code paths.
