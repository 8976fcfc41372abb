//! What [`build`](crate::build()) tells its caller while it writes
//! packages: a [`BuildProgress`] the caller implements (`therock-package`
//! draws its progress display with it: docs/ci.md, "Terminal and logs").
//! This crate draws nothing itself.

/// Hears of each package as [`build`](crate::build()) writes it
/// ([`BuildOptions::progress`](crate::BuildOptions::progress)). Every
/// method has an empty default.
///
/// The calls come in this order: [`start`](Self::start) once, then for each
/// package, in plan order, [`package_started`](Self::package_started) and
/// [`package_written`](Self::package_written); then
/// [`finish`](Self::finish). [`bytes_read`](Self::bytes_read) comes from the
/// writer's threads at any time in between: several packages are written
/// at once, so the bytes may be those of a package not started in this
/// order yet. They add up to every package's input bytes, each package's
/// in full by the time it is written. A build that fails stops where it
/// is, without `finish`.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use pipeline::BuildProgress;
///
/// /// Counts the bytes the build read.
/// #[derive(Debug, Default)]
/// struct Bytes(AtomicU64);
///
/// impl BuildProgress for Bytes {
///     fn bytes_read(&self, bytes: u64) {
///         self.0.fetch_add(bytes, Ordering::Relaxed);
///     }
/// }
/// ```
pub trait BuildProgress: Send + Sync + std::fmt::Debug {
    /// Writing starts: `packages` wheels and sdists, reading `input_bytes`
    /// bytes of artifacts in all.
    fn start(&self, packages: u64, input_bytes: u64) {
        let _ = (packages, input_bytes);
    }

    /// The package `name` (`rocm-sdk-core`, `rocm (sdist)`) is written
    /// now; it reads `input_bytes` bytes.
    fn package_started(&self, name: &str, input_bytes: u64) {
        let _ = (name, input_bytes);
    }

    /// `bytes` more bytes of the packages' input were read (called from
    /// any thread; a package never credits more than its input).
    fn bytes_read(&self, bytes: u64) {
        let _ = bytes;
    }

    /// The current package is written, as `file` (its path below `dist/`,
    /// `/`-separated), of `size` bytes.
    fn package_written(&self, file: &str, size: u64) {
        let _ = (file, size);
    }

    /// Every package is written (the commit into `dist/` follows).
    fn finish(&self) {}
}

/// Hears nothing: a build reported only by its result.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NoProgress;

impl BuildProgress for NoProgress {}
