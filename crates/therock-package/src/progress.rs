//! The build's progress on the console: `pipeline` reports each package to
//! a [`BuildProgress`], and this one draws cli-output's display (a live
//! display on a terminal, one line per package elsewhere, nothing with
//! `-q`; docs/ci.md, "Terminal and logs").

use std::sync::{Mutex, OnceLock, PoisonError};

use cli_output::{ByteCounter, Console, Progress};
use pipeline::BuildProgress;

/// cli-output's progress display, driven by a build.
#[derive(Debug)]
pub(crate) struct ConsoleProgress {
    console: Console,
    /// The display, from `start` until `finish` or [`close`](Self::close).
    display: Mutex<Option<Progress>>,
    /// Its byte counter, read by the writer's threads without a lock.
    counter: OnceLock<ByteCounter>,
}

impl ConsoleProgress {
    pub(crate) fn new(console: &Console) -> Self {
        Self {
            console: console.clone(),
            display: Mutex::new(None),
            counter: OnceLock::new(),
        }
    }

    /// Removes the display if it is still up (a build that failed), so the
    /// next line starts clean.
    pub(crate) fn close(&self) {
        drop(self.lock().take());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Progress>> {
        self.display.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl BuildProgress for ConsoleProgress {
    fn start(&self, packages: u64, input_bytes: u64) {
        let display = self
            .console
            .progress("packages", packages, Some(input_bytes));
        let _ = self.counter.set(display.counter());
        *self.lock() = Some(display);
    }

    fn package_started(&self, name: &str, _input_bytes: u64) {
        if let Some(display) = self.lock().as_ref() {
            display.start(name);
        }
    }

    fn bytes_read(&self, bytes: u64) {
        if let Some(counter) = self.counter.get() {
            counter.add(bytes);
        }
    }

    fn package_written(&self, file: &str, size: u64) {
        if let Some(display) = self.lock().as_ref() {
            display.item_done(file, size);
        }
    }

    fn finish(&self) {
        if let Some(display) = self.lock().take() {
            display.finish();
        }
    }
}
