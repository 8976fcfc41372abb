//! Sdists: layout, deterministic headers, and a pinned hash proving the
//! bytes are the same on every host.

mod common;

use std::process::Command;

use common::*;
use sha2::{Digest, Sha256};
use wheel_writer::{CoreMetadata, SdistBuilder, WriteOptions};

fn sample_sdist(reverse: bool) -> SdistBuilder {
    let mut meta = CoreMetadata::new("rocm", "7.0.0rc1");
    meta.summary = Some("ROCm selector: picks the packages for this machine".into());
    meta.requires_python = Some(">=3.9".into());
    meta.dynamic = vec!["Requires-Dist".into(), "Provides-Extra".into()];
    let mut sdist = SdistBuilder::new(meta).unwrap();
    let long = format!("_backend/{}/deep.py", "very_long_directory_name_".repeat(8));
    let mut files: Vec<(String, Vec<u8>, bool)> = vec![
        (
            "pyproject.toml".into(),
            b"[build-system]\nrequires = []\nbuild-backend = \"backend\"\nbackend-path = [\"_backend\"]\n"
                .to_vec(),
            false,
        ),
        ("_backend/backend.py".into(), b"def build_wheel(*a):\n    pass\n".to_vec(), false),
        ("_backend/run.sh".into(), b"#!/bin/sh\n".to_vec(), true),
        (long, b"x = 1\n".to_vec(), false),
        ("_backend/dat\u{e9}.txt".into(), b"unicode\n".to_vec(), false),
    ];
    if reverse {
        files.reverse();
    }
    for (path, data, exec) in files {
        sdist.add_file(&path, bytes(data, exec)).unwrap();
    }
    sdist
}

fn options() -> WriteOptions {
    WriteOptions::default().with_source_date_epoch(Some(1_700_000_000))
}

#[test]
fn sdist_bytes_are_pinned() {
    let dir = tempfile::tempdir().unwrap();
    let written = sample_sdist(false).write(dir.path(), &options()).unwrap();
    assert_eq!(written.path.file_name().unwrap(), "rocm-7.0.0rc1.tar.gz");
    let bytes = std::fs::read(&written.path).unwrap();
    // gzip header: no file name flag, mtime 0, OS unknown.
    assert_eq!(bytes[3], 0, "FLG");
    assert_eq!(&bytes[4..8], &[0, 0, 0, 0], "MTIME");
    assert_eq!(bytes[9], 255, "OS");
    let other = tempfile::tempdir().unwrap();
    let again = sample_sdist(true).write(other.path(), &options()).unwrap();
    assert_eq!(bytes, std::fs::read(&again.path).unwrap());
    let hash = format!("{:x}", Sha256::digest(&bytes));
    // Pinned: a change here means every host's sdist changed; only update it
    // for a deliberate format change (and say so in the commit).
    assert_eq!(
        hash,
        "50cdc4f10184635c42d33cee832f0757be9f4d1249394faec1828e50616189f6"
    );
}

#[test]
fn python_tarfile_sees_a_clean_sdist() {
    assert!(have_python(), "python3 is needed for this test");
    let dir = tempfile::tempdir().unwrap();
    let written = sample_sdist(false).write(dir.path(), &options()).unwrap();
    let script = r#"
import sys, tarfile
with tarfile.open(sys.argv[1], "r:gz") as t:
    for m in t.getmembers():
        print(m.name, oct(m.mode), m.uid, m.gid, repr(m.uname), repr(m.gname), m.mtime, m.type.decode(), m.size)
    pkg = t.extractfile("rocm-7.0.0rc1/PKG-INFO").read().decode()
    assert "\r" not in pkg
    print(pkg.splitlines()[0])
"#;
    let out = run(Command::new("python3")
        .args(["-c", script])
        .arg(&written.path));
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("rocm-7.0.0rc1/PKG-INFO 0o644 0 0 '' '' 1700000000 0"),
        "{out}"
    );
    assert!(out.contains("rocm-7.0.0rc1/_backend/run.sh 0o755"), "{out}");
    assert!(
        out.contains(&format!(
            "rocm-7.0.0rc1/_backend/{}/deep.py 0o644",
            "very_long_directory_name_".repeat(8)
        )),
        "{out}"
    );
    assert!(
        out.contains("rocm-7.0.0rc1/_backend/daté.txt 0o644"),
        "{out}"
    );
    assert!(out.contains("Metadata-Version: 2.4"), "{out}");
    // Only members, no PAX leftovers, one top directory.
    assert!(
        lines
            .iter()
            .take(lines.len() - 1)
            .all(|l| l.starts_with("rocm-7.0.0rc1/")),
        "{out}"
    );
}

#[test]
fn pkg_info_is_rendered_as_core_metadata() {
    let sdist = sample_sdist(false);
    let mut sink = wheel_writer::MemorySink::new();
    sdist.write_into(&mut sink).unwrap();
    let text = String::from_utf8(sink.members()[0].bytes.clone()).unwrap();
    insta::assert_snapshot!("pkg_info", text);
}
