//! The artifact archive reader (crates/artifacts): a `.tar.zst` or
//! `.tar.xz` artifact is indexed in place, merged into a catalog and every
//! file streamed, as `therock-package build` reads it.
//!
//! Input: one byte (bit 0: compress the rest here, or take it as the
//! compressed file; bit 1: zstd or xz), then the payload. Beyond "no
//! panic": every catalog path stays a clean relative path.
#![no_main]


use artifacts::{ArtifactDir, ArtifactFilter, PathFilter};
use libfuzzer_sys::fuzz_target;
use therock_package_fuzz::{Wrapping, fresh_dir, split, xz, zstd};

fuzz_target!(|data: &[u8]| {
    let Some((wrapping, choice, payload)) = split(data) else {
        return;
    };
    let (extension, bytes) = match (choice & 1, wrapping) {
        (0, Wrapping::Compressed) => ("tar.zst", zstd(payload)),
        (_, Wrapping::Compressed) => ("tar.xz", xz(payload)),
        (0, Wrapping::Raw) => ("tar.zst", payload.to_vec()),
        (_, Wrapping::Raw) => ("tar.xz", payload.to_vec()),
    };
    let dir = fresh_dir("artifacts");
    std::fs::write(dir.join(format!("core-hip_lib_generic.{extension}")), bytes).unwrap();
    let Ok(artifacts) = ArtifactDir::open(&dir) else {
        return;
    };
    let Ok(catalog) = artifacts.catalog(&ArtifactFilter::new(), &PathFilter::new()) else {
        return;
    };
    for entry in catalog.entries() {
        let relpath = entry.relpath();
        assert!(
            !relpath.starts_with('/')
                && relpath
                    .split('/')
                    .all(|s| !s.is_empty() && s != "." && s != ".."),
            "the catalog holds {relpath:?}"
        );
    }
    let _ = catalog.for_each_file(|entry, reader| -> Result<(), artifacts::Error> {
        let mut read = 0u64;
        let mut buf = [0u8; 8192];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => read += n as u64,
                Err(_) => return Ok(()),
            }
        }
        assert!(
            read <= entry.size(),
            "{} yields more than its size",
            entry.relpath()
        );
        Ok(())
    });
});
