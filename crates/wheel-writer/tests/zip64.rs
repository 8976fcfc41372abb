//! Zip64: more than 65 535 members (normal suite) and a member of at least
//! 4 GiB (slow suite: `cargo test -p wheel-writer -- --ignored`).

mod common;

use std::io::Read;
use std::sync::Arc;

use common::*;
use wheel_writer::{CoreMetadata, ReaderSource, WheelBuilder, WheelReader, WheelTag, WriteOptions};

fn builder() -> WheelBuilder {
    WheelBuilder::new(
        CoreMetadata::new("zip64-test", "1.0"),
        WheelTag::py3_none("linux_x86_64").unwrap(),
    )
    .unwrap()
}

/// Offset of the zip64 end-of-central-directory locator, if any.
fn has_zip64_end(bytes: &[u8]) -> bool {
    bytes
        .windows(4)
        .rev()
        .take(200)
        .any(|w| w == [0x50, 0x4b, 0x06, 0x07])
}

#[test]
fn more_than_65535_members() {
    let mut wheel = builder();
    let shared = bytes(b"x".to_vec(), false);
    for i in 0..65_600 {
        wheel
            .add_file(&format!("pkg/m{i:05}"), Arc::clone(&shared))
            .unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let written = wheel
        .write(dir.path(), &WriteOptions::default().with_jobs(2), None)
        .unwrap();
    assert!(has_zip64_end(&std::fs::read(&written.path).unwrap()));
    let mut reader = WheelReader::open(&written.path).unwrap();
    assert_eq!(reader.member_names().count(), 65_600 + 3);
    assert!(reader.verify().unwrap().is_valid());
    if have_python() {
        zipfile_test(&written.path);
    }
}

#[test]
#[ignore = "slow: writes and reads back a 4 GiB member"]
fn member_of_at_least_4_gib() {
    let size: u64 = (4 << 30) + 4097;
    let mut wheel = builder();
    let zeros = ReaderSource::new(
        move || Ok(std::io::repeat(0).take(size)),
        size,
        false,
        "4 GiB of zeros",
    );
    wheel.add_file("pkg/huge.bin", Arc::new(zeros)).unwrap();
    wheel
        .add_file("pkg/after.txt", bytes(b"after\n".to_vec(), false))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let written = wheel
        .write(dir.path(), &WriteOptions::default(), None)
        .unwrap();
    let mut reader = WheelReader::open(&written.path).unwrap();
    let verification = reader.verify().unwrap();
    assert!(verification.is_valid(), "{:?}", verification.problems);
    assert_eq!(
        reader.read_member("pkg/after.txt", u64::MAX).unwrap(),
        b"after\n"
    );
    if have_python() {
        zipfile_test(&written.path);
    }
}
