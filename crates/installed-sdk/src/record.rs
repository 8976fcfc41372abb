//! A distribution's `RECORD` (the wheel spec's CSV: `path,sha256=…,size`)
//! and its verification against the files on disk.

use std::io;
use std::path::{Component, Path, PathBuf};

use rayon::prelude::*;

use dist_info::windows_names;
use fs_helpers::confined::{self, Dir};
use fs_helpers::file_hash::sha256_reader;
use pypa_formats::installer::InstallCommand;
use pypa_formats::member::check_relpath;
use pypa_formats::record::{RecordEntry, parse_record};

use crate::error::Error;

/// The most bytes a RECORD may have: the devel distribution's lists every
/// path of the tree (a few MiB for a whole release).
pub const RECORD_LIMIT: u64 = 64 << 20;

/// Reads every row of the RECORD at `path` (the codec is
/// `pypa_formats::record`, shared with the build): only a regular file (not
/// a link, a pipe or a device) of at most [`RECORD_LIMIT`] bytes.
pub fn read_record(path: &Path) -> Result<Vec<RecordEntry>, Error> {
    let bytes = confined::read_regular(path, RECORD_LIMIT).map_err(|e| Error::read(path, e))?;
    let malformed = |reason: String| Error::MalformedRecord {
        install: InstallCommand::default(),
        path: path.to_path_buf(),
        reason,
    };
    let text = String::from_utf8(bytes).map_err(|_| malformed("it is not UTF-8".into()))?;
    parse_record(&text).map_err(|e| malformed(e.to_string()))
}

/// Where a RECORD row's file may be, for the self-check: a clean path
/// inside site-packages, or a console script in the scripts directory an
/// installer writes them to. Nothing else is opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowPlace {
    /// A clean path relative to site-packages, opened through its confined
    /// handle (no link followed on the way).
    Inside(String),
    /// `[../]*{bin,Scripts}/NAME`: a script, at [`installed_path`].
    Script(PathBuf),
    /// Anywhere else (`../../../../dev/zero`, `/etc/passwd`, a path into
    /// the prefix that is no script).
    Outside,
}

/// Where the file of RECORD row `row` is to be looked for ([`RowPlace`]).
pub fn locate(site_packages: &Path, row: &str) -> RowPlace {
    if check_relpath(row).is_ok() {
        return RowPlace::Inside(row.to_owned());
    }
    if is_script_row(row) {
        return RowPlace::Script(installed_path(site_packages, row));
    }
    RowPlace::Outside
}

/// `[../]{0,3}{bin,Scripts}/NAME`, `NAME` one clean component: where pip
/// and uv write console scripts relative to site-packages (a venv, `--user`
/// and `--prefix` three levels up, Windows and pip's `--target` two).
pub fn is_script_row(row: &str) -> bool {
    let mut components: Vec<Component<'_>> = Path::new(row).components().collect();
    let file = components.pop();
    let dir = components.pop();
    matches!(file, Some(Component::Normal(name)) if check_relpath(&name.to_string_lossy()).is_ok())
        && matches!(dir, Some(Component::Normal(d)) if d == "bin" || d == "Scripts")
        && components.len() <= 3
        && components.iter().all(|c| *c == Component::ParentDir)
        && !row.contains('\\')
}

/// Where the file of a RECORD row is: the row's path resolved against
/// site-packages lexically (site-packages may be reached through a link,
/// e.g. `lib64 -> lib`).
///
/// `pip install --target DIR` installs into a temporary home prefix and
/// then moves everything in it (`lib/python/*`, `bin/`, `share/`, ...)
/// into `DIR`, so RECORD keeps rows relative to `home/lib/python`
/// (`../../bin/hipcc`) while the file is at `DIR/bin/hipcc`; when the
/// row's own path does not exist, that is where it is looked for.
pub fn installed_path(site_packages: &Path, row: &str) -> PathBuf {
    let recorded = lexical_join(site_packages, Path::new(row));
    if recorded.symlink_metadata().is_ok() {
        return recorded;
    }
    let mut components = Path::new(row).components();
    let moved = match (
        components.next(),
        components.next(),
        components.clone().next(),
    ) {
        (Some(Component::ParentDir), Some(Component::ParentDir), Some(Component::Normal(_))) => {
            site_packages.join(components.as_path())
        }
        _ => return recorded,
    };
    if moved.symlink_metadata().is_ok() {
        moved
    } else {
        recorded
    }
}

/// `base/rel` with `..` taken lexically.
fn lexical_join(base: &Path, rel: &Path) -> PathBuf {
    let mut out = base.to_path_buf();
    for component in rel.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(part) => out.push(part),
            _ => {}
        }
    }
    out
}

/// [`RecordMismatch::problem`] of a listed file that does not exist.
pub const MISSING: &str = "missing";

/// A file whose contents do not match its RECORD row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordMismatch {
    /// The path as listed.
    pub path: String,
    /// What is wrong ("missing", "sha256 differs", ...).
    pub problem: String,
}

/// What verifying one RECORD found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecordVerification {
    /// Rows with a hash that were checked.
    pub checked: usize,
    /// Rows without a hash (RECORD itself, paths added by `rocm-sdk init`).
    pub unhashed: usize,
    /// Files that are missing or differ, in RECORD order.
    pub mismatches: Vec<RecordMismatch>,
}

/// Hashes every file listed with a digest (on all cores) and compares
/// digest and size. Paths are found with [`installed_path`]. On Windows a
/// row naming a path Windows cannot hold (`bin/aux.txt`, docs/windows.md)
/// is a mismatch, never opened: opening it opens a device, and reading
/// AUX waits forever.
pub fn verify_rows(site_packages: &Path, rows: &[RecordEntry]) -> RecordVerification {
    verify_rows_on(site_packages, rows, cfg!(windows))
}

fn verify_rows_on(
    site_packages: &Path,
    rows: &[RecordEntry],
    windows_names: bool,
) -> RecordVerification {
    let hashed: Vec<&RecordEntry> = rows.iter().filter(|r| r.sha256().is_some()).collect();
    let sp = Dir::open(site_packages);
    let mismatches: Vec<RecordMismatch> = hashed
        .par_iter()
        .filter_map(|row| {
            if windows_names && let Err(problem) = windows_names::check_path(&row.path) {
                return Some(RecordMismatch {
                    path: row.path.clone(),
                    problem: format!(
                        "{problem}, so it was not opened (Windows cannot hold the name)"
                    ),
                });
            }
            let opened = match (locate(site_packages, &row.path), &sp) {
                (RowPlace::Inside(rel), Ok(sp)) => sp.open_file(&rel),
                (RowPlace::Inside(_), Err(e)) => Err(io::Error::new(e.kind(), e.to_string())),
                (RowPlace::Script(path), _) => confined::open_regular(&path),
                (RowPlace::Outside, _) => {
                    return Some(RecordMismatch {
                        path: row.path.clone(),
                        problem: OUTSIDE.to_owned(),
                    });
                }
            };
            check_file(opened, row).err().map(|problem| RecordMismatch {
                path: row.path.clone(),
                problem,
            })
        })
        .collect();
    RecordVerification {
        checked: hashed.len(),
        unhashed: rows.len() - hashed.len(),
        mismatches,
    }
}

/// [`RecordMismatch::problem`] of a row naming a place the self-check
/// does not open.
pub const OUTSIDE: &str = "it lies outside site-packages and the scripts directory, so it was \
                           not opened (a RECORD pip wrote never names such a path)";

fn check_file(opened: io::Result<std::fs::File>, row: &RecordEntry) -> Result<(), String> {
    let file = match opened.and_then(sha256_reader) {
        Ok(digest) => digest,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(MISSING.to_owned()),
        Err(e) => match confined::refusal(&e) {
            Some(refused) => return Err(format!("not opened: {refused}")),
            None => return Err(format!("unreadable ({e})")),
        },
    };
    if let Some(expected) = row.size
        && expected != file.size
    {
        return Err(format!(
            "size {} differs from RECORD's {expected}",
            file.size
        ));
    }
    if row.sha256() != Some(file.record().as_str()) {
        return Err("sha256 differs from RECORD (the file was modified)".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fs_helpers::file_hash::sha256_file;

    #[test]
    fn rows_are_read_inside_site_packages_and_the_scripts_directory_only() {
        for (row, inside) in [
            ("_rocm_sdk_core/lib/x.so", true),
            ("bin/hipcc", true),
            ("../../../bin/hipcc", false),
            ("../../Scripts/hipcc.exe", false),
        ] {
            let place = locate(Path::new("/sp"), row);
            assert_eq!(
                matches!(place, RowPlace::Inside(_)),
                inside,
                "{row}: {place:?}"
            );
            assert_ne!(place, RowPlace::Outside, "{row}");
        }
        for row in [
            "../../../../../../../../../../dev/zero",
            "/dev/zero",
            "_rocm_sdk_core/../../../etc/passwd",
            "../../../lib/secret",
            "../../../../bin/hipcc",
            "../../../bin/sub/hipcc",
            "../../../bin/..",
        ] {
            assert_eq!(locate(Path::new("/sp"), row), RowPlace::Outside, "{row}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_row_leading_out_or_to_a_device_is_a_mismatch_and_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let sp = dir.path().join("sp");
        std::fs::create_dir_all(sp.join("_pkg")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", sp.join("_pkg/zero")).unwrap();
        std::os::unix::fs::symlink("/etc", sp.join("_pkg/etc")).unwrap();
        let row = |path: &str| RecordEntry {
            path: path.to_owned(),
            hash: Some("sha256=LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ".to_owned()),
            size: Some(5),
        };
        let rows = [
            row("../../../../../../../../../../dev/zero"),
            row("_pkg/zero"),
            row("_pkg/etc/hostname"),
        ];
        // Each would read forever, or outside site-packages.
        let v = verify_rows(&sp, &rows);
        let problems: Vec<&str> = v.mismatches.iter().map(|m| m.problem.as_str()).collect();
        assert_eq!(problems[0], OUTSIDE);
        assert!(problems[1].contains("not a regular file"), "{problems:?}");
        assert!(problems[2].contains("symbolic link"), "{problems:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_record_that_is_a_device_or_too_large_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("RECORD");
        std::os::unix::fs::symlink("/dev/zero", &record).unwrap();
        let err = read_record(&record).unwrap_err().to_string();
        assert!(err.contains("RECORD"), "{err}");
    }

    #[test]
    fn a_malformed_record_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("RECORD");
        std::fs::write(&record, "a,,\nb,sha256=x\n").unwrap();
        let err = read_record(&record).unwrap_err().to_string();
        assert!(
            err.contains("RECORD is not a valid RECORD (line 2: expected three fields"),
            "{err}"
        );
    }

    #[test]
    fn verification_reports_missing_modified_and_resized_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("good"), b"hello").unwrap();
        std::fs::write(dir.path().join("bad"), b"hellp").unwrap();
        std::fs::write(dir.path().join("long"), b"hello!").unwrap();
        let good = sha256_file(&dir.path().join("good")).unwrap();
        let (digest, size) = (good.record(), good.size);
        assert_eq!(digest, "LPJNul-wow4m6DsqxbninhsWHlwfp0JecwQzYpOLmCQ");
        let row = |path: &str| RecordEntry {
            path: path.to_owned(),
            hash: Some(format!("sha256={digest}")),
            size: Some(size),
        };
        let rows = vec![
            row("good"),
            row("bad"),
            row("long"),
            row("gone"),
            RecordEntry::unhashed("unhashed"),
        ];
        let v = verify_rows(dir.path(), &rows);
        assert_eq!(v.checked, 4);
        assert_eq!(v.unhashed, 1);
        let problems: Vec<(&str, &str)> = v
            .mismatches
            .iter()
            .map(|m| (m.path.as_str(), m.problem.as_str()))
            .collect();
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].0 == "bad" && problems[0].1.contains("sha256"));
        assert!(problems[1].0 == "long" && problems[1].1.contains("size 6"));
        assert_eq!(problems[2], ("gone", "missing"));
    }

    #[test]
    fn on_windows_a_row_naming_a_device_is_a_mismatch_and_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        std::fs::write(dir.path().join("bin/aux.txt"), b"hello").unwrap();
        let aux = sha256_file(&dir.path().join("bin/aux.txt")).unwrap();
        let (digest, size) = (aux.record(), aux.size);
        let rows = [RecordEntry {
            path: "bin/aux.txt".to_owned(),
            hash: Some(format!("sha256={digest}")),
            size: Some(size),
        }];
        assert!(
            verify_rows_on(dir.path(), &rows, false)
                .mismatches
                .is_empty()
        );
        let windows = verify_rows_on(dir.path(), &rows, true);
        assert_eq!(
            windows.mismatches,
            [RecordMismatch {
                path: "bin/aux.txt".into(),
                problem: "`aux.txt` is the device AUX to Windows, which opens the device instead of a file, so it was not opened (Windows cannot hold the name)".into(),
            }]
        );
    }

    #[test]
    fn rows_are_found_in_venv_and_pip_target_layouts() {
        let dir = tempfile::tempdir().unwrap();
        // A venv: site-packages three levels below the prefix.
        let venv_sp = dir.path().join("venv/lib/python3.12/site-packages");
        std::fs::create_dir_all(&venv_sp).unwrap();
        std::fs::create_dir_all(dir.path().join("venv/bin")).unwrap();
        std::fs::write(dir.path().join("venv/bin/hipcc"), b"").unwrap();
        assert_eq!(
            installed_path(&venv_sp, "../../../bin/hipcc"),
            dir.path().join("venv/bin/hipcc")
        );
        // `pip --target T`: rows relative to a vanished home/lib/python.
        let target = dir.path().join("target");
        std::fs::create_dir_all(target.join("bin")).unwrap();
        std::fs::write(target.join("bin/hipcc"), b"").unwrap();
        assert_eq!(
            installed_path(&target, "../../bin/hipcc"),
            target.join("bin/hipcc")
        );
        assert_eq!(
            installed_path(&target, "bin/hipcc"),
            target.join("bin/hipcc")
        );
        // Missing everywhere: the row's own place, for the message.
        assert_eq!(
            installed_path(&target, "../../bin/gone"),
            target.ancestors().nth(2).unwrap().join("bin/gone")
        );
        assert_eq!(
            installed_path(&venv_sp, "../../../bin/gone"),
            dir.path().join("venv/bin/gone")
        );
        let row = |path: &str| RecordEntry {
            path: path.to_owned(),
            hash: Some(format!(
                "sha256={}",
                sha256_file(&target.join("bin/hipcc")).unwrap().record()
            )),
            size: Some(0),
        };
        let v = verify_rows(&target, &[row("../../bin/hipcc")]);
        assert!(v.mismatches.is_empty(), "{:?}", v.mismatches);
    }
}
