//! The strict sdist reader (crates/pypa-formats `sdist_archive`): one
//! gzip member, ustar headers, pax paths, the end-of-archive marker. The
//! first input byte's low bit says whether the target gzips the rest (so
//! mutations reach the tar) or hands it over as it is (so they reach the
//! gzip layer).
//!
//! Beyond "no panic": every member it yields has a UTF-8 name and at most
//! the member cap, and reading it gives exactly its size.
#![no_main]

use std::io::{Read, Write};

use libfuzzer_sys::fuzz_target;
use pypa_formats::sdist_archive::{MAX_MEMBER_SIZE, SdistArchive};
use therock_package_fuzz::{Wrapping, split};

fuzz_target!(|data: &[u8]| {
    let Some((wrapping, _, payload)) = split(data) else {
        return;
    };
    let bytes = match wrapping {
        Wrapping::Compressed => {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            encoder.write_all(payload).expect("into memory");
            encoder.finish().expect("into memory")
        }
        Wrapping::Raw => payload.to_vec(),
    };
    let mut archive = SdistArchive::new(bytes.as_slice());
    while let Ok(Some(mut member)) = archive.next_member() {
        assert!(member.size <= MAX_MEMBER_SIZE);
        assert!(!member.name.is_empty());
        let size = member.size;
        let mut content = Vec::new();
        if member.read_to_end(&mut content).is_ok() {
            assert_eq!(content.len() as u64, size);
        } else {
            break;
        }
    }
});
