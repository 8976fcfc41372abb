//! What this program reads from the environment: read here, once, and
//! handed to the libraries as typed values (they read none).

use std::fs::File;
use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use pipeline::{BuildPause, BuildPoint, PlatformTag};

/// The wheel platform tag when `--platform-tag` is not given.
pub(crate) const PLATFORM_TAG_ENV: &str = "ROCM_SDK_WHEEL_PLATFORM_TAG";

/// The timestamp of every archive member (reproducible builds).
const SOURCE_DATE_EPOCH: &str = "SOURCE_DATE_EPOCH";

/// Test hook: a directory of FIFOs named for the points of a build where
/// it waits (docs/pipeline.md, "Holding a build").
const COMMIT_GATE_ENV: &str = "THEROCK_PACKAGE_TEST_COMMIT_GATE";

/// The tag `ROCM_SDK_WHEEL_PLATFORM_TAG` names (unset or empty: none).
pub(crate) fn platform_tag() -> anyhow::Result<Option<PlatformTag>> {
    match std::env::var(PLATFORM_TAG_ENV) {
        Ok(text) if !text.is_empty() => text
            .parse()
            .map(Some)
            .with_context(|| format!("invalid {PLATFORM_TAG_ENV}")),
        _ => Ok(None),
    }
}

/// `SOURCE_DATE_EPOCH` in seconds (unset or blank: none).
pub(crate) fn source_date_epoch() -> anyhow::Result<Option<u64>> {
    match std::env::var(SOURCE_DATE_EPOCH) {
        Ok(value) if !value.trim().is_empty() => value
            .trim()
            .parse()
            .map(Some)
            .with_context(|| format!("{SOURCE_DATE_EPOCH}={value} is not a number of seconds")),
        _ => Ok(None),
    }
}

/// The test hook's pause, when `THEROCK_PACKAGE_TEST_COMMIT_GATE` names a
/// directory.
pub(crate) fn commit_gates() -> Option<Arc<dyn BuildPause>> {
    std::env::var_os(COMMIT_GATE_ENV).map(|dir| Arc::new(Gates(PathBuf::from(dir))) as _)
}

/// Holds a build at each point whose FIFO (`first-bytes`, `before-swap`,
/// `after-swap`) exists in the directory, until a test writes to it and
/// closes it; `tests/it/interrupted.rs` kills the build there.
#[derive(Debug)]
struct Gates(PathBuf);

impl BuildPause for Gates {
    fn at(&self, point: BuildPoint) -> io::Result<()> {
        let path = self.0.join(point.name());
        if !path.exists() {
            return Ok(());
        }
        // Opening a FIFO blocks until the test opens it for writing.
        let mut sink = Vec::new();
        File::open(&path)
            .and_then(|mut fifo| fifo.read_to_end(&mut sink))
            .map(drop)
            .map_err(|source| io::Error::new(source.kind(), GateError { path, source }))
    }
}

/// A gate's FIFO could not be read.
#[derive(Debug)]
struct GateError {
    path: PathBuf,
    source: io::Error,
}

impl std::fmt::Display for GateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "commit gate {}", self.path.display())
    }
}

impl std::error::Error for GateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}
