//! `create_disks` (`PVE::API2::Qemu`): turns drive values from a create or a config update into
//! volumes — `STORAGE:SIZE` disks, `import-from` copies, EFI vars and TPM state volumes, the
//! cloud-init drive — and frees what it allocated when one of them fails. It must not write a
//! guest's config: the caller puts the returned values where they belong.

use std::collections::BTreeMap;

use super::propstr;
use super::qemu_drive::{self, NewVolume};
use super::storage::{Storage, storage_of};

/// OVMF_VARS sizes: 4m (`OVMF_VARS_4M.fd`, 528 KiB) and 2m (128 KiB).
const EFI_VARS_4M: u64 = 540_672;
const EFI_VARS_2M: u64 = 131_072;
/// `TPMSTATE_DISK_SIZE` and `CLOUDINIT_DISK_SIZE`: 4 MiB.
const SMALL_VOLUME: u64 = 4 << 20;

/// Where `create_disks` allocates.
pub(crate) struct DiskEnv<'a> {
    pub(crate) node: &'a str,
    pub(crate) vmid: u32,
    pub(crate) storages: &'a mut BTreeMap<(String, String), Storage>,
    pub(crate) default_storage: Option<&'a str>,
    pub(crate) now: u64,
    /// Keys that already hold a cloud-init drive (current and pending config).
    pub(crate) cloudinit_at: Option<String>,
}

impl DiskEnv<'_> {
    fn storage(&mut self, sid: &str) -> Result<&mut Storage, String> {
        self.storages
            .get_mut(&(self.node.to_owned(), sid.to_owned()))
            .ok_or_else(|| format!("storage '{sid}' does not exist"))
    }

    /// The size of an existing volume on this node.
    fn volume_size(&self, volid: &str) -> Option<u64> {
        let sid = storage_of(volid)?;
        let storage = self.storages.get(&(self.node.to_owned(), sid.to_owned()))?;
        storage.volumes.get(volid).map(|v| v.size)
    }

    fn free(&mut self, volids: &[String]) {
        for volid in volids {
            if let Some(sid) = storage_of(volid)
                && let Ok(storage) = self.storage(sid)
            {
                storage.volumes.remove(volid);
            }
        }
    }
}

/// `create_disks`: each drive key of `settings` becomes its final value. On error every volume
/// allocated so far is freed (`vdisk_free`) and the error returned.
pub(crate) fn create_disks(
    env: &mut DiskEnv<'_>,
    settings: &BTreeMap<String, String>,
    log: &mut Vec<String>,
) -> Result<BTreeMap<String, String>, String> {
    let mut created = Vec::new();
    let mut out = BTreeMap::new();
    for (key, value) in settings.iter().filter(|(k, _)| qemu_drive::is_drive_key(k)) {
        match create_disk(env, key, value, &mut created) {
            Ok(Some(printed)) => {
                log.push(format!("{key}: successfully created disk '{printed}'"));
                out.insert(key.clone(), printed);
            }
            Ok(None) => {
                out.insert(key.clone(), value.clone());
            }
            Err(e) => {
                env.free(&created);
                return Err(e);
            }
        }
    }
    Ok(out)
}

/// One drive: `None` when it is kept as given.
fn create_disk(
    env: &mut DiskEnv<'_>,
    key: &str,
    value: &str,
    created: &mut Vec<String>,
) -> Result<Option<String>, String> {
    let mut props = qemu_drive::parse(value)?;
    let file = props.get("file").cloned().unwrap_or_default();
    if file.is_empty() || file == "none" || file == "cdrom" {
        props.remove("size");
        return Ok(Some(qemu_drive::print(&props)));
    }
    let (sid, volname) = file
        .split_once(':')
        .map_or((None, file.as_str()), |(s, n)| (Some(s), n));
    if volname == "cloudinit" {
        if let Some(at) = env.cloudinit_at.as_ref().filter(|at| *at != key) {
            return Err(format!(
                "{key} - cloud-init drive is already attached at '{at}'"
            ));
        }
        let sid = sid
            .or(env.default_storage)
            .ok_or("no storage ID specified (and no default storage)")?
            .to_owned();
        let volid = allocate(env, &sid, NewVolume::CloudInit)?;
        created.push(volid.clone());
        props.insert("file".to_owned(), volid);
        props.insert("media".to_owned(), "cdrom".to_owned());
        props.remove("format");
        env.cloudinit_at = Some(key.to_owned());
        return Ok(Some(qemu_drive::print(&props)));
    }
    if let Some((new_sid, gib)) = qemu_drive::new_disk(&file) {
        let sid = new_sid
            .or(env.default_storage)
            .ok_or("no storage ID specified (and no default storage)")?
            .to_owned();
        let kind = match key {
            "efidisk0" => NewVolume::Efi {
                four_m: props.get("efitype").is_some_and(|t| t == "4m"),
            },
            "tpmstate0" => NewVolume::Tpm,
            _ => match props.remove("import-from") {
                Some(source) => {
                    let size = env.volume_size(&source).ok_or_else(|| {
                        format!("cannot import from '{source}' - could not get size of {source}")
                    })?;
                    NewVolume::Disk(size)
                }
                None => NewVolume::Disk((gib * 1024.0 * 1024.0 * 1024.0).round() as u64),
            },
        };
        let volid = allocate(env, &sid, kind)?;
        created.push(volid.clone());
        let size = env.volume_size(&volid).unwrap_or_default();
        if key == "efidisk0"
            && props.get("pre-enrolled-keys").is_some_and(|p| p == "1")
            && kind == (NewVolume::Efi { four_m: true })
        {
            props.insert("ms-cert".to_owned(), "2023k".to_owned());
        }
        props.insert("file".to_owned(), volid);
        props.insert("size".to_owned(), propstr::format_size(size));
        props.remove("format");
        return Ok(Some(qemu_drive::print(&props)));
    }
    // an existing volume: it must exist; its size is recorded
    let size = env
        .volume_size(&file)
        .ok_or_else(|| format!("volume {file} does not exist"))?;
    props.insert("size".to_owned(), propstr::format_size(size));
    Ok(Some(qemu_drive::print(&props)))
}

/// `vdisk_alloc` (`create_efidisk`, the TPM and cloud-init volumes): storage must allow images.
fn allocate(env: &mut DiskEnv<'_>, sid: &str, kind: NewVolume) -> Result<String, String> {
    let (vmid, now) = (env.vmid, env.now);
    let storage = env.storage(sid)?;
    if !storage.content.contains("images") {
        return Err(format!("storage '{sid}' does not support vm images"));
    }
    match kind {
        NewVolume::Disk(size) => storage.alloc_image(vmid, size, None, now),
        NewVolume::Efi { four_m } => {
            let vars = if four_m { EFI_VARS_4M } else { EFI_VARS_2M };
            storage.alloc_image(vmid, vars, None, now)
        }
        NewVolume::Tpm => storage.alloc_image(vmid, SMALL_VOLUME, None, now),
        NewVolume::CloudInit => storage.alloc_image(
            vmid,
            SMALL_VOLUME,
            Some(&format!("vm-{vmid}-cloudinit")),
            now,
        ),
    }
}

/// The drive key holding a cloud-init drive in `keys`, if any (`has_cloudinit`).
pub(crate) fn cloudinit_key(keys: &BTreeMap<String, String>) -> Option<String> {
    keys.iter()
        .filter(|(k, _)| qemu_drive::is_drive_key(k))
        .find(|(_, v)| qemu_drive::parse(v).is_ok_and(|p| qemu_drive::is_cloudinit(&p)))
        .map(|(k, _)| k.clone())
}
