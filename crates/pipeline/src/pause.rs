//! Points where a caller may hold a build: what the tests that end a
//! build mid-commit use (docs/pipeline.md, "Holding a build"). The build
//! knows no test; its caller decides what holding means.

use std::fmt;
use std::io;

/// A point of a build where [`BuildOptions::pause`](crate::BuildOptions::pause)
/// is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildPoint {
    /// The progress has heard of the first bytes read (once per build;
    /// a failure here is ignored).
    FirstBytes,
    /// Every package is staged and the old entries are linked in; `dist/`
    /// is not swapped yet.
    BeforeSwap,
    /// `dist/` is the new one; the old tree is not removed yet.
    AfterSwap,
}

impl BuildPoint {
    /// Every point, in the order a build reaches them.
    pub const ALL: [BuildPoint; 3] = [Self::FirstBytes, Self::BeforeSwap, Self::AfterSwap];

    /// Its name: `first-bytes`, `before-swap`, `after-swap`.
    pub fn name(self) -> &'static str {
        match self {
            Self::FirstBytes => "first-bytes",
            Self::BeforeSwap => "before-swap",
            Self::AfterSwap => "after-swap",
        }
    }
}

impl fmt::Display for BuildPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Holds a build at each [`BuildPoint`]: the build calls
/// [`at`](Self::at) there and goes on when it returns. An error at
/// [`BuildPoint::BeforeSwap`] or [`BuildPoint::AfterSwap`] fails the
/// build.
///
/// ```
/// use pipeline::{BuildPause, BuildPoint};
///
/// /// Logs each point.
/// #[derive(Debug)]
/// struct Log;
///
/// impl BuildPause for Log {
///     fn at(&self, point: BuildPoint) -> std::io::Result<()> {
///         eprintln!("build at {point}");
///         Ok(())
///     }
/// }
/// ```
pub trait BuildPause: Send + Sync + fmt::Debug {
    /// The build is at `point` and waits until this returns.
    fn at(&self, point: BuildPoint) -> io::Result<()>;
}
