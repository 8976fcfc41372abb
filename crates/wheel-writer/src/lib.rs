//! The wheel and sdist writer: reproducible archives, their members
//! compressed on every core.
//!
//! - [`WheelBuilder`] assembles a wheel (payload, `.data/scripts`, console
//!   scripts, [`CoreMetadata`], [`WheelTag`]) and writes it through any
//!   [`ArchiveSink`]: the real zip writer via [`WheelBuilder::write`], or a
//!   [`MemorySink`] in tests. `RECORD` is computed from the bytes as they are
//!   written and placed last.
//! - [`SdistBuilder`] writes `{name}-{version}.tar.gz` with `PKG-INFO` first.
//! - Member bytes come from a [`MemberSource`]: a file, bytes in memory, or any
//!   reader the caller can reopen (for example an ELF with patches applied
//!   while streaming).
//! - The zip writer deflates on a thread pool in fixed-size chunks, so peak
//!   memory does not grow with member or wheel size, and reuses compressed
//!   members across wheels through a shared [`CompressionCache`].
//! - The output depends only on the inputs: sorted members, one timestamp
//!   ([`WriteOptions::with_source_date_epoch`]), normalised modes.
//! - [`WheelReader`] opens a wheel through the workspace's one strict zip
//!   reader (`pypa_formats::zip_archive`), checks its members against the
//!   member rules and its `RECORD`, and reads members with a cap per kind
//!   ([`limits`]).
//!
//! Design notes: `docs/wheel-writer.md`.
//!
//! Packaging a directory's files as a wheel, from another program:
//!
//! ```
//! use std::sync::Arc;
//! use wheel_writer::{CoreMetadata, FileSource, WheelBuilder, WheelReader, WheelTag, WriteOptions};
//!
//! let dir = tempfile::tempdir()?;
//! let module = dir.path().join("hello.py");
//! std::fs::write(&module, "print('hello')\n")?;
//!
//! let metadata = CoreMetadata::new("hello-rocm", "1.0.0");
//! let mut wheel = WheelBuilder::new(metadata, WheelTag::py3_none("any")?)?;
//! wheel.add_file("hello.py", Arc::new(FileSource::new(&module)?))?;
//! let options = WriteOptions::default().with_source_date_epoch(Some(1_700_000_000));
//! let written = wheel.write(dir.path(), &options, None)?;
//! assert!(written.path.ends_with("hello_rocm-1.0.0-py3-none-any.whl"));
//!
//! // Read it back and check every member against RECORD.
//! let verification = WheelReader::open(&written.path)?.verify()?;
//! assert!(verification.is_valid());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod dist_dir;
mod error;
mod member_path;
mod metadata;
mod options;
mod output;
mod reader;
mod record;
mod sdist;
mod sink;
mod source;
pub mod timings;
mod wheel;
mod wheel_file;
mod zip_writer;

pub use error::Error;
pub use metadata::CoreMetadata;
pub use options::{
    CHUNK_SIZES, Compression, DEFAULT_CHUNK_SIZE, MAX_JOBS_PER_CORE, WriteOptions, ZIP_EPOCH,
};
pub use pypa_formats::filename::WheelTag;
pub use pypa_formats::record::{RecordEntry, RecordSyntaxError, parse_record, render_record};
pub use reader::{
    MemberProblem, MemberScreen, ReadError, RecordProblem, UnsafeMember, Verification, WheelReader,
    limits,
};
pub use record::MemberDigest;
pub use sdist::SdistBuilder;
pub use sink::{ArchiveSink, MemoryMember, MemorySink};
pub use source::{BytesSource, FileSource, Member, MemberSource, ReaderSource};
pub use wheel::{DEFAULT_GENERATOR, WheelBuilder, WrittenPackage};
pub use zip_writer::{CacheStats, CompressionCache, WorkerPool};
