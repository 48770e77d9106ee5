//! Reading files out of a repository checkout, the one way atoll does it. A path is resolved
//! and must stay inside the checkout (a symbolic link that leads out, or passes through one that
//! does, is refused); only regular files are opened, and that is checked before opening, so a
//! FIFO cannot block and a device cannot stream forever; every read goes through a byte cap
//! (`take(cap + 1)`), never trusting the size the file system reports. [`CheckoutReader`] adds
//! what one load may read in total: bytes and the number of files and module directories.
//!
//! Must not: follow a link out of the checkout, open anything but a regular file, or read a
//! byte past a cap. Paths in its errors are never the server's.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fs::File;
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::limits::Limits;

/// Why a file of the checkout was not read. The messages name no path: callers say which file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("it does not exist")]
    NotFound,
    #[error("it is, or passes through, a symbolic link that leads outside the repository checkout")]
    OutsideCheckout,
    #[error("it is not a regular file (it is a directory, FIFO, socket or device)")]
    NotRegular,
    #[error(
        "it is larger than {}, the most atoll reads from one file (server setting {setting})",
        size(*.limit)
    )]
    TooLarge { limit: u64, setting: &'static str },
    #[error(
        "the files read for this project already total {}, the most atoll reads for one project (server setting limits.project_bytes)",
        size(*.limit)
    )]
    ProjectTotal { limit: u64 },
    #[error(
        "this project already reads {limit} files and module directories, the most atoll reads for one project (server setting limits.loaded_files)"
    )]
    TooManyFiles { limit: usize },
    #[error("it is not valid UTF-8")]
    NotUtf8,
    #[error("it cannot be read ({0})")]
    Io(std::io::ErrorKind),
}

/// `256 KiB`, `4 MiB`, `100 bytes`.
pub fn size(n: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= KIB && n.is_multiple_of(KIB) {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} bytes")
    }
}

fn io_error(e: &std::io::Error) -> ReadError {
    match e.kind() {
        std::io::ErrorKind::NotFound => ReadError::NotFound,
        kind => ReadError::Io(kind),
    }
}

/// The canonical path of `path` (absolute, or relative to `root`) when it stays inside `root`,
/// which must be canonical.
pub fn resolve_inside(root: &Path, path: &Path) -> Result<PathBuf, ReadError> {
    let real = root.join(path).canonicalize().map_err(|e| io_error(&e))?;
    if real.starts_with(root) {
        Ok(real)
    } else {
        Err(ReadError::OutsideCheckout)
    }
}

/// Reads the regular file at `path` (absolute, or relative to the canonical checkout `root`),
/// at most `limit` bytes; `setting` names the limit in the error.
pub fn read_confined(
    root: &Path,
    path: &Path,
    limit: u64,
    setting: &'static str,
) -> Result<Vec<u8>, ReadError> {
    let real = resolve_inside(root, path)?;
    read_regular(&real, limit, setting)
}

/// [`read_confined`] as UTF-8 text.
pub fn read_confined_text(
    root: &Path,
    path: &Path,
    limit: u64,
    setting: &'static str,
) -> Result<String, ReadError> {
    String::from_utf8(read_confined(root, path, limit, setting)?).map_err(|_| ReadError::NotUtf8)
}

/// Reads a canonical path (no link left in it) through the cap, refusing anything but a regular
/// file before it is opened.
fn read_regular(real: &Path, limit: u64, setting: &'static str) -> Result<Vec<u8>, ReadError> {
    let meta = std::fs::symlink_metadata(real).map_err(|e| io_error(&e))?;
    if !meta.file_type().is_file() {
        return Err(ReadError::NotRegular);
    }
    let file = File::open(real).map_err(|e| io_error(&e))?;
    if !file.metadata().map_err(|e| io_error(&e))?.is_file() {
        return Err(ReadError::NotRegular);
    }
    let hint = usize::try_from(meta.len().min(limit)).unwrap_or(0);
    let mut buf = Vec::with_capacity(hint.saturating_add(1));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(|e| io_error(&e))?;
    if buf.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit, setting });
    }
    Ok(buf)
}

/// Every read of one load: confined to the checkout, each file capped, the whole load capped in
/// bytes and in files and module directories. Files read by functions (`file()`,
/// `templatefile()`) are kept, so a file read once per instance is read and charged once.
#[derive(Debug)]
pub struct CheckoutReader {
    root: PathBuf,
    file_bytes: u64,
    project_bytes: u64,
    max_entries: usize,
    used_bytes: Cell<u64>,
    entries: Cell<usize>,
    shared: RefCell<HashMap<PathBuf, Rc<Vec<u8>>>>,
}

impl CheckoutReader {
    /// A reader for the canonical checkout `root`.
    pub fn new(root: PathBuf, limits: &Limits) -> Self {
        CheckoutReader {
            root,
            file_bytes: limits.file_bytes,
            project_bytes: limits.project_bytes,
            max_entries: limits.loaded_files,
            used_bytes: Cell::new(0),
            entries: Cell::new(0),
            shared: RefCell::new(HashMap::new()),
        }
    }

    /// The canonical checkout.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Counts a module directory (or a file) against the files a load may read.
    pub fn count_entry(&self) -> Result<(), ReadError> {
        let n = self.entries.get();
        if n >= self.max_entries {
            return Err(ReadError::TooManyFiles {
                limit: self.max_entries,
            });
        }
        self.entries.set(n + 1);
        Ok(())
    }

    /// Reads a configuration or variables file (absolute inside the checkout, or relative to
    /// it), charging it to the load.
    pub fn read_file(&self, path: &Path) -> Result<Vec<u8>, ReadError> {
        let real = resolve_inside(&self.root, path)?;
        self.read_counted(&real)
    }

    /// [`Self::read_file`] as UTF-8 text.
    pub fn read_text(&self, path: &Path) -> Result<String, ReadError> {
        String::from_utf8(self.read_file(path)?).map_err(|_| ReadError::NotUtf8)
    }

    /// Reads a file for a file function: read and charged once per load, then shared.
    pub fn read_shared(&self, path: &Path) -> Result<Rc<Vec<u8>>, ReadError> {
        let real = resolve_inside(&self.root, path)?;
        if let Some(hit) = self.shared.borrow().get(&real) {
            return Ok(Rc::clone(hit));
        }
        let bytes = Rc::new(self.read_counted(&real)?);
        self.shared.borrow_mut().insert(real, Rc::clone(&bytes));
        Ok(bytes)
    }

    fn read_counted(&self, real: &Path) -> Result<Vec<u8>, ReadError> {
        self.count_entry()?;
        let used = self.used_bytes.get();
        let left = self.project_bytes.saturating_sub(used);
        let cap = self.file_bytes.min(left);
        let bytes = match read_regular(real, cap, "limits.tf_file_bytes") {
            Err(ReadError::TooLarge { .. }) if cap < self.file_bytes => {
                return Err(ReadError::ProjectTotal {
                    limit: self.project_bytes,
                });
            }
            other => other?,
        };
        self.used_bytes.set(used + bytes.len() as u64);
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size(256 * 1024), "256 KiB");
        assert_eq!(size(4 * 1024 * 1024), "4 MiB");
        assert_eq!(size(1000), "1000 bytes");
    }
}
