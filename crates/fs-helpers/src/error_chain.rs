//! An error printed with its causes, for messages that carry an error as text.
//!
//! Error messages in this workspace never repeat their own cause: the cause
//! is the error's [`source`](std::error::Error::source), and whoever prints
//! the error prints the chain (`{e:#}` with `anyhow`). Code that turns an
//! error into a string for a report or for another error's `reason` field
//! uses [`Chain`], so the causes are not lost.
//!
//! ```
//! use std::{error::Error, fmt, io};
//! use fs_helpers::error_chain::Chain;
//!
//! #[derive(Debug)]
//! struct CannotWrite(io::Error);
//! impl fmt::Display for CannotWrite {
//!     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
//!         f.write_str("cannot write x")
//!     }
//! }
//! impl Error for CannotWrite {
//!     fn source(&self) -> Option<&(dyn Error + 'static)> {
//!         Some(&self.0)
//!     }
//! }
//!
//! let error = CannotWrite(io::Error::other("disk full"));
//! assert_eq!(Chain(&error).to_string(), "cannot write x: disk full");
//! ```

use std::error::Error;
use std::fmt;

/// Displays an error followed by each of its causes, joined by `": "`
/// (the form `anyhow` prints with `{:#}`).
#[derive(Debug, Clone, Copy)]
pub struct Chain<'a>(pub &'a (dyn Error + 'static));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut cause = self.0.source();
        while let Some(error) = cause {
            write!(f, ": {error}")?;
            cause = error.source();
        }
        Ok(())
    }
}

/// `text` with every control character but those in `kept` escaped as
/// Rust writes it (`\n`, `\0`, `\u{1b}`): a message that quotes a name, a
/// version or a path from its input stays on its lines and cannot steer a
/// terminal. Borrowed when there is nothing to escape.
///
/// ```
/// use fs_helpers::error_chain::escape_controls;
/// assert_eq!(escape_controls("7.1.0\n\0\u{1b}[31m", &[]), "7.1.0\\n\\0\\u{1b}[31m");
/// assert_eq!(escape_controls("a\tb\nc\r", &['\n', '\t']), "a\tb\nc\\r");
/// ```
pub fn escape_controls<'a>(text: &'a str, kept: &[char]) -> std::borrow::Cow<'a, str> {
    let escape = |c: char| c.is_control() && !kept.contains(&c);
    if !text.chars().any(escape) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escape(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}
