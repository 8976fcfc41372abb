//! Removing what a path names without following links: a link is removed,
//! never the file or directory it points to.
//!
//! ```
//! use std::fs;
//! use fs_helpers::remove::remove_all;
//!
//! let dir = tempfile::tempdir()?;
//! let tree = dir.path().join("tree");
//! fs::create_dir_all(tree.join("sub"))?;
//! fs::write(tree.join("sub/a.txt"), "a")?;
//! remove_all(&tree)?;
//! assert!(!tree.exists());
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fs;
use std::io;
use std::path::Path;

/// Removes the file, link or whole directory at `path`; a link is removed
/// itself (a link to a directory does not empty the directory).
pub fn remove_all(path: &Path) -> io::Result<()> {
    if fs::symlink_metadata(path)?.is_dir() {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_path_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let err = remove_all(&dir.path().join("none")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_file_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a");
        fs::write(&file, "a").unwrap();
        remove_all(&file).unwrap();
        assert!(fs::symlink_metadata(&file).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_directory_is_removed_and_the_directory_kept() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("kept"), "k").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        remove_all(&link).unwrap();
        assert!(fs::symlink_metadata(&link).is_err());
        assert!(target.join("kept").exists());
    }
}
