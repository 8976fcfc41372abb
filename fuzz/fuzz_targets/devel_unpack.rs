//! The devel tarball's install side (crates/devel-tar): `rocm-sdk init`
//! scans and unpacks `rocm_sdk_devel/_devel.tar*` into a site-packages.
//!
//! Input: one byte (bit 0: compress the rest here, or take it as the
//! file; the rest picks `_devel.tar`, `.tar.zst` or `.tar.xz`), then the
//! payload. The site is a complete installation whose RECORD lists the tar
//! with its real hash. Beyond "no panic": nothing is written outside
//! `_rocm_sdk_devel/` (and RECORD), no symlink of the tree points out of
//! site-packages, and a successful unpack removes the tar.
#![no_main]

use std::path::{Component, Path, PathBuf};

use base64::Engine as _;
use devel_tar::{UnpackOptions, unpack};
use libfuzzer_sys::fuzz_target;
use sha2::{Digest, Sha256};
use therock_package_fuzz::{Wrapping, fresh_dir, split, walk, xz, zstd};

const DIST_INFO: &str = "rocm_sdk_devel-7.1.0.dist-info";

fn record_row(path: &str, data: &[u8]) -> String {
    let digest = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(data));
    format!("{path},sha256={digest},{}\n", data.len())
}

/// `link`'s target resolved lexically against its directory, relative to
/// `site`; `None` when it climbs out of `site`.
fn resolved_inside(site: &Path, link: &Path) -> Option<PathBuf> {
    let target = std::fs::read_link(link).ok()?;
    if target.is_absolute() {
        return None;
    }
    let mut parts: Vec<Component> = link
        .parent()?
        .strip_prefix(site)
        .ok()?
        .components()
        .collect();
    for c in target.components() {
        match c {
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            c => parts.push(c),
        }
    }
    Some(parts.iter().collect())
}

fuzz_target!(|data: &[u8]| {
    let Some((wrapping, choice, payload)) = split(data) else {
        return;
    };
    let (name, bytes) = match (choice % 3, wrapping) {
        (0, _) => ("_devel.tar", payload.to_vec()),
        (1, Wrapping::Compressed) => ("_devel.tar.zst", zstd(payload)),
        (1, Wrapping::Raw) => ("_devel.tar.zst", payload.to_vec()),
        (_, Wrapping::Compressed) => ("_devel.tar.xz", xz(payload)),
        (_, Wrapping::Raw) => ("_devel.tar.xz", payload.to_vec()),
    };
    let site = fresh_dir("site-packages");
    let package = site.join("rocm_sdk_devel");
    std::fs::create_dir(&package).unwrap();
    std::fs::write(package.join("__init__.py"), b"").unwrap();
    std::fs::write(package.join(name), &bytes).unwrap();
    std::fs::create_dir(site.join(DIST_INFO)).unwrap();
    let record = [
        record_row("rocm_sdk_devel/__init__.py", b""),
        record_row(&format!("rocm_sdk_devel/{name}"), &bytes),
        format!("{DIST_INFO}/RECORD,,\n"),
    ]
    .concat();
    std::fs::write(site.join(DIST_INFO).join("RECORD"), record).unwrap();

    let result = unpack(&site, &UnpackOptions::default());

    let allowed = ["_rocm_sdk_devel", "rocm_sdk_devel", DIST_INFO];
    for entry in std::fs::read_dir(&site).unwrap().flatten() {
        let name = entry.file_name();
        assert!(
            allowed.iter().any(|a| name == *a),
            "the unpack wrote {name:?} beside the devel tree"
        );
    }
    for entry in std::fs::read_dir(&package).unwrap().flatten() {
        let entry = entry.file_name();
        assert!(
            entry == "__init__.py" || entry == name,
            "the unpack wrote {entry:?} into rocm_sdk_devel/"
        );
    }
    for path in walk(&site.join("_rocm_sdk_devel")) {
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            assert!(
                resolved_inside(&site, &path).is_some(),
                "{} points out of site-packages",
                path.display()
            );
        }
    }
    if result.is_ok() {
        assert!(
            !package.join(name).exists(),
            "a successful unpack leaves the tar"
        );
    }
});
