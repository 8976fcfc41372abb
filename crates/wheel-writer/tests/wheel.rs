//! Wheels written to disk: read back, reproducible, cache-equivalent, and
//! accepted by Python's zipfile and pip.

mod common;

use std::process::Command;
use std::sync::Arc;

use common::*;
use wheel_writer::{
    Compression, CompressionCache, Error, MemorySink, ReaderSource, RecordProblem, WheelReader,
    WorkerPool, WriteOptions,
};

/// 1 MiB chunks, so the sample's 3 MiB library is written in chunks.
fn options() -> WriteOptions {
    WriteOptions::default()
        .with_jobs(2)
        .with_chunk_size(1 << 20)
        .with_source_date_epoch(Some(1_700_000_000))
}

fn read(path: &std::path::Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

#[test]
fn written_wheel_reads_back_and_matches_its_record() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = sample_wheel(&ALL);
    let written = wheel.write(dir.path(), &options(), None).unwrap();
    assert_eq!(
        written.path.file_name().unwrap(),
        "rocm_sdk_core-7.0.0rc1-py3-none-linux_x86_64.whl"
    );
    let mut reader = WheelReader::open(&written.path).unwrap();
    let verification = reader.verify().unwrap();
    assert!(verification.is_valid(), "{:?}", verification.problems);
    assert_eq!(verification.members_checked, written.record.len() - 1);
    let names: Vec<String> = reader.member_names().map(str::to_owned).collect();
    // Payload sorted, .dist-info last, RECORD last of all.
    assert_eq!(
        names.last().unwrap(),
        "rocm_sdk_core-7.0.0rc1.dist-info/RECORD"
    );
    let payload: Vec<&String> = names
        .iter()
        .filter(|n| !n.contains(".dist-info/"))
        .collect();
    let mut sorted = payload.clone();
    sorted.sort();
    assert_eq!(payload, sorted);
    assert!(
        names
            .iter()
            .skip_while(|n| !n.contains(".dist-info/"))
            .all(|n| n.contains(".dist-info/"))
    );
    // Contents survive, including the chunked member.
    assert_eq!(
        reader
            .read_member("_rocm_sdk_core/lib/libamdhip64.so.7", u64::MAX)
            .unwrap(),
        structured(3 * 1024 * 1024 + 123, 7)
    );
    assert_eq!(
        reader
            .read_member("_rocm_sdk_core/share/empty.txt", u64::MAX)
            .unwrap(),
        b""
    );
    // Modes: executables 0o755, the rest 0o644.
    assert_eq!(
        reader.member_mode("_rocm_sdk_core/bin/hipcc").unwrap(),
        Some(0o100_755)
    );
    assert_eq!(
        reader.member_mode("rocm_sdk_core/__init__.py").unwrap(),
        Some(0o100_644)
    );
    assert_eq!(
        reader
            .member_mode("rocm_sdk_core-7.0.0rc1.data/scripts/rocm-sdk-launch")
            .unwrap(),
        Some(0o100_755)
    );
}

#[test]
fn record_verification_finds_tampering() {
    let dir = tempfile::tempdir().unwrap();
    let written = sample_wheel(&ALL)
        .write(
            dir.path(),
            &options().with_compression(Compression::Stored),
            None,
        )
        .unwrap();
    let mut bytes = read(&written.path);
    // Flip a byte inside the stored __init__.py (stored, so the text is visible);
    // the CRC check of the zip reader or the RECORD hash must catch it.
    let at = bytes.windows(11).position(|w| w == b"__version__").unwrap();
    bytes[at] = b'X';
    std::fs::write(&written.path, &bytes).unwrap();
    let mut reader = WheelReader::open(&written.path).unwrap();
    match reader.verify() {
        Ok(v) => assert!(
            v.problems
                .iter()
                .any(|p| matches!(p, RecordProblem::HashMismatch { .. })),
            "{:?}",
            v.problems
        ),
        Err(e) => assert!(e.to_string().contains("rocm_sdk_core/__init__.py"), "{e}"),
    }
}

#[test]
fn shuffled_inputs_give_identical_bytes() {
    let dir_a = tempfile::tempdir().unwrap();
    let dir_b = tempfile::tempdir().unwrap();
    let a = sample_wheel(&ALL)
        .write(dir_a.path(), &options(), None)
        .unwrap();
    let b = sample_wheel(&[7, 3, 5, 0, 6, 2, 4, 1])
        .write(dir_b.path(), &options().with_jobs(1), None)
        .unwrap();
    assert_eq!(read(&a.path), read(&b.path));
}

#[test]
fn cached_path_gives_identical_bytes_and_skips_work() {
    let plain = tempfile::tempdir().unwrap();
    let cached = tempfile::tempdir().unwrap();
    let cache = CompressionCache::new();
    let first = sample_wheel(&ALL)
        .write(plain.path(), &options(), None)
        .unwrap();
    // Two wheels through one cache: the second copies every member.
    let second_dir = cached.path().join("second");
    std::fs::create_dir(&second_dir).unwrap();
    let one = sample_wheel(&ALL)
        .write(cached.path(), &options(), Some(&cache))
        .unwrap();
    let after_one = cache.stats();
    // Within one wheel the identical libsame_{a,b} are compressed once.
    assert_eq!(after_one.hits, 0);
    let two = sample_wheel(&ALL)
        .write(&second_dir, &options(), Some(&cache))
        .unwrap();
    let after_two = cache.stats();
    assert!(after_two.hits >= 8, "{after_two:?}");
    assert!(after_two.bytes_reused > 3 * 1024 * 1024);
    assert_eq!(read(&first.path), read(&one.path));
    assert_eq!(read(&first.path), read(&two.path));
    // The first wheel may even be gone: the cache keeps its bytes readable.
    std::fs::remove_file(&one.path).unwrap();
    let third_dir = cached.path().join("third");
    std::fs::create_dir(&third_dir).unwrap();
    let three = sample_wheel(&ALL)
        .write(&third_dir, &options(), Some(&cache))
        .unwrap();
    assert_eq!(read(&first.path), read(&three.path));
}

/// A source that counts how often it is opened and can change its bytes
/// after the first open.
fn counted_source(
    first: Vec<u8>,
    later: Vec<u8>,
    opens: &Arc<std::sync::atomic::AtomicUsize>,
) -> Arc<dyn wheel_writer::MemberSource> {
    assert_eq!(first.len(), later.len());
    let size = first.len() as u64;
    let opens = Arc::clone(opens);
    Arc::new(ReaderSource::new(
        move || {
            let n = opens.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Ok(std::io::Cursor::new(if n == 0 {
                first.clone()
            } else {
                later.clone()
            }))
        },
        size,
        false,
        "a counted source",
    ))
}

#[test]
fn wheels_written_at_once_on_one_pool_give_the_same_bytes_and_compress_a_large_member_once() {
    let plain = tempfile::tempdir().unwrap();
    let first = sample_wheel(&ALL)
        .write(plain.path(), &options(), None)
        .unwrap();
    let cache = CompressionCache::new();
    let pool = WorkerPool::new(&options(), 3).unwrap();
    let shared = options().with_pool(pool);
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let written: Vec<_> = std::thread::scope(|threads| {
        let writes: Vec<_> = dirs
            .iter()
            .map(|dir| {
                let (shared, cache) = (&shared, &cache);
                threads.spawn(move || {
                    sample_wheel(&ALL)
                        .write(dir.path(), shared, Some(cache))
                        .unwrap()
                })
            })
            .collect();
        writes.into_iter().map(|w| w.join().unwrap()).collect()
    });
    for wheel in &written {
        assert_eq!(read(&first.path), read(&wheel.path));
    }
    // However the three interleave, the 3 MiB library is compressed by
    // the write that began first; the others wait for it and copy it.
    let stats = cache.stats();
    assert!(stats.bytes_reused >= 2 * 3 * 1024 * 1024, "{stats:?}");
}

#[test]
fn only_members_that_could_be_reused_are_read_before_compressing() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let cache = CompressionCache::new();
    // No member of the sample is 777 bytes long, and nothing is cached yet.
    let unique = Arc::new(AtomicUsize::new(0));
    let mut wheel = sample_wheel(&ALL);
    let data = structured(777, 1);
    wheel
        .add_file(
            "pkg/unique.bin",
            counted_source(data.clone(), data, &unique),
        )
        .unwrap();
    let first = wheel.write(dir.path(), &options(), Some(&cache)).unwrap();
    assert_eq!(unique.load(Ordering::SeqCst), 1, "read once: compressed");

    // The cache now holds a 777-byte member: one of that size is looked up
    // (read once) and copied (not read again).
    let second_dir = dir.path().join("second");
    std::fs::create_dir(&second_dir).unwrap();
    let same = Arc::new(AtomicUsize::new(0));
    let mut wheel = sample_wheel(&ALL);
    let data = structured(777, 1);
    wheel
        .add_file("pkg/unique.bin", counted_source(data.clone(), data, &same))
        .unwrap();
    let second = wheel.write(&second_dir, &options(), Some(&cache)).unwrap();
    assert_eq!(same.load(Ordering::SeqCst), 1, "read once: copied");
    assert_eq!(read(&first.path), read(&second.path));
    assert!(
        WheelReader::open(&second.path)
            .unwrap()
            .verify()
            .unwrap()
            .is_valid()
    );
}

#[test]
fn a_member_that_changes_after_its_lookup_is_an_error() {
    use std::sync::atomic::AtomicUsize;
    let dir = tempfile::tempdir().unwrap();
    let cache = CompressionCache::new();
    let mut wheel = sample_wheel(&ALL);
    // Two members of one size are both looked up; the second's bytes change
    // before it is compressed, so its RECORD hash would be wrong.
    let opens = Arc::new(AtomicUsize::new(0));
    wheel
        .add_file(
            "pkg/steady.bin",
            counted_source(structured(4096, 1), structured(4096, 1), &Arc::default()),
        )
        .unwrap();
    wheel
        .add_file(
            "pkg/changing.bin",
            counted_source(structured(4096, 4), structured(4096, 6), &opens),
        )
        .unwrap();
    let err = wheel
        .write(dir.path(), &options(), Some(&cache))
        .unwrap_err();
    assert!(matches!(err, Error::ContentChanged { .. }), "{err}");
    assert!(err.to_string().contains("pkg/changing.bin"), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn stored_wheels_are_valid_too() {
    let dir = tempfile::tempdir().unwrap();
    let written = sample_wheel(&ALL)
        .write(
            dir.path(),
            &options().with_compression(Compression::Stored),
            None,
        )
        .unwrap();
    assert!(
        WheelReader::open(&written.path)
            .unwrap()
            .verify()
            .unwrap()
            .is_valid()
    );
}

#[test]
fn memory_sink_sees_the_same_members_as_the_zip() {
    let dir = tempfile::tempdir().unwrap();
    let wheel = sample_wheel(&ALL);
    let mut sink = MemorySink::new();
    let record = wheel.write_into(&mut sink).unwrap();
    let written = wheel.write(dir.path(), &options(), None).unwrap();
    assert_eq!(record, written.record);
    let mut reader = WheelReader::open(&written.path).unwrap();
    let names: Vec<String> = sink.members().iter().map(|m| m.path.clone()).collect();
    assert_eq!(names, reader.member_names().collect::<Vec<_>>());
    for member in sink.members() {
        assert_eq!(
            reader.read_member(&member.path, u64::MAX).unwrap(),
            member.bytes
        );
    }
}

#[test]
fn a_source_of_the_wrong_size_fails_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for (declared, actual) in [
        (10u64, 5usize),
        (10, 11),
        (3 << 20, (3 << 20) - 1),
        (3 << 20, (3 << 20) + 1),
    ] {
        let mut wheel = sample_wheel(&ALL);
        let source = ReaderSource::new(
            move || Ok(std::io::Cursor::new(vec![1u8; actual])),
            declared,
            false,
            "a shrinking file",
        );
        wheel
            .add_file("pkg/changing.bin", Arc::new(source))
            .unwrap();
        let err = wheel.write(dir.path(), &options(), None).unwrap_err();
        assert!(matches!(err, Error::SizeMismatch { .. }), "{err}");
        assert!(err.to_string().contains("pkg/changing.bin"), "{err}");
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_failed_write_gives_its_chunks_in_flight_back_to_a_shared_pool() {
    // One thread and a window of four 1 MiB chunks: if a failed write kept
    // the places of the chunks it had in flight, the window would be gone
    // after a few and the last write would wait forever.
    let options = options().with_jobs(1);
    let shared = options
        .clone()
        .with_pool(WorkerPool::new(&options, 1).unwrap());
    let dir = tempfile::tempdir().unwrap();
    for _ in 0..4 {
        let mut wheel = sample_wheel(&ALL);
        let failing = ReaderSource::new(
            || Err::<std::io::Empty, _>(std::io::Error::other("unreadable")),
            10,
            false,
            "an unreadable file",
        );
        wheel.add_file("aaa/first.bin", Arc::new(failing)).unwrap();
        wheel
            .add_file("aab/large.bin", bytes(structured(12 << 20, 3), false))
            .unwrap();
        let err = wheel.write(dir.path(), &shared, None).unwrap_err();
        assert!(err.to_string().contains("aaa/first.bin"), "{err}");
    }
    let plain = tempfile::tempdir().unwrap();
    let first = sample_wheel(&ALL)
        .write(plain.path(), &options, None)
        .unwrap();
    let after = sample_wheel(&ALL).write(dir.path(), &shared, None).unwrap();
    assert_eq!(read(&first.path), read(&after.path));
}

#[test]
fn an_unreadable_source_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut wheel = sample_wheel(&ALL);
    let missing = dir.path().join("gone.so");
    std::fs::write(&missing, b"x").unwrap();
    let source = wheel_writer::FileSource::new(&missing).unwrap();
    std::fs::remove_file(&missing).unwrap();
    wheel.add_file("pkg/gone.so", Arc::new(source)).unwrap();
    let err = wheel.write(dir.path(), &options(), None).unwrap_err();
    assert!(err.to_string().contains("gone.so"), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn paths_and_names_are_checked() {
    let mut wheel = sample_wheel(&ALL);
    assert!(matches!(
        wheel.add_file("rocm_sdk_core/__init__.py", bytes(b"".to_vec(), false)),
        Err(Error::DuplicatePath { .. })
    ));
    assert!(
        wheel
            .add_file("../escape", bytes(b"".to_vec(), false))
            .is_err()
    );
    assert!(
        wheel
            .add_file(
                "rocm_sdk_core-7.0.0rc1.dist-info/x",
                bytes(b"".to_vec(), false)
            )
            .is_err()
    );
    assert!(
        wheel
            .add_dist_info_file("RECORD", bytes(b"".to_vec(), false))
            .is_err()
    );
    assert!(
        wheel
            .add_data("lib", "x", bytes(b"".to_vec(), false))
            .is_err()
    );
}

#[test]
fn python_zipfile_accepts_the_wheel() {
    assert!(have_python(), "python3 is needed for this test");
    let dir = tempfile::tempdir().unwrap();
    let written = sample_wheel(&ALL)
        .write(dir.path(), &options(), None)
        .unwrap();
    zipfile_test(&written.path);
}

#[test]
fn pip_installs_the_wheels_offline() {
    assert!(have_python(), "python3 is needed for this test");
    let dir = tempfile::tempdir().unwrap();
    let dist = dir.path().join("dist");
    std::fs::create_dir(&dist).unwrap();
    let core = sample_wheel(&ALL).write(&dist, &options(), None).unwrap();
    // A second wheel that depends on the first, exactly pinned.
    let mut meta = wheel_writer::CoreMetadata::new("rocm-sdk-libraries-gfx94X-dcgpu", "7.0.0rc1");
    meta.requires_dist = vec!["rocm-sdk-core==7.0.0rc1".into()];
    let mut libs = wheel_writer::WheelBuilder::new(
        meta,
        wheel_writer::WheelTag::py3_none("linux_x86_64").unwrap(),
    )
    .unwrap();
    libs.add_file(
        "rocm_sdk_libraries_gfx94X_dcgpu/__init__.py",
        bytes(b"".to_vec(), false),
    )
    .unwrap();
    let libs = libs.write(&dist, &options(), None).unwrap();
    let venv = dir.path().join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    let python = venv.join("bin/python");
    // Dependencies resolve among the given files only: no index, no download.
    run(Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--no-index",
            "--quiet",
            "--disable-pip-version-check",
        ])
        .arg(&libs.path)
        .arg(&core.path));
    run(Command::new(&python).args(["-m", "pip", "check"]));
    let out = run(Command::new(&python).args([
        "-c",
        "import rocm_sdk_core, importlib.metadata as m; \
         print(rocm_sdk_core.__version__, m.version('rocm-sdk-core'), \
         sorted(e.name for e in m.distribution('rocm-sdk-core').entry_points))",
    ]));
    assert!(
        out.contains("7.0.0rc1 7.0.0rc1 ['amdclang++', 'hipcc']"),
        "{out}"
    );
    let site = run(Command::new(&python).args([
        "-c",
        "import sysconfig; print(sysconfig.get_paths()['platlib'])",
    ]));
    let site = std::path::Path::new(site.trim());
    assert!(site.join("_rocm_sdk_core/lib/libamdhip64.so.7").is_file());
    assert!(venv.join("bin/rocm-sdk-launch").is_file());
    assert!(venv.join("bin/hipcc").is_file());
}

#[test]
fn local_headers_are_checked_against_the_central_directory() {
    assert!(have_python(), "python3 is needed for this test");
    let dir = tempfile::tempdir().unwrap();
    let written = sample_wheel(&ALL)
        .write(dir.path(), &options(), None)
        .unwrap();
    let clean = WheelReader::open(&written.path).unwrap().verify().unwrap();
    assert!(clean.is_valid(), "{clean:?}");

    // Written to a stream that cannot seek, zipfile puts CRC and sizes in
    // a data descriptor after each member (flag bit 3): sound when every
    // member is deflated (the deflate stream says where it ends).
    let streamed = |method: &str, to: &std::path::Path| {
        run(Command::new("python3")
            .args([
                "-c",
                r"
import io, sys, zipfile
class Stream(io.RawIOBase):
    def __init__(self, f): self.f = f
    def writable(self): return True
    def write(self, b): return self.f.write(b)
method = getattr(zipfile, sys.argv[3])
with open(sys.argv[2], 'wb') as f, zipfile.ZipFile(sys.argv[1]) as zin:
    with zipfile.ZipFile(Stream(f), 'w') as zout:
        for info in zin.infolist():
            zout.writestr(info, zin.read(info), compress_type=method)
",
            ])
            .arg(&written.path)
            .arg(to)
            .arg(method));
        read(to)
    };
    let deflated = dir.path().join("deflated.whl");
    let mut bytes = streamed("ZIP_DEFLATED", &deflated);
    assert!(bytes.windows(4).any(|w| w == b"PK\x07\x08"));
    let sound = WheelReader::open(&deflated).unwrap().verify().unwrap();
    assert!(sound.is_valid(), "{sound:?}");

    // A descriptor whose CRC disagrees with the central directory.
    let at = bytes.windows(4).position(|w| w == b"PK\x07\x08").unwrap();
    bytes[at + 4] ^= 1;
    std::fs::write(&deflated, &bytes).unwrap();
    let lying =
        fs_helpers::error_chain::Chain(&WheelReader::open(&deflated).unwrap_err()).to_string();
    assert!(
        lying.contains("the local header gives data descriptor (CRC-32, compressed size, size)"),
        "{lying}"
    );

    // Stored data followed by a descriptor: a streaming reader cannot
    // tell where it ends.
    let stored = dir.path().join("stored.whl");
    streamed("ZIP_STORED", &stored);
    let error =
        fs_helpers::error_chain::Chain(&WheelReader::open(&stored).unwrap_err()).to_string();
    assert!(
        error.contains("it is stored with a data descriptor"),
        "{error}"
    );
}
