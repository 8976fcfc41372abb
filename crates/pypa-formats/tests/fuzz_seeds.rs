//! The committed seeds of the fuzz targets of the strict readers
//! (fuzz/seeds, written by fuzz/seeds/make_seeds.py with Python's zipfile,
//! tarfile and gzip, independent writers): what every reader reads alike
//! opens, each seed next to a rule is refused by it.

use std::io::{Cursor, Read, Write};
use std::path::PathBuf;

use pypa_formats::core_metadata::HeaderBlock;
use pypa_formats::entry_points::EntryPoints;
use pypa_formats::record::parse_package_record;
use pypa_formats::sdist_archive::{SdistArchive, SdistError};
use pypa_formats::zip_archive::{ZipArchive, ZipError};

fn seed(target: &str, name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/seeds")
        .join(target)
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn zip_seeds() {
    for name in ["deflated.zip", "stored.zip", "zip64-comment.zip"] {
        let mut archive = ZipArchive::new(Cursor::new(seed("zip_archive", name)))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for index in 0..archive.entries().len() {
            let mut bytes = Vec::new();
            archive
                .reader(index)
                .unwrap()
                .read_to_end(&mut bytes)
                .unwrap();
            assert_eq!(bytes.len() as u64, archive.entries()[index].size());
        }
    }
    let hidden = ZipArchive::new(Cursor::new(seed("zip_archive", "count-hides-a-record.zip")));
    assert!(
        matches!(hidden, Err(ZipError::RecordCount { walked: 4, declared: 3, uncounted: Some(ref n) }) if n == "rocm_sdk_core-7.1.0.dist-info/RECORD"),
        "{hidden:?}"
    );
}

/// The sdist seed `name` as the target reads it: mode byte 0 means the
/// target gzips the rest.
fn sdist(name: &str) -> Vec<u8> {
    let bytes = seed("sdist_archive", name);
    let (mode, payload) = bytes.split_first().unwrap();
    if mode & 1 == 1 {
        return payload.to_vec();
    }
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(payload).unwrap();
    encoder.finish().unwrap()
}

fn read_sdist(bytes: &[u8]) -> Result<Vec<String>, SdistError> {
    let mut archive = SdistArchive::new(bytes);
    let mut names = Vec::new();
    while let Some(mut member) = archive.next_member()? {
        let mut content = Vec::new();
        member.read_to_end(&mut content).map_err(SdistError::Io)?;
        names.push(member.name.clone());
    }
    Ok(names)
}

#[test]
fn sdist_seeds() {
    for name in ["pax.tar", "pax.tar.gz"] {
        let names = read_sdist(&sdist(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(names.len(), 3, "{name}");
        assert!(names[2].ends_with("/name.py") && names[2].len() > 100);
    }
    // Python writes GNU headers with GNU magic, refused before their type.
    assert!(matches!(
        read_sdist(&sdist("gnu-long-name.tar")),
        Err(SdistError::NotUstar(0))
    ));
    let two = read_sdist(&sdist("two-members.tar.gz")).unwrap_err();
    assert!(
        matches!(&two, SdistError::AfterGzip(Some(n)) if n == "rocm-7.1.0/PKG-INFO"),
        "{two:?}"
    );
}

#[test]
fn metadata_seeds() {
    let text = |target: &str, name: &str| seed(target, name);
    assert!(HeaderBlock::parse(&text("core_metadata", "m0")).is_ok());
    assert!(HeaderBlock::parse(&text("core_metadata", "m1")).is_ok());
    assert!(HeaderBlock::parse(&text("core_metadata", "m2")).is_err());
    assert!(HeaderBlock::parse(&text("core_metadata", "m3")).is_err());
    assert!(EntryPoints::parse(&text("entry_points", "e0")).is_ok());
    assert!(EntryPoints::parse(&text("entry_points", "e1")).is_ok());
    assert!(EntryPoints::parse(&text("entry_points", "e2")).is_err());
    assert_eq!(
        parse_package_record(&text("package_record", "r0"), 10)
            .unwrap()
            .len(),
        3
    );
    assert_eq!(
        parse_package_record(&text("package_record", "r1"), 10)
            .unwrap()
            .len(),
        2
    );
    assert!(parse_package_record(&text("package_record", "r2"), 10).is_err());
}
