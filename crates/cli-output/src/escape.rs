//! Control characters escaped in every message (docs/behaviour.md#messages):
//! a message quotes names, versions and paths from its input, and one of
//! them holding a newline, a NUL or an ANSI escape must neither break the
//! message's one line nor steer the terminal. The binaries print errors,
//! log lines and reports through these.

use std::borrow::Cow;

use fs_helpers::error_chain::escape_controls;

/// `text` with every control character escaped as Rust writes it (`\n`,
/// `\0`, `\u{1b}`).
///
/// ```
/// assert_eq!(cli_output::escaped("7.1.0\n\0\u{1b}[31m"), "7.1.0\\n\\0\\u{1b}[31m");
/// assert_eq!(cli_output::escaped("plain"), "plain");
/// ```
pub fn escaped(text: &str) -> Cow<'_, str> {
    escape_controls(text, &[])
}

/// `text`, a report of several lines, with every control character but
/// the line breaks and tabs that lay it out escaped.
///
/// ```
/// assert_eq!(cli_output::escaped_lines("a\tb\nc\rd\n"), "a\tb\nc\\rd\n");
/// ```
pub fn escaped_lines(text: &str) -> Cow<'_, str> {
    escape_controls(text, &['\n', '\t'])
}
