//! How `therock-package` and `rocm-sdk` talk to a person or to a log.
//!
//! One set of conventions for both binaries (docs/ci.md, "Terminal and
//! logs"):
//!
//! - **Log level** from `-v`/`-q`: errors only with `-q`, warnings by
//!   default, `-v` info, `-vv` debug, `-vvv` trace. A non-empty `RUST_LOG`
//!   (or the binary's own variable, checked first) overrides the flags
//!   with a full `tracing` filter.
//! - **Colour** only when stderr is a terminal and `NO_COLOR` is unset or
//!   empty (<https://no-color.org>).
//! - **Progress**: on a terminal a live display (items done/total, bytes,
//!   rate, ETA); elsewhere one plain line per finished item; nothing with
//!   `-q`. Log lines written while the display is up appear above it.
//! - **Man pages** from the `clap` definition ([`man::write_pages`]).
//! - **Exit status**: one [`ExitStatus`] for every command (0 ok, 1 bad
//!   input or release, 2 usage).
//!
//! ```no_run
//! use cli_output::{Console, Verbosity};
//!
//! let console = Console::detect(Verbosity { verbose: 0, quiet: false });
//! console.init_logging(&[]);
//! let progress = console.progress("packages", 2, Some(4096));
//! progress.item_done("a.whl", 1024, 2048);
//! progress.item_done("b.whl", 1024, 2048);
//! progress.finish();
//! ```
#![allow(clippy::print_stderr)] // this crate is the binaries' stderr

mod exit;
pub mod man;

pub use exit::ExitStatus;

use std::io::{self, IsTerminal, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use indicatif::{HumanBytes, ProgressBar, ProgressDrawTarget, ProgressStyle};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;

/// The environment variable that overrides `-v`/`-q` in both binaries.
pub const RUST_LOG: &str = "RUST_LOG";

/// The `-v`/`-q` flags as given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Verbosity {
    /// How many `-v`.
    pub verbose: u8,
    /// `-q`: only errors.
    pub quiet: bool,
}

impl Verbosity {
    /// The `tracing` level directive the flags ask for.
    pub fn level(self) -> &'static str {
        match (self.quiet, self.verbose) {
            (true, _) => "error",
            (false, 0) => "warn",
            (false, 1) => "info",
            (false, 2) => "debug",
            (false, _) => "trace",
        }
    }
}

/// What stderr is and what the user asked for; decides every output choice.
#[derive(Debug, Clone)]
pub struct Console {
    verbosity: Verbosity,
    terminal: bool,
    colour: bool,
    /// The live display, while one is up (log lines are written above it).
    active: Arc<Mutex<Option<ProgressBar>>>,
}

impl Console {
    /// Looks at stderr and `NO_COLOR`.
    pub fn detect(verbosity: Verbosity) -> Self {
        let terminal = io::stderr().is_terminal();
        let no_colour = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self::new(verbosity, terminal, terminal && !no_colour)
    }

    /// A console with the facts given (for tests and callers that know).
    pub fn new(verbosity: Verbosity, terminal: bool, colour: bool) -> Self {
        Self {
            verbosity,
            terminal,
            colour,
            active: Arc::default(),
        }
    }

    /// Whether `-q` was given: print only errors.
    pub fn quiet(&self) -> bool {
        self.verbosity.quiet
    }

    /// Whether stderr is a terminal.
    pub fn is_terminal(&self) -> bool {
        self.terminal
    }

    /// Whether output may carry ANSI colour.
    pub fn colour(&self) -> bool {
        self.colour
    }

    /// The log filter: the first non-empty variable of `env_vars` and then
    /// `RUST_LOG`, else the level of `-v`/`-q`. A variable that does not
    /// parse is reported once and the flags decide.
    pub fn filter(&self, env_vars: &[&str]) -> (EnvFilter, Option<String>) {
        for var in env_vars.iter().chain(&[RUST_LOG]) {
            let Ok(value) = std::env::var(var) else {
                continue;
            };
            if value.trim().is_empty() {
                continue;
            }
            match EnvFilter::try_new(&value) {
                Ok(filter) => return (filter, None),
                Err(e) => {
                    return (
                        EnvFilter::new(self.verbosity.level()),
                        Some(format!("ignoring {var}={value}: {e}")),
                    );
                }
            }
        }
        (EnvFilter::new(self.verbosity.level()), None)
    }

    /// Installs the `tracing` subscriber: stderr, no timestamps, colour as
    /// [`Console::colour`] says, lines kept above a live display.
    pub fn init_logging(&self, env_vars: &[&str]) {
        let (filter, problem) = self.filter(env_vars);
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(AboveProgress {
                active: Arc::clone(&self.active),
            })
            .with_ansi(self.colour)
            .without_time()
            .with_target(false)
            .init();
        if let Some(problem) = problem {
            tracing::warn!("{problem}");
        }
    }

    /// A progress display over `items` things of `bytes` bytes in all
    /// (`None`: count items only). `noun` names the items (`packages`).
    pub fn progress(&self, noun: &'static str, items: u64, bytes: Option<u64>) -> Progress {
        let mode = if self.verbosity.quiet {
            Mode::Silent
        } else if self.terminal {
            let bar = ProgressBar::with_draw_target(
                Some(bytes.unwrap_or(items)),
                ProgressDrawTarget::stderr(),
            )
            .with_style(self.style(bytes.is_some()));
            bar.enable_steady_tick(Duration::from_millis(100));
            *self.active.lock().unwrap_or_else(PoisonError::into_inner) = Some(bar.clone());
            Mode::Live(bar)
        } else {
            Mode::Lines
        };
        Progress {
            mode,
            noun,
            items,
            done: Mutex::new(0),
            by_bytes: bytes.is_some(),
            active: Arc::clone(&self.active),
        }
    }

    fn style(&self, by_bytes: bool) -> ProgressStyle {
        let bar = if self.colour {
            "{spinner:.green} {bar:30.cyan/blue}"
        } else {
            "{spinner} {bar:30}"
        };
        let counts = if by_bytes {
            " {prefix} {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta} {wide_msg}"
        } else {
            " {prefix} {per_sec} ETA {eta} {wide_msg}"
        };
        ProgressStyle::with_template(&format!("{bar}{counts}"))
            .expect("the templates are valid")
            .progress_chars("=> ")
    }
}

enum Mode {
    Silent,
    Lines,
    Live(ProgressBar),
}

/// The progress of one long task; see [`Console::progress`].
pub struct Progress {
    mode: Mode,
    noun: &'static str,
    items: u64,
    done: Mutex<u64>,
    by_bytes: bool,
    active: Arc<Mutex<Option<ProgressBar>>>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("noun", &self.noun)
            .field("items", &self.items)
            .finish_non_exhaustive()
    }
}

impl Progress {
    /// `name` is being worked on now (shown on a terminal only).
    pub fn start(&self, name: &str) {
        if let Mode::Live(bar) = &self.mode {
            let done = *self.done.lock().unwrap_or_else(PoisonError::into_inner);
            bar.set_prefix(format!("{done}/{} {}", self.items, self.noun));
            bar.set_message(name.to_owned());
        }
    }

    /// One item is finished: `name` (what was written), its size `written`
    /// (printed), and the `input` bytes it accounts for (the display's
    /// position). Off a terminal this prints one line.
    pub fn item_done(&self, name: &str, written: u64, input: u64) {
        let done = {
            let mut done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
            *done += 1;
            *done
        };
        match &self.mode {
            Mode::Silent => {}
            Mode::Lines => {
                eprintln!("[{done}/{}] {name} ({})", self.items, HumanBytes(written));
            }
            Mode::Live(bar) => {
                bar.set_prefix(format!("{done}/{} {}", self.items, self.noun));
                bar.inc(if self.by_bytes { input } else { 1 });
            }
        }
    }

    /// Sets the position directly: `done` of `total` items (a task that
    /// counts by itself, such as an unpack). Prints nothing off a terminal.
    pub fn set_items(&self, done: u64, total: u64) {
        if let Mode::Live(bar) = &self.mode {
            if bar.length() != Some(total) {
                bar.set_length(total);
            }
            bar.set_prefix(format!("{done}/{total} {}", self.noun));
            bar.set_position(done);
        }
    }

    /// Removes the display (a terminal gets its line back).
    pub fn finish(self) {
        if let Mode::Live(bar) = &self.mode {
            bar.finish_and_clear();
            *self.active.lock().unwrap_or_else(PoisonError::into_inner) = None;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        // An error path drops the display without `finish`: clear it so the
        // error line starts on a clean line.
        if let Mode::Live(bar) = &self.mode {
            if !bar.is_finished() {
                bar.finish_and_clear();
            }
            *self.active.lock().unwrap_or_else(PoisonError::into_inner) = None;
        }
    }
}

/// The log writer: stderr, with the live display (if any) lifted while a
/// line is written.
#[derive(Debug, Clone)]
struct AboveProgress {
    active: Arc<Mutex<Option<ProgressBar>>>,
}

impl<'a> MakeWriter<'a> for AboveProgress {
    type Writer = Self;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

impl Write for AboveProgress {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let bar = self
            .active
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        match bar {
            Some(bar) => bar.suspend(|| io::stderr().write_all(buf))?,
            None => io::stderr().write_all(buf)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_choose_the_level() {
        let level = |verbose, quiet| Verbosity { verbose, quiet }.level();
        assert_eq!(level(0, false), "warn");
        assert_eq!(level(1, false), "info");
        assert_eq!(level(2, false), "debug");
        assert_eq!(level(5, false), "trace");
        assert_eq!(level(0, true), "error");
    }

    #[test]
    fn quiet_progress_and_lines_have_no_display() {
        let quiet = Console::new(
            Verbosity {
                verbose: 0,
                quiet: true,
            },
            true,
            true,
        );
        let progress = quiet.progress("packages", 1, Some(1));
        assert!(matches!(progress.mode, Mode::Silent));
        progress.finish();
        let pipe = Console::new(Verbosity::default(), false, false);
        let progress = pipe.progress("packages", 1, None);
        assert!(matches!(progress.mode, Mode::Lines));
        assert!(pipe.active.lock().unwrap().is_none());
    }
}
