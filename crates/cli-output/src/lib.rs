//! How `therock-package` and `rocm-sdk` talk to a person or to a log: the
//! binaries' terminal helper, and the one library that reads the
//! environment (`NO_COLOR`, `RUST_LOG` and the binary's own log variable)
//! and the terminal, for them; the other libraries read neither
//! (docs/using-the-crates.md, "One convention").
//!
//! One set of conventions for both binaries (docs/ci.md, "Terminal and
//! logs"):
//!
//! - **Log level** from `-v`/`-q`: errors only with `-q`, warnings by
//!   default, `-v` info, `-vv` debug, `-vvv` trace. A non-empty `RUST_LOG`
//!   (or the binary's own variable, checked first) overrides the flags
//!   with a `tracing` target filter.
//! - **Colour** only when stderr is a terminal and `NO_COLOR` is unset or
//!   empty (<https://no-color.org>).
//! - **Progress**: on a terminal a live display (items done/total, bytes
//!   credited as they are written through a [`ByteCounter`], rate, and an
//!   ETA once the rate means something); elsewhere one plain line per
//!   finished item; nothing with `-q`. Log lines written while the display
//!   is up appear above it.
//! - **Man pages** from the `clap` definition (`man::write_pages`; the
//!   `clap` feature, on by default, which a library that only shows
//!   progress leaves off).
//! - **Exit status**: one [`ExitStatus`] for every command (0 ok, 1 bad
//!   input or release, 2 usage).
//! - **Control characters** are escaped in every error and log message
//!   ([`escaped`]; a report of several lines keeps its line breaks,
//!   [`escaped_lines`]).
//! - **JSON documents**: every `--json` of both binaries is a library's
//!   report serialised by [`json`] (pretty, one final newline;
//!   docs/formats.md).
//!
//! ```no_run
//! use cli_output::{Console, Verbosity};
//!
//! let console = Console::detect(Verbosity { verbose: 0, quiet: false });
//! console.init_logging(&[]);
//! let progress = console.progress("packages", 2, Some(4096));
//! let bytes = progress.counter(); // cloned into the writer's threads
//! progress.start("a.whl");
//! bytes.add(2048); // a.whl's input, as it is read
//! bytes.add(1024); // b.whl's, read at the same time
//! progress.item_done("a.whl", 1024);
//! progress.start("b.whl");
//! bytes.add(1024);
//! progress.item_done("b.whl", 1024);
//! progress.finish();
//! ```
#![allow(clippy::print_stderr)] // this crate is the binaries' stderr

mod escape;
mod exit;
#[cfg(feature = "clap")]
pub mod man;

pub use escape::{escaped, escaped_lines};
pub use exit::ExitStatus;

use std::io::{self, IsTerminal, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use indicatif::{
    HumanBytes, HumanDuration, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle,
};
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

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
    /// The `tracing` level the flags ask for.
    pub fn level(self) -> tracing::Level {
        match (self.quiet, self.verbose) {
            (true, _) => tracing::Level::ERROR,
            (false, 0) => tracing::Level::WARN,
            (false, 1) => tracing::Level::INFO,
            (false, 2) => tracing::Level::DEBUG,
            (false, _) => tracing::Level::TRACE,
        }
    }
}

/// `command` without its hidden subcommands (such as `generate-man`), for
/// completion scripts: clap's generators offer every subcommand, hidden or
/// not, and clap cannot remove one, so the command is rebuilt (`name` and
/// `version` are the program's, which clap keeps only as borrowed text).
#[cfg(feature = "clap")]
pub fn without_hidden_commands(
    command: &clap::Command,
    name: &'static str,
    version: &'static str,
) -> clap::Command {
    let mut out = clap::Command::new(name)
        .args(command.get_arguments().cloned())
        .subcommands(
            command
                .get_subcommands()
                .filter(|s| !s.is_hide_set())
                .cloned(),
        );
    if let Some(about) = command.get_about() {
        out = out.about(about.clone());
    }
    if command.get_version().is_some() {
        out = out.version(version);
    }
    if command.is_disable_version_flag_set() {
        out = out.disable_version_flag(true);
    }
    out
}

/// The `--json` document of a report: pretty, keys in the report's field
/// order, one final newline (docs/formats.md).
///
/// ```
/// #[derive(serde::Serialize)]
/// struct Report { schema: u32, ok: bool }
///
/// assert_eq!(
///     cli_output::json(&Report { schema: 1, ok: true }),
///     "{\n  \"schema\": 1,\n  \"ok\": true\n}\n"
/// );
/// ```
pub fn json<T: serde::Serialize + ?Sized>(report: &T) -> String {
    let mut out = serde_json::to_string_pretty(report).expect("reports serialise to JSON");
    out.push('\n');
    out
}

/// See [`Console::stdout_style`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StdoutStyle {
    /// ANSI colour is welcome.
    pub colour: bool,
    /// The terminal's width in columns.
    pub width: Option<usize>,
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

    /// How a report printed on stdout may look: colour and the width to
    /// wrap at only when stdout is a terminal (and colour only without
    /// `NO_COLOR`); a pipe or a file gets plain, unwrapped lines.
    pub fn stdout_style(&self) -> StdoutStyle {
        let term = console::Term::stdout();
        if !term.is_term() {
            return StdoutStyle::default();
        }
        let no_colour = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        StdoutStyle {
            colour: !no_colour,
            width: term.size_checked().map(|(_, columns)| usize::from(columns)),
        }
    }

    /// The log filter: the first non-empty variable of `env_vars` and then
    /// `RUST_LOG`, else the level of `-v`/`-q`. A variable that does not
    /// parse is reported once and the flags decide.
    ///
    /// The syntax is `tracing`'s target filter (`warn`,
    /// `pipeline=debug,info`): span and field directives would need a
    /// regular-expression engine in both binaries, for logs nobody asked
    /// to filter by span.
    pub fn filter(&self, env_vars: &[&str]) -> (Targets, Option<String>) {
        for var in env_vars.iter().chain(&[RUST_LOG]) {
            let Ok(value) = std::env::var(var) else {
                continue;
            };
            if value.trim().is_empty() {
                continue;
            }
            match value.parse::<Targets>() {
                Ok(filter) => return (filter, None),
                Err(e) => {
                    return (
                        self.verbosity_filter(),
                        Some(format!("ignoring {var}={value}: {e}")),
                    );
                }
            }
        }
        (self.verbosity_filter(), None)
    }

    /// Every target at the level of `-v`/`-q`.
    fn verbosity_filter(&self) -> Targets {
        Targets::new().with_default(self.verbosity.level())
    }

    /// Installs the `tracing` subscriber: stderr, no timestamps, colour as
    /// [`Console::colour`] says, lines kept above a live display.
    pub fn init_logging(&self, env_vars: &[&str]) {
        use tracing_subscriber::field::MakeExt as _;
        let (filter, problem) = self.filter(env_vars);
        tracing_subscriber::fmt()
            // The builder's own ceiling is INFO: the filter decides.
            .with_max_level(tracing::level_filters::LevelFilter::TRACE)
            // A message quotes names and versions from the input: its
            // control characters are escaped (other fields print with
            // `Debug`, which escapes them already).
            .fmt_fields(
                tracing_subscriber::fmt::format::debug_fn(|w, field, value| {
                    if field.name() == "message" {
                        write!(w, "{}", escaped(&format!("{value:?}")))
                    } else {
                        write!(w, "{}={value:?}", field.name())
                    }
                })
                .delimited(" "),
            )
            .with_writer(AboveProgress {
                active: Arc::clone(&self.active),
            })
            .with_ansi(self.colour)
            .without_time()
            .with_target(false)
            .finish()
            .with(filter)
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
            " {prefix} {bytes}/{total_bytes} {binary_bytes_per_sec}{eta_if_known} {wide_msg}"
        } else {
            " {prefix} {per_sec}{eta_if_known} {wide_msg}"
        };
        ProgressStyle::with_template(&format!("{bar}{counts}"))
            .expect("the templates are valid")
            .with_key("eta_if_known", eta_if_known)
            .progress_chars("=> ")
    }
}

/// ` ETA 12s` once an estimate means something: some work done, a second
/// of it measured; nothing before (an ETA of 0s at a rate of 0 says
/// nothing true).
fn eta_if_known(state: &ProgressState, out: &mut dyn std::fmt::Write) {
    if state.pos() > 0 && state.elapsed() >= Duration::from_secs(1) && state.per_sec() > 0.0 {
        let _ = write!(out, " ETA {}", HumanDuration(state.eta()));
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

/// Credits input bytes to the display as they are read (cloned into the
/// writer's threads; several items may be in progress at once). The
/// caller credits each item's input once in all, by the time the item is
/// done: the display only adds them up.
#[derive(Debug, Clone)]
pub struct ByteCounter {
    bar: Option<ProgressBar>,
}

impl ByteCounter {
    /// `bytes` more input bytes were read.
    pub fn add(&self, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(bytes);
        }
    }
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
    /// `name` is the item shown as being worked on now (on a terminal
    /// only).
    pub fn start(&self, name: &str) {
        if let Mode::Live(bar) = &self.mode {
            let done = *self.done.lock().unwrap_or_else(PoisonError::into_inner);
            bar.set_prefix(format!("{done}/{} {}", self.items, self.noun));
            bar.set_message(name.to_owned());
        }
    }

    /// The counter of the input bytes read; a no-op unless a live display
    /// counts bytes.
    pub fn counter(&self) -> ByteCounter {
        ByteCounter {
            bar: match &self.mode {
                Mode::Live(bar) if self.by_bytes => Some(bar.clone()),
                _ => None,
            },
        }
    }

    /// An item is finished: `name` (what was written) and its size
    /// `written` (printed). A display by bytes has had its input from the
    /// [`ByteCounter`]. Off a terminal this prints one line:
    /// `[done/items] size  name`.
    pub fn item_done(&self, name: &str, written: u64) {
        let done = {
            let mut done = self.done.lock().unwrap_or_else(PoisonError::into_inner);
            *done += 1;
            *done
        };
        match &self.mode {
            Mode::Silent => {}
            Mode::Lines => {
                eprintln!(
                    "[{done}/{}] {:>10}  {name}",
                    self.items,
                    HumanBytes(written).to_string()
                );
            }
            Mode::Live(bar) => {
                bar.set_prefix(format!("{done}/{} {}", self.items, self.noun));
                if !self.by_bytes {
                    bar.inc(1);
                }
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
        assert_eq!(level(0, false), tracing::Level::WARN);
        assert_eq!(level(1, false), tracing::Level::INFO);
        assert_eq!(level(2, false), tracing::Level::DEBUG);
        assert_eq!(level(5, false), tracing::Level::TRACE);
        assert_eq!(level(0, true), tracing::Level::ERROR);
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
