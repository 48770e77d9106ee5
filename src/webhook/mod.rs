//! `POST /events`: raw bytes to a verified, deduplicated, normalised `ForgeEvent` and a durable
//! job. Never calls a forge API or Proxmox.
