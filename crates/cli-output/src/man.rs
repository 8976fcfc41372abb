//! Man pages from a program's `clap` definition: one for the program and
//! one per visible command (`therock-package-build.1`), as `cargo xtask
//! man` installs them.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap_mangen::Man;

/// A page that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the man page {path}; check that the directory is writable")]
pub struct ManPageError {
    /// The page.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// Writes `NAME.1` for `command` and `NAME-SUB.1` for every visible
/// subcommand (recursively) into `dir`, each atomically; returns the pages
/// in the order written (program first).
pub fn write_pages(command: &clap::Command, dir: &Path) -> Result<Vec<PathBuf>, ManPageError> {
    fs::create_dir_all(dir).map_err(|source| ManPageError {
        path: dir.to_owned(),
        source,
    })?;
    let mut command = command.clone().disable_help_subcommand(true);
    command.build();
    let mut written = Vec::new();
    write_tree(&command, dir, &mut written)?;
    Ok(written)
}

fn write_tree(
    command: &clap::Command,
    dir: &Path,
    written: &mut Vec<PathBuf>,
) -> Result<(), ManPageError> {
    let man = Man::new(command.clone());
    let path = dir.join(man.get_filename());
    let mut page = Vec::new();
    man.render(&mut page)
        .and_then(|()| write_atomically(&path, &page))
        .map_err(|source| ManPageError {
            path: path.clone(),
            source,
        })?;
    written.push(path);
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_tree(sub, dir, written)?;
    }
    Ok(())
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}
