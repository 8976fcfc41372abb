//! `unpack SITE_PACKAGES [--kill-at N]`: unpacks the devel tree and
//! reconciles device links, as `rocm-sdk init` does. The tests run it as
//! separate processes; `--kill-at N` aborts the process at the N-th unpack
//! step (a crash at a precise point).

#![allow(clippy::print_stderr)]

use std::path::PathBuf;
use std::process::ExitCode;

use devel_tar::{Error, Step, UnpackOptions};

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
    let mut steps = 0usize;
    let mut on_step = |_: &Step| {
        steps += 1;
        if Some(steps) == kill_at {
            std::process::abort();
        }
    };
    let mut options = UnpackOptions {
        on_step: Some(&mut on_step),
        ..UnpackOptions::default()
    };
    let result =
        devel_tar::unpack(&sp, &mut options).and_then(|_| devel_tar::reconcile_device_links(&sp));
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
