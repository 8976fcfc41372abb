//! One exit status for every command of both binaries
//! (docs/behaviour.md#exit-status).

use std::fmt::Display;
use std::process::ExitCode;

/// How a command ended, as the process's exit status.
///
/// The rule: the command line itself is wrong → [`Usage`](Self::Usage);
/// anything the command was given that turns out bad (a missing or
/// unreadable path, a malformed artifact or package, a build that failed,
/// a check that found a problem) → [`Failure`](Self::Failure).
///
/// ```
/// use cli_output::ExitStatus;
///
/// assert_eq!(ExitStatus::verdict(true).code(), 0);
/// assert_eq!(ExitStatus::verdict(false).code(), 1);
/// assert_eq!(ExitStatus::Usage.code(), 2);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: done as asked (a check that passed included).
    Success,
    /// 1: the input or the release is bad, or a check failed.
    Failure,
    /// 2: a usage error (clap's own, or a conflict found after parsing).
    Usage,
}

impl ExitStatus {
    /// The numeric status.
    pub fn code(self) -> u8 {
        match self {
            Self::Success => 0,
            Self::Failure => 1,
            Self::Usage => 2,
        }
    }

    /// The status of a check's verdict: success when it passed.
    pub fn verdict(passed: bool) -> Self {
        if passed { Self::Success } else { Self::Failure }
    }

    /// Prints a command-line parse error as clap formats it and returns
    /// its status: `--help` and `--version` succeed, anything else is a
    /// usage error.
    #[cfg(feature = "clap")]
    pub fn clap_error(error: &clap::Error) -> Self {
        let _ = error.print();
        if error.use_stderr() {
            Self::Usage
        } else {
            Self::Success
        }
    }

    /// Prints a failed command's error chain (`{error:#}`) as one line
    /// after `prefix` on stderr, control characters escaped
    /// ([`escaped`](crate::escaped)), and returns [`Failure`](Self::Failure).
    pub fn failed(prefix: &str, error: &impl Display) -> Self {
        eprintln!("{prefix}{}", crate::escaped(&format!("{error:#}")));
        Self::Failure
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> Self {
        Self::from(status.code())
    }
}
