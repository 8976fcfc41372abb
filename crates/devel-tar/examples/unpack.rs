//! `unpack SITE_PACKAGES [--kill-at N]`: unpacks the devel tree and
//! reconciles device links, as `rocm-sdk init` does. The tests run it as
//! separate processes; `--kill-at N` aborts the process at the N-th unpack
//! step (a crash at a precise point).

#![allow(clippy::print_stderr)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use devel_tar::{Error, Step, UnpackOptions, UnpackProgress};

/// Aborts the process at the `kill_at`-th step.
#[derive(Debug)]
struct KillAt {
    kill_at: Option<usize>,
    steps: AtomicUsize,
}

impl UnpackProgress for KillAt {
    fn step(&self, _: &Step) {
        let steps = self.steps.fetch_add(1, Ordering::Relaxed) + 1;
        if Some(steps) == self.kill_at {
            std::process::abort();
        }
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(sp) = args.next().map(PathBuf::from) else {
        eprintln!("usage: unpack SITE_PACKAGES [--kill-at N]");
        return ExitCode::from(2);
    };
    let kill_at: Option<usize> = match (args.next().as_deref(), args.next()) {
        (Some("--kill-at"), Some(n)) => n.parse().ok(),
        _ => None,
    };
    let options = UnpackOptions {
        progress: Some(Arc::new(KillAt {
            kill_at,
            steps: AtomicUsize::new(0),
        })),
        ..UnpackOptions::default()
    };
    let result =
        devel_tar::unpack(&sp, &options).and_then(|_| devel_tar::reconcile_device_links(&sp));
    match result {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(match e {
                Error::ReadOnly { .. } => 3,
                _ => 1,
            })
        }
    }
}
