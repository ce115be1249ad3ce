//! Files and directories that hold personal data, created private to the service's user: directories
//! `0700`, files `0600` on unix, whatever the process umask. Existing paths are left as they are (an
//! operator may have chosen their permissions); only what this process creates is made private.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// Mode of a directory this process creates (owner only; unix).
pub const DIR_MODE: u32 = 0o700;

/// Mode of a file this process creates (owner read and write only; unix).
pub const FILE_MODE: u32 = 0o600;

/// Creates `dir` and any missing parents; a directory created here is `0700`.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(DIR_MODE);
    }
    builder.create(dir)?;
    restrict(dir, DIR_MODE)
}

/// Creates the empty file `path` (`0600`) unless it exists, so that a library opening it afterwards
/// (SQLite) finds it private. Returns whether it was created.
pub fn create_file(path: &Path) -> io::Result<bool> {
    match private_options().write(true).create_new(true).open(path) {
        Ok(_) => {
            restrict(path, FILE_MODE)?;
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

/// Creates a SQLite database's directory and its empty file, both private, unless they exist. SQLite
/// gives the `-wal` and `-shm` files it creates later the database file's mode.
pub fn create_database_file(file: &Path) -> io::Result<()> {
    if let Some(dir) = file.parent() {
        if !dir.as_os_str().is_empty() {
            create_dir_all(dir)?;
        }
    }
    create_file(file).map(drop)
}

/// Opens `path` for appending, creating it (`0600`) when missing.
pub fn open_append(path: &Path) -> io::Result<File> {
    create_file(path)?;
    OpenOptions::new().append(true).open(path)
}

/// Open options that create files with the private mode.
fn private_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(FILE_MODE);
    }
    options
}

/// Sets `mode` on a path this process created (the umask may have cleared bits of it).
#[cfg(unix)]
fn restrict(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Nothing to do where there are no unix modes.
#[cfg(not(unix))]
fn restrict(_path: &Path, _mode: u32) -> io::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn created_paths_are_private_and_existing_ones_are_kept() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        create_dir_all(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        create_dir_all(&dir).unwrap();

        let file = dir.join("x.db");
        assert!(create_file(&file).unwrap());
        assert_eq!(mode(&file), 0o600);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert!(!create_file(&file).unwrap());
        assert_eq!(mode(&file), 0o640, "an existing file keeps its mode");

        let log = dir.join("audit.jsonl");
        {
            use std::io::Write;
            let mut f = open_append(&log).unwrap();
            f.write_all(b"one\n").unwrap();
            let mut f = open_append(&log).unwrap();
            f.write_all(b"two\n").unwrap();
        }
        assert_eq!(mode(&log), 0o600);
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "one\ntwo\n");
    }
}
