//! Running a tool with a time limit and collecting its output.

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// What the console scripts read to skip `rocm-sdk init` before a tool
/// (`rocm_sdk_core/_cli.py`, docs/behaviour.md#warm-path).
const NO_INIT_VARIABLE: &str = "ROCM_SDK_NO_INIT";

/// Runs `command` (stdin closed) and waits at most `timeout`; a program
/// still running then is killed and reported.
pub(crate) fn run(command: &mut Command, timeout: Duration) -> Result<Output, String> {
    let mut child = command
        // A console script would run `rocm-sdk init` first when the links
        // stamp is stale, mending separated links the self-test reports.
        .env(NO_INIT_VARIABLE, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!(
                "cannot start {}: {e}",
                command.get_program().to_string_lossy()
            )
        })?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < timeout => thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "did not finish within {} s and was killed",
                    timeout.as_secs()
                ));
            }
            Err(e) => return Err(format!("cannot wait for it: {e}")),
        }
    };
    Ok(Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

/// The first line of stderr (or stdout), for messages.
pub(crate) fn first_line(output: &Output) -> String {
    let text = if output.stderr.is_empty() {
        &output.stdout
    } else {
        &output.stderr
    };
    String::from_utf8_lossy(text)
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_and_status_are_collected() {
        let out = run(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(first_line(&out), "err");
    }

    #[test]
    fn a_hanging_program_is_killed() {
        let err = run(Command::new("sleep").arg("30"), Duration::from_millis(100)).unwrap_err();
        assert!(err.contains("killed"), "{err}");
    }
}
