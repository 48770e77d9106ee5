//! Facts of qemu-server's config values that the schema tables (`api_schema::qemu`) and the
//! API code share: the built-in CPU models, indexed key names, and the SSH key check
//! `create_vm`/`update_vm` run after the schema (`validate_ssh_public_keys`).

/// `PVE::QemuServer::CPUConfig` built-in models (x86_64 and aarch64) plus `host`.
#[rustfmt::skip]
const CPU_MODELS: &[&str] = &[
    "486", "pentium", "pentium2", "pentium3", "coreduo", "core2duo", "Conroe", "Penryn", "Nehalem",
    "Nehalem-IBRS", "Westmere", "Westmere-IBRS", "SandyBridge", "SandyBridge-IBRS", "IvyBridge",
    "IvyBridge-IBRS", "Haswell", "Haswell-IBRS", "Haswell-noTSX", "Haswell-noTSX-IBRS", "Broadwell",
    "Broadwell-IBRS", "Broadwell-noTSX", "Broadwell-noTSX-IBRS", "Skylake-Client",
    "Skylake-Client-IBRS", "Skylake-Client-noTSX-IBRS", "Skylake-Client-v4", "Skylake-Server",
    "Skylake-Server-IBRS", "Skylake-Server-noTSX-IBRS", "Skylake-Server-v4", "Skylake-Server-v5",
    "Cascadelake-Server", "Cascadelake-Server-v2", "Cascadelake-Server-noTSX",
    "Cascadelake-Server-v4", "Cascadelake-Server-v5", "Cooperlake", "Cooperlake-v2", "KnightsMill",
    "Icelake-Client", "Icelake-Client-noTSX", "Icelake-Server", "Icelake-Server-noTSX",
    "Icelake-Server-v3", "Icelake-Server-v4", "Icelake-Server-v5", "Icelake-Server-v6",
    "Icelake-Server-v7", "SapphireRapids", "SapphireRapids-v2", "SapphireRapids-v3",
    "SapphireRapids-v4", "GraniteRapids", "GraniteRapids-v2", "GraniteRapids-v3", "SierraForest",
    "SierraForest-v2", "SierraForest-v3", "ClearwaterForest", "athlon", "phenom", "Opteron_G1",
    "Opteron_G2", "Opteron_G3", "Opteron_G4", "Opteron_G5", "EPYC", "EPYC-IBPB", "EPYC-v3",
    "EPYC-v4", "EPYC-v5", "EPYC-Rome", "EPYC-Rome-v2", "EPYC-Rome-v3", "EPYC-Rome-v4",
    "EPYC-Rome-v5", "EPYC-Milan", "EPYC-Milan-v2", "EPYC-Milan-v3", "EPYC-Genoa", "EPYC-Genoa-v2",
    "EPYC-Turin", "kvm32", "kvm64", "qemu32", "qemu64", "max", "host", "x86-64-v2", "x86-64-v2-AES",
    "x86-64-v3", "x86-64-v4", "a64fx", "cortex-a35", "cortex-a53", "cortex-a55", "cortex-a57",
    "cortex-a710", "cortex-a72", "cortex-a76", "neoverse-n1", "neoverse-n2", "neoverse-v1",
];
pub(crate) fn indexed(key: &str, prefix: &str, count: u32) -> bool {
    key.strip_prefix(prefix)
        .filter(|n| !n.is_empty() && (n.len() == 1 || !n.starts_with('0')))
        .and_then(|n| n.parse::<u32>().ok())
        .is_some_and(|n| n < count)
}

/// Whether `cputype` is a built-in model (`validate_vm_cpu_conf`).
pub(crate) fn is_cpu_model(cputype: &str) -> bool {
    CPU_MODELS.contains(&cputype)
}

/// `validate_ssh_public_keys` on the `uri_unescape`d value: every non-empty line must be
/// `<type> <base64> [comment]` (ssh-keygen's check), else `SSH public key validation error`.
pub(crate) fn check_ssh_keys(urlencoded: &str) -> Result<(), String> {
    let raw = percent_encoding::percent_decode_str(urlencoded)
        .decode_utf8_lossy()
        .into_owned();
    check_ssh_key_lines(&raw)
}

/// `PVE::Tools::validate_ssh_public_keys` on plain text (the container's `ssh-public-keys`).
pub(crate) fn check_ssh_key_lines(raw: &str) -> Result<(), String> {
    use base64::Engine as _;
    for line in raw.lines().filter(|l| !l.trim().is_empty()) {
        let mut parts = line.split_whitespace();
        let kind = parts.next().unwrap_or_default();
        let blob = parts.next().unwrap_or_default();
        let kind_ok =
            kind.starts_with("ssh-") || kind.starts_with("ecdsa-") || kind.starts_with("sk-");
        let blob_ok = base64::engine::general_purpose::STANDARD
            .decode(blob)
            .is_ok_and(|b| b.len() > 16);
        if !kind_ok || !blob_ok {
            return Err("SSH public key validation error".to_owned());
        }
    }
    Ok(())
}
