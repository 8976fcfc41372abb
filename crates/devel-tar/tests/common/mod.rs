//! Shared fixtures: hand-written site-packages trees and RECORDs, a devel
//! tree written with `DevelTarWriter`, a faithful simulation of
//! `pip uninstall`, and a snapshot of a directory tree for comparisons.

#![allow(dead_code, unreachable_pub)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use devel_tar::{DIGEST_FILE, DevelLinks, DevelTarWriter, TarCodec, TarDigest, TarOptions};

pub const VERSION: &str = "7.1.0";

/// One entry of a devel tree, as the layout crate would hand it over.
#[derive(Debug, Clone)]
pub enum Entry {
    Dir,
    File(&'static [u8], u32),
    Symlink(&'static str),
    Runtime(&'static str),
}

/// The sample devel tree: files, a soname alias chained to a runtime link,
/// compiler links, a directory link, a dangling runtime link, an empty dir.
pub fn devel_entries() -> Vec<(&'static str, Entry)> {
    let mut e = vec![
        ("bin", Entry::Dir),
        ("bin/amdclang", Entry::Symlink("../lib/llvm/bin/amdclang")),
        ("bin/hipcc", Entry::File(b"#!/bin/sh\necho hipcc\n", 0o755)),
        ("bin/hipconfig", Entry::Symlink("../lib/llvm/bin/clang")),
        ("include", Entry::Dir),
        ("include/hip", Entry::Dir),
        (
            "include/hip/hip_runtime.h",
            Entry::File(b"#pragma once\n", 0o644),
        ),
        ("lib", Entry::Dir),
        ("lib/cmake", Entry::Dir),
        ("lib/cmake/hip", Entry::Dir),
        (
            "lib/cmake/hip/hip-config.cmake",
            Entry::File(b"set(HIP 1)\n", 0o644),
        ),
        ("lib/libamdhip64.so", Entry::Symlink("libamdhip64.so.6")),
        ("lib/libamdhip64.so.6", Entry::Runtime("_rocm_sdk_core")),
        ("lib/libmissing.so.1", Entry::Runtime("_rocm_sdk_libraries")),
        ("lib/llvm", Entry::Dir),
        ("lib/llvm/bin", Entry::Dir),
        ("lib/llvm/bin/amdclang", Entry::Symlink("clang")),
        ("lib/llvm/bin/clang", Entry::Runtime("_rocm_sdk_core")),
        ("lib/rocm_sysdeps", Entry::Runtime("_rocm_sdk_core")),
        ("share", Entry::Dir),
        ("share/doc", Entry::Dir),
        ("share/doc/empty", Entry::Dir),
    ];
    e.sort_by(|a, b| a.0.cmp(b.0));
    e
}

/// Writes the devel tar of `entries` with the crate's writer.
pub fn write_tar(entries: &[(&str, Entry)], compression: TarCodec) -> Vec<u8> {
    let options = TarOptions {
        compression,
        ..TarOptions::default()
    };
    let mut w = DevelTarWriter::new(Vec::new(), &options).unwrap();
    for (relpath, entry) in entries {
        match entry {
            Entry::Dir => w.add_directory(relpath).unwrap(),
            Entry::File(data, mode) => w
                .add_file(relpath, *mode, data.len() as u64, &mut &data[..])
                .unwrap(),
            Entry::Symlink(target) => w.add_symlink(relpath, target).unwrap(),
            Entry::Runtime(owner) => w.add_runtime_link(relpath, owner).unwrap(),
        }
    }
    w.finish().unwrap()
}

/// A site-packages directory in a temporary directory.
pub struct SitePackages {
    _temp: tempfile::TempDir,
    pub sp: PathBuf,
}

impl SitePackages {
    /// An empty site-packages, readable by every user (for the read-only
    /// test, which runs a child as `nobody`).
    pub fn empty() -> Self {
        let temp = tempfile::tempdir().unwrap();
        fs::set_permissions(temp.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let sp = temp.path().join("site-packages");
        fs::create_dir(&sp).unwrap();
        Self { _temp: temp, sp }
    }

    /// Core installed, devel installed with the given tar bytes and name.
    pub fn with_devel(tar: &[u8], tar_name: &str) -> Self {
        let site = Self::empty();
        site.install_core();
        site.install_devel(tar, tar_name, "\n");
        site
    }

    /// The standard fixture: core plus devel with the sample tree.
    pub fn standard() -> Self {
        Self::with_devel(&write_tar(&devel_entries(), TarCodec::None), "_devel.tar")
    }

    pub fn install_core(&self) {
        self.install_dist(
            "rocm_sdk_core",
            VERSION,
            &[
                ("_rocm_sdk_core/__init__.py", b"", 0o644),
                ("_rocm_sdk_core/lib/libamdhip64.so.6", b"\x7fELF hip", 0o755),
                ("_rocm_sdk_core/lib/llvm/bin/clang", b"\x7fELF clang", 0o755),
                (
                    "_rocm_sdk_core/lib/rocm_sysdeps/lib/libz.so.1",
                    b"\x7fELF z",
                    0o755,
                ),
            ],
            "\n",
        );
    }

    /// Devel as the build writes it: the tar and its digest file.
    pub fn install_devel(&self, tar: &[u8], tar_name: &str, eol: &str) {
        let digest = TarDigest::of_reader(tar_name, tar).unwrap().to_bytes();
        let digest_path = format!("rocm_sdk_devel/{DIGEST_FILE}");
        self.install_devel_with(
            tar,
            tar_name,
            eol,
            &[(digest_path.as_str(), &digest, 0o644)],
        );
    }

    /// Devel as builds before the digest file wrote it.
    pub fn install_devel_without_digest(&self, tar: &[u8], tar_name: &str) {
        self.install_devel_with(tar, tar_name, "\n", &[]);
    }

    fn install_devel_with(
        &self,
        tar: &[u8],
        tar_name: &str,
        eol: &str,
        extra: &[(&str, &[u8], u32)],
    ) {
        let tar_path = format!("rocm_sdk_devel/{tar_name}");
        let mut files: Vec<(&str, &[u8], u32)> = vec![
            ("rocm_sdk_devel/__init__.py", b"", 0o644),
            (tar_path.as_str(), tar, 0o644),
        ];
        files.extend_from_slice(extra);
        self.install_dist("rocm_sdk_devel", VERSION, &files, eol);
    }

    /// A device wheel for `target` of `version` with `files` (relative to
    /// `_rocm_sdk_libraries/`) and its `.devel_links/{T}.json`.
    pub fn install_device(&self, target: &str, version: &str, files: &[(&str, &[u8])]) {
        let doc = DevelLinks::new(
            version,
            "_rocm_sdk_libraries",
            files.iter().map(|(r, _)| (*r).to_string()),
        );
        let doc_path = format!("_rocm_sdk_libraries/.devel_links/{target}.json");
        let json = doc.to_json();
        let mut all: Vec<(String, Vec<u8>)> = files
            .iter()
            .map(|(r, d)| (format!("_rocm_sdk_libraries/{r}"), d.to_vec()))
            .collect();
        all.push((doc_path, json.into_bytes()));
        let borrowed: Vec<(&str, &[u8], u32)> = all
            .iter()
            .map(|(p, d)| (p.as_str(), d.as_slice(), 0o644))
            .collect();
        self.install_dist(
            &format!("rocm_sdk_device_{target}"),
            version,
            &borrowed,
            "\n",
        );
    }

    /// Writes files and a dist-info with METADATA and a RECORD listing all.
    pub fn install_dist(&self, name: &str, version: &str, files: &[(&str, &[u8], u32)], eol: &str) {
        let dist_info = format!("{name}-{version}.dist-info");
        let mut record = String::new();
        for (path, data, mode) in files {
            let full = self.sp.join(path);
            fs::create_dir_all(full.parent().unwrap()).unwrap();
            fs::write(&full, data).unwrap();
            fs::set_permissions(&full, fs::Permissions::from_mode(*mode)).unwrap();
            let _ = write!(record, "{path},{},{}{eol}", record_hash(data), data.len());
        }
        let metadata =
            format!("Metadata-Version: 2.1{eol}Name: {name}{eol}Version: {version}{eol}");
        fs::create_dir_all(self.sp.join(&dist_info)).unwrap();
        fs::write(self.sp.join(&dist_info).join("METADATA"), &metadata).unwrap();
        let _ = write!(
            record,
            "{dist_info}/METADATA,{},{}{eol}",
            record_hash(metadata.as_bytes()),
            metadata.len()
        );
        let _ = write!(record, "{dist_info}/RECORD,,{eol}");
        fs::write(self.sp.join(&dist_info).join("RECORD"), record).unwrap();
    }

    pub fn dist_info(&self, name: &str) -> PathBuf {
        fs::read_dir(&self.sp)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                let n = p.file_name().unwrap().to_string_lossy();
                n.starts_with(&format!("{name}-")) && n.ends_with(".dist-info")
            })
            .unwrap_or_else(|| panic!("{name} is not installed"))
    }

    pub fn record(&self, name: &str) -> String {
        fs::read_to_string(self.dist_info(name).join("RECORD")).unwrap()
    }
}

/// The RECORD hash field of `data`, as pip writes it.
pub fn record_hash(data: &[u8]) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(data);
    format!(
        "sha256={}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest)
    )
}

/// What a path is, for comparing trees: hard links are identified by the
/// smallest path of their inode group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Dir(u32),
    File {
        data: Vec<u8>,
        mode: u32,
        inode_group: String,
    },
    Symlink(String),
}

/// Every path under `root`, without following links. The links stamp's
/// RECORD inodes differ from one site-packages to another, so it is kept as
/// its names only (its inodes are checked where the stamp is tested).
pub fn snapshot(root: &Path) -> BTreeMap<String, Node> {
    let mut raw = Vec::new();
    walk(root, root, &mut raw);
    let mut groups: HashMap<(u64, u64), String> = HashMap::new();
    for (rel, meta) in &raw {
        if meta.is_file() {
            groups
                .entry((meta.dev(), meta.ino()))
                .and_modify(|g| {
                    if rel < g {
                        g.clone_from(rel);
                    }
                })
                .or_insert_with(|| rel.clone());
        }
    }
    raw.into_iter()
        .map(|(rel, meta)| {
            let full = root.join(&rel);
            let node = if meta.file_type().is_symlink() {
                Node::Symlink(fs::read_link(&full).unwrap().to_string_lossy().into_owned())
            } else if meta.is_dir() {
                Node::Dir(meta.mode() & 0o777)
            } else {
                let mut data = fs::read(&full).unwrap();
                if Path::new(&rel).file_name() == Some(devel_tar::DEVICE_LINKS_STAMP.as_ref()) {
                    let text = String::from_utf8(data).unwrap();
                    data = text
                        .lines()
                        .flat_map(|l| [l.split(' ').next().unwrap(), "\n"])
                        .collect::<String>()
                        .into_bytes();
                }
                Node::File {
                    data,
                    mode: meta.mode() & 0o777,
                    inode_group: groups[&(meta.dev(), meta.ino())].clone(),
                }
            };
            (rel, node)
        })
        .collect()
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, fs::Metadata)>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        let meta = fs::symlink_metadata(&path).unwrap();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        out.push((rel, meta.clone()));
        if meta.is_dir() {
            walk(root, &path, out);
        }
    }
}

/// The first CSV field of each RECORD row.
pub fn record_paths(record: &str) -> Vec<String> {
    record
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            if let Some(rest) = l.strip_prefix('"') {
                rest.split_once("\",")
                    .map(|(p, _)| p.replace("\"\"", "\""))
                    .unwrap()
            } else {
                l.split(',').next().unwrap().to_owned()
            }
        })
        .collect()
}

/// What `pip uninstall` does with a RECORD: paths that exist (following
/// links, as `os.path.exists`) are removed; a directory all of whose files
/// (`os.walk`, links to directories not descended) are listed is removed as
/// a whole (`compress_for_rename`). pip prunes nothing else.
pub fn pip_uninstall(sp: &Path, name: &str) {
    let dist_info = fs::read_dir(sp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with(&format!("{name}-")) && n.ends_with(".dist-info")
        })
        .unwrap();
    let record = fs::read_to_string(dist_info.join("RECORD")).unwrap();
    let mut remaining: BTreeSet<PathBuf> = record_paths(&record)
        .into_iter()
        .map(|p| sp.join(p))
        .filter(|p| p.exists())
        .collect();
    let mut unchecked: Vec<PathBuf> = remaining
        .iter()
        .map(|p| p.parent().unwrap().to_path_buf())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    unchecked.sort_by_key(|p| p.as_os_str().len());
    let mut wildcards: Vec<PathBuf> = Vec::new();
    for root in unchecked {
        if wildcards.iter().any(|w| root.starts_with(w)) {
            continue;
        }
        let mut files = Vec::new();
        os_walk_files(&root, &mut files);
        if files.iter().all(|f| remaining.contains(f)) {
            for f in &files {
                remaining.remove(f);
            }
            wildcards.push(root);
        }
    }
    for path in remaining {
        fs::remove_file(&path).unwrap();
    }
    for dir in wildcards {
        if fs::symlink_metadata(&dir).is_ok() {
            fs::remove_dir_all(&dir).unwrap();
        }
    }
}

/// `os.walk` file names: everything that is not a directory (a link to a
/// directory counts as a directory and is not descended).
fn os_walk_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let meta = fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            os_walk_files(&path, out);
        } else if !path.is_dir() {
            out.push(path);
        }
    }
}

/// Path of the `unpack` example binary, built by `cargo test` next to the
/// test binaries.
pub fn unpack_example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/unpack");
    assert!(
        path.exists(),
        "{} missing: run through cargo test",
        path.display()
    );
    path
}

/// Runs the unpack example on `sp` and returns its output, or panics when it
/// has not finished after `deadline` (killing it first): a hang fails the
/// test instead of stalling the suite.
pub fn unpack_within(sp: &Path, deadline: std::time::Duration) -> std::process::Output {
    let mut child = std::process::Command::new(unpack_example())
        .arg(sp)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the unpack of {} did not finish within {deadline:?}",
                sp.display()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Runs `processes` unpack processes on `sp` at once and asserts that every
/// one of them succeeds.
pub fn unpack_concurrently(sp: &Path, processes: usize) {
    let children: Vec<_> = (0..processes)
        .map(|_| {
            std::process::Command::new(unpack_example())
                .arg(sp)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
