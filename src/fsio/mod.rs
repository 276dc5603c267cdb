//! Race-free output and bounded small reads.
//!
//! Every command that writes into a directory it was given (`migrate
//! --workspace`, `unpack`, `run -o`, `official import`, and every single new
//! output file) creates its files through a [`DirHandle`]: a directory opened
//! once, below which each further step is one `openat`/`mkdirat` of a single
//! name relative to the handle of the step before, with `O_NOFOLLOW`. No path
//! is ever looked up again by name from the root, so swapping a directory for
//! a symlink while mcpres runs cannot redirect a write: the swapped step fails
//! (`ELOOP`/`ENOTDIR`) and nothing is written. Walking one name at a time with
//! `O_NOFOLLOW` gives the guarantee `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS)` gives, on every Unix, so no `openat2` probe is needed.
//!
//! A created file is checked through its own descriptor: it must be a regular
//! file with one link, and the name it was created under must still lead (in
//! the same directory handle, without following symlinks) to the same device
//! and inode.
//!
//! [`read_capped`] reads a small input (a key, an inclusion proof) without
//! following a symlink, without blocking on a FIFO or device, and stopping one
//! byte past a limit.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// An open directory: the anchor of every file created below it.
#[derive(Debug)]
pub struct DirHandle {
    fd: OwnedFd,
    path: PathBuf,
}

fn to_io(e: rustix::io::Errno) -> io::Error {
    io::Error::from(e)
}

fn refused(what: impl Into<String>) -> io::Error {
    io::Error::other(what.into())
}

/// The single names of a relative path; refuses absolute paths, `.`, `..`
/// and empty paths.
fn names(rel: &Path) -> io::Result<Vec<&OsStr>> {
    let mut out = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n),
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{} is not a plain relative path (no root, '.' or '..' allowed)",
                        rel.display()
                    ),
                ));
            }
        }
    }
    if out.is_empty() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty path"));
    }
    Ok(out)
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Permission bits for a new file or directory; the process umask applies,
/// as for `std::fs` (0o666 for files, 0o777 for directories).
fn mode(bits: u32) -> Mode {
    Mode::from_raw_mode(bits as _)
}

impl DirHandle {
    /// Open an existing directory the caller named. Symlinks in `path` itself
    /// are the caller's choice and are followed; nothing below it is.
    pub fn open(path: &Path) -> io::Result<DirHandle> {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(to_io)?;
        Ok(DirHandle {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// Create the directory `path`, which must not exist (not even as a
    /// symlink), inside its parent (opened by name, `.` for a bare name), and
    /// open the new directory without following a symlink.
    pub fn create_new(path: &Path) -> io::Result<DirHandle> {
        let name = path
            .file_name()
            .ok_or_else(|| refused(format!("{} does not end in a name", path.display())))?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let parent = DirHandle::open(parent)?;
        rustix::fs::mkdirat(&parent.fd, name, mode(0o777)).map_err(to_io)?;
        let fd = rustix::fs::openat(&parent.fd, name, DIR_FLAGS, Mode::empty()).map_err(to_io)?;
        Ok(DirHandle {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// The path this handle was opened under (for messages only; never used
    /// to reach a file).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Open the directory `rel` below this one, one name at a time, never
    /// following a symlink; with `create`, missing directories are made.
    pub fn subdir(&self, rel: &Path, create: bool) -> io::Result<DirHandle> {
        let mut current: Option<OwnedFd> = None;
        for name in names(rel)? {
            let at = current.as_ref().unwrap_or(&self.fd);
            let opened = match rustix::fs::openat(at, name, DIR_FLAGS, Mode::empty()) {
                Err(rustix::io::Errno::NOENT) if create => {
                    match rustix::fs::mkdirat(at, name, mode(0o777)) {
                        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                        Err(e) => return Err(to_io(e)),
                    }
                    rustix::fs::openat(at, name, DIR_FLAGS, Mode::empty())
                }
                other => other,
            };
            current = Some(opened.map_err(|e| self.walk_error(rel, e))?);
        }
        Ok(DirHandle {
            fd: current.expect("names() is never empty"),
            path: self.path.join(rel),
        })
    }

    fn walk_error(&self, rel: &Path, e: rustix::io::Errno) -> io::Error {
        if e == rustix::io::Errno::LOOP || e == rustix::io::Errno::NOTDIR {
            refused(format!(
                "{}: a step of {} is a symbolic link or not a directory; mcpres never writes through one",
                self.path.display(),
                rel.display()
            ))
        } else {
            to_io(e)
        }
    }

    /// Create the new regular file `rel` below this directory (its parent
    /// directories are created as needed) and return it open for writing.
    /// Never replaces anything, never follows a symlink.
    pub fn create_file(&self, rel: &Path) -> io::Result<File> {
        self.create(rel, OFlags::WRONLY)
    }

    /// [`DirHandle::create_file`], open for reading too (a scratch file
    /// written, then read back).
    pub fn create_scratch(&self, rel: &Path) -> io::Result<File> {
        self.create(rel, OFlags::RDWR)
    }

    fn create(&self, rel: &Path, access: OFlags) -> io::Result<File> {
        let parts = names(rel)?;
        let (name, dirs) = parts.split_last().expect("names() is never empty");
        let sub;
        let parent = if dirs.is_empty() {
            self
        } else {
            sub = self.subdir(&dirs.iter().collect::<PathBuf>(), true)?;
            &sub
        };
        let fd = rustix::fs::openat(
            &parent.fd,
            *name,
            access | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            mode(0o666),
        )
        .map_err(to_io)?;
        // The file itself: a regular file with one link, and still the one
        // the name leads to inside the same directory handle.
        let mine = rustix::fs::fstat(&fd).map_err(to_io)?;
        let named = rustix::fs::statat(&parent.fd, *name, AtFlags::SYMLINK_NOFOLLOW);
        let same = named.is_ok_and(|n| n.st_dev == mine.st_dev && n.st_ino == mine.st_ino);
        if FileType::from_raw_mode(mine.st_mode) != FileType::RegularFile
            || mine.st_nlink != 1
            || !same
        {
            return Err(refused(format!(
                "{}: the new file {} was replaced while it was being created",
                self.path.display(),
                rel.display()
            )));
        }
        Ok(File::from(fd))
    }

    /// Remove the file `name` (one name, no `/`) from this directory.
    pub fn remove_file(&self, name: &Path) -> io::Result<()> {
        match names(name)?.as_slice() {
            [one] => rustix::fs::unlinkat(&self.fd, *one, AtFlags::empty()).map_err(to_io),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "remove_file takes one name",
            )),
        }
    }

    /// Create the new file `rel` below this directory, write `bytes` and sync.
    pub fn write_new(&self, rel: &Path, bytes: &[u8]) -> io::Result<()> {
        let mut file = self.create_file(rel)?;
        file.write_all(bytes)?;
        file.sync_all()
    }
}

/// Write `bytes` to the new file `path` (its parent directories are created
/// first, by name: they are the caller's choice). The file is created inside
/// its opened parent directory, exclusively and without following a symlink.
pub fn write_new_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| refused(format!("{} does not end in a file name", path.display())))?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => {
            std::fs::create_dir_all(p)?;
            p
        }
        _ => Path::new("."),
    };
    DirHandle::open(parent)?.write_new(Path::new(name), bytes)
}

/// Create the new file `path` (its parent directories are created first, by
/// name) exclusively and without following a symlink, and return it open for
/// writing: [`write_new_file`] for content written piece by piece.
pub fn create_new_file(path: &Path) -> io::Result<File> {
    let name = path
        .file_name()
        .ok_or_else(|| refused(format!("{} does not end in a file name", path.display())))?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => {
            std::fs::create_dir_all(p)?;
            p
        }
        _ => Path::new("."),
    };
    DirHandle::open(parent)?.create_file(Path::new(name))
}

/// Read a small input file: refused when it is a symlink or not a regular
/// file, or when it holds more than `limit` bytes (checked before reading and
/// again while reading, one byte past the limit). Opened with `O_NOFOLLOW |
/// O_NONBLOCK`, and the opened file must be the one that was `lstat`ed.
pub fn read_capped(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let before = std::fs::symlink_metadata(path)?;
    if before.file_type().is_symlink() {
        return Err(refused(
            "it is a symbolic link; mcpres does not follow symlinks to its inputs",
        ));
    }
    if !before.is_file() {
        return Err(refused("it is not a regular file"));
    }
    let too_large = |n: u64| {
        refused(format!(
            "it holds {n} bytes or more, over the {limit}-byte limit"
        ))
    };
    if before.len() > limit {
        return Err(too_large(before.len()));
    }
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(to_io)?;
    let after = rustix::fs::fstat(&fd).map_err(to_io)?;
    {
        use std::os::unix::fs::MetadataExt;
        if after.st_dev != before.dev()
            || after.st_ino != before.ino()
            || FileType::from_raw_mode(after.st_mode) != FileType::RegularFile
        {
            return Err(refused("it was replaced while it was being read"));
        }
    }
    let mut bytes = Vec::with_capacity(before.len() as usize);
    File::from(fd).take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn creates_nested_files_and_refuses_symlinked_steps() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        let root = DirHandle::create_new(&tmp.path().join("out")).unwrap();
        root.write_new(Path::new("a/b/c.json"), b"{}").unwrap();
        assert_eq!(
            std::fs::read(tmp.path().join("out/a/b/c.json")).unwrap(),
            b"{}"
        );
        // Never replaces.
        assert!(root.write_new(Path::new("a/b/c.json"), b"x").is_err());
        // A symlinked directory step is refused, and nothing lands outside.
        symlink(&outside, tmp.path().join("out/link")).unwrap();
        let err = root.write_new(Path::new("link/x.json"), b"{}").unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(std::fs::read_dir(&outside).unwrap().next().is_none());
        // A symlink as the file name itself is not followed either.
        symlink(outside.join("y"), tmp.path().join("out/y")).unwrap();
        assert!(root.write_new(Path::new("y"), b"{}").is_err());
        assert!(!outside.join("y").exists());
        // `..` and absolute paths are refused.
        assert!(root.write_new(Path::new("../z"), b"").is_err());
        assert!(root.write_new(Path::new("/tmp/z"), b"").is_err());
    }

    #[test]
    fn read_capped_bounds_and_refuses() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("k");
        std::fs::write(&f, b"12345").unwrap();
        assert_eq!(read_capped(&f, 5).unwrap(), b"12345");
        assert!(read_capped(&f, 4).is_err());
        let l = tmp.path().join("l");
        symlink(&f, &l).unwrap();
        assert!(
            read_capped(&l, 100)
                .unwrap_err()
                .to_string()
                .contains("symbolic link")
        );
        assert!(read_capped(Path::new("/dev/zero"), 100).is_err());
        assert!(read_capped(tmp.path(), 100).is_err());
    }
}
