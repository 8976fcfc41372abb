//! The strict zip reader every reader of untrusted wheels goes through
//! (crates/pypa-formats `zip_archive`): the end records, the central
//! directory, every local header, then each member's data, streamed.
//!
//! Beyond "no panic": an archive that opens has its members tiling the
//! input in order of their data, names that are UTF-8 without NUL, and a
//! member that reads to its end gives exactly its declared size (a read
//! never returns more than the declared size, whatever the data).
#![no_main]

use std::io::{Cursor, Read};

use libfuzzer_sys::fuzz_target;
use pypa_formats::zip_archive::{Method, ZipArchive};

fuzz_target!(|data: &[u8]| {
    let Ok(mut archive) = ZipArchive::new(Cursor::new(data)) else {
        return;
    };
    let entries = archive.entries().to_vec();
    for entry in &entries {
        assert!(!entry.name().contains('\0'), "{:?}", entry.name());
        let range = entry.data_range();
        assert!(range.end <= data.len() as u64, "{range:?} past the input");
        if entry.method() == Method::Stored {
            assert_eq!(entry.compressed_size(), entry.size());
        }
    }
    for (index, entry) in entries.iter().enumerate() {
        let Ok(mut reader) = archive.reader(index) else {
            continue;
        };
        // Bounded: never more than the declared size comes out.
        let mut bytes = Vec::new();
        let read = (&mut reader)
            .take(entry.size().min(1 << 20) + 1)
            .read_to_end(&mut bytes);
        assert!(bytes.len() as u64 <= entry.size(), "more than declared");
        if read.is_ok() && (bytes.len() as u64) < entry.size().min(1 << 20) {
            panic!("{} ended early without an error", entry.name());
        }
        if entry.size() <= 1 << 20 && read.is_ok() {
            assert_eq!(bytes.len() as u64, entry.size());
        }
    }
});
