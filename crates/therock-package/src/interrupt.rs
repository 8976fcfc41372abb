//! SIGINT and SIGTERM during `build` or `assemble`
//! (docs/pipeline.md, "Interrupted builds"): the signal is taken by a
//! thread of its own, which removes the running build's staging
//! directory, says so, and ends the process by the same signal, so the
//! exit status still says it was interrupted (130 for SIGINT, 143 for
//! SIGTERM in a shell). A process ended by a signal runs no destructor:
//! without this its staging directory would stay until the next build
//! into the same directory.

use pipeline::StagingCleanup;

/// The signals that end a build early.
#[cfg(unix)]
const SIGNALS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

/// Takes SIGINT and SIGTERM for the rest of the process: call it before
/// any other thread starts (every thread made later inherits the blocked
/// signals, so only the handler's thread receives them).
#[cfg(unix)]
#[allow(unsafe_code)]
pub(crate) fn remove_staging_on_signal(cleanup: StagingCleanup) {
    // SAFETY: the set is initialised by sigemptyset before use; the calls
    // only read and write it and the calling thread's signal mask.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&raw mut set);
        for signal in SIGNALS {
            libc::sigaddset(&raw mut set, signal);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &raw const set, std::ptr::null_mut()) != 0 {
            return;
        }
        set
    };
    let spawned = std::thread::Builder::new()
        .name("signals".to_owned())
        .spawn(move || {
            let mut signal: libc::c_int = 0;
            // SAFETY: `set` holds the blocked signals; sigwait writes the
            // one taken into `signal`.
            if unsafe { libc::sigwait(&raw const set, &raw mut signal) } != 0 {
                return;
            }
            for dir in cleanup.remove_now() {
                eprintln!(
                    "therock-package: interrupted: removed the staging directory {}",
                    cli_output::escaped(&dir.display().to_string())
                );
            }
            // SAFETY: restores the default action of the signal taken,
            // unblocks it in this thread and raises it there: the process
            // ends by it.
            unsafe {
                libc::signal(signal, libc::SIG_DFL);
                let mut one: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&raw mut one);
                libc::sigaddset(&raw mut one, signal);
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &raw const one, std::ptr::null_mut());
                libc::raise(signal);
            }
        });
    if spawned.is_err() {
        // No thread to take the signals: let them end the process as before.
        // SAFETY: unblocks the signals blocked above in this thread.
        unsafe {
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &raw const set, std::ptr::null_mut());
        }
    }
}

/// Elsewhere a signal ends the process as it always does.
#[cfg(not(unix))]
pub(crate) fn remove_staging_on_signal(_: StagingCleanup) {}
