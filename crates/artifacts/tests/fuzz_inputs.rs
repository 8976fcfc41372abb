//! What coverage-guided fuzzing of the archive reader found
//! (`fuzz/fuzz_targets/artifact_archive.rs`): the inputs, kept in
//! `tests/fuzz-inputs/`, and the rules they led to.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use artifacts::{ArtifactDir, ArtifactFilter, PathFilter};

const ARCHIVE: &str = "core-hip_lib_generic.tar.xz";

/// A small artifact tar: the manifest, then one file under its prefix.
fn artifact_tar() -> Vec<u8> {
    let mut builder = tar::Builder::new(Vec::new());
    for (name, data) in [
        ("artifact_manifest.txt", &b"stage\n"[..]),
        ("stage/share/doc.txt", b"doc\n"),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append_data(&mut header, name, data).unwrap();
    }
    builder.into_inner().unwrap()
}

fn compress(data: &[u8], stream: liblzma::stream::Stream) -> Vec<u8> {
    let mut encoder = liblzma::write::XzEncoder::new_stream(Vec::new(), stream);
    encoder.write_all(data).unwrap();
    encoder.finish().unwrap()
}

/// Opens a directory holding `bytes` as the one artifact archive.
fn open(bytes: &[u8]) -> (tempfile::TempDir, Result<ArtifactDir, artifacts::Error>) {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join(ARCHIVE), bytes).unwrap();
    let opened = ArtifactDir::open(dir.path());
    (dir, opened)
}

/// CRC-32 (IEEE), what xz headers carry.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn a_legacy_lzma_stream_is_not_an_xz_artifact() {
    // The old `.lzma` format has no integrity check and its header alone
    // decides the dictionary (up to 4 GiB): the reader allocated it.
    let options = liblzma::stream::LzmaOptions::new_preset(0).unwrap();
    let alone = compress(
        &artifact_tar(),
        liblzma::stream::Stream::new_lzma_encoder(&options).unwrap(),
    );
    let (dir, opened) = open(&alone);
    let err = opened.expect_err("a .lzma stream named .tar.xz is refused");
    let text = format!("{err:#}");
    assert!(
        text.contains(&dir.path().join(ARCHIVE).display().to_string()),
        "{text}"
    );
}

#[test]
fn an_xz_stream_asking_for_more_memory_than_the_limit_is_refused() {
    let stream =
        liblzma::stream::Stream::new_easy_encoder(0, liblzma::stream::Check::Crc64).unwrap();
    let mut xz = compress(&artifact_tar(), stream);
    assert!(open(&xz).1.is_ok(), "the unmodified stream reads");
    // Block header after the 12-byte stream header: size, flags, then the
    // LZMA2 filter (id 0x21, one property byte: the dictionary size), CRC-32.
    let size = (usize::from(xz[12]) + 1) * 4;
    assert_eq!(
        (xz[13], xz[14], xz[15]),
        (0, 0x21, 1),
        "one LZMA2 filter, no sizes"
    );
    xz[16] = 40; // 1.5 GiB, the largest an .xz header can ask for
    let crc = crc32(&xz[12..12 + size - 4]);
    xz[12 + size - 4..12 + size].copy_from_slice(&crc.to_le_bytes());
    let (_dir, opened) = open(&xz);
    let text = format!(
        "{:#}",
        opened.expect_err("1.5 GiB of dictionary is refused")
    );
    assert!(text.contains("limit"), "{text}");
}

/// Every kept input, read as the fuzz target reads it: the first byte's bit
/// 0 says the rest is the compressed file itself (else it is compressed
/// first), bit 1 picks xz over zstd. Nothing may panic or run out of memory.
#[test]
fn inputs_found_by_fuzzing() {
    let inputs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-inputs");
    let mut seen = 0;
    for path in fs::read_dir(&inputs).unwrap().map(|e| e.unwrap().path()) {
        let data = fs::read(&path).unwrap();
        let (&mode, payload) = data.split_first().unwrap();
        let xz = mode & 2 != 0;
        let bytes = match (mode & 1, xz) {
            (1, _) => payload.to_vec(),
            (_, true) => compress(
                payload,
                liblzma::stream::Stream::new_easy_encoder(0, liblzma::stream::Check::Crc64)
                    .unwrap(),
            ),
            (_, false) => zstd::bulk::compress(payload, 1).unwrap(),
        };
        let dir = tempfile::tempdir().unwrap();
        let name: PathBuf = if xz {
            ARCHIVE.into()
        } else {
            "core-hip_lib_generic.tar.zst".into()
        };
        fs::write(dir.path().join(name), bytes).unwrap();
        if let Ok(found) = ArtifactDir::open(dir.path())
            && let Ok(catalog) = found.catalog(&ArtifactFilter::new(), &PathFilter::new())
        {
            let _ = catalog.for_each_file(|_, r| -> Result<(), artifacts::Error> {
                let _ = std::io::copy(r, &mut std::io::sink());
                Ok(())
            });
        }
        seen += 1;
    }
    assert!(seen > 0, "no inputs in {}", inputs.display());
}
