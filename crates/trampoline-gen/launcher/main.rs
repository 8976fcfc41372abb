//! The launcher image: execs the target written into its slot, resolved
//! against the directory of its own real file (`/proc/self/exe`), with the
//! caller's `argv` (including `argv[0]`) and environment unchanged.
//!
//! Built by `build.rs` without `std` or libc so the image is a few KiB,
//! fully static and runs on any Linux kernel regardless of the host glibc.
//! `execve` replaces this process, so exit status and signals are the
//! target's own. Exit 127: the target (or its interpreter) is missing;
//! exit 126: it exists but cannot be executed.

#![no_std]
#![no_main]

mod slot_layout;
mod sys;

use slot_layout::{MAX_TARGET_LEN, SLOT_LEN, SLOT_MARKER};

/// The target slot; `trampoline-gen` overwrites the bytes after the marker.
#[used]
static TARGET_SLOT: [u8; SLOT_LEN] = empty_slot();

const fn empty_slot() -> [u8; SLOT_LEN] {
    let mut slot = [0u8; SLOT_LEN];
    let mut i = 0;
    while i < SLOT_MARKER.len() {
        slot[i] = SLOT_MARKER[i];
        i += 1;
    }
    slot
}

/// Longest path the kernel accepts, including the terminating NUL.
const PATH_MAX: usize = 4096;

const EXIT_NOT_FOUND: i32 = 127;
const EXIT_CANNOT_EXECUTE: i32 = 126;

/// A fixed-capacity byte buffer; overflow is truncation, never a fault.
struct Buf<const N: usize> {
    bytes: [u8; N],
    len: usize,
}

impl<const N: usize> Buf<N> {
    fn new() -> Self {
        Self {
            bytes: [0; N],
            len: 0,
        }
    }

    fn push(&mut self, byte: u8) -> bool {
        if self.len < N {
            self.bytes[self.len] = byte;
            self.len += 1;
            true
        } else {
            false
        }
    }

    fn extend(&mut self, bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| self.push(b))
    }

    /// Terminates with '\n', overwriting the last byte when full.
    fn end_line(&mut self) {
        if !self.push(b'\n') {
            self.bytes[N - 1] = b'\n';
        }
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// Called from the entry point with the initial stack pointer, which holds
/// `argc`, then `argv[..argc]`, NULL, then `envp`, NULL.
///
/// # Safety
/// `stack` must be the process's initial stack as the kernel laid it out.
#[unsafe(no_mangle)]
unsafe extern "C" fn launcher_main(stack: *const usize) -> ! {
    // SAFETY: the kernel's initial stack layout (System V ABI, "Process
    // Initialization"): argc, argv pointers, NULL, envp pointers, NULL.
    let (argv, envp) = unsafe {
        let argc = *stack;
        let argv = stack.add(1).cast::<*const u8>();
        (argv, argv.add(argc + 1))
    };
    sys::exit(run(argv, envp))
}

fn run(argv: *const *const u8, envp: *const *const u8) -> i32 {
    // Own real path: the kernel resolves symlinks, but a hard link is
    // reported under the name it was executed through.
    let mut exe = [0u8; PATH_MAX];
    let len = match sys::readlink(b"/proc/self/exe\0", &mut exe) {
        Ok(len) if len < exe.len() => len,
        Ok(_) => {
            return fail(
                b"cannot read /proc/self/exe: path too long",
                b"",
                EXIT_NOT_FOUND,
            );
        }
        Err(errno) => {
            return fail(
                b"cannot read /proc/self/exe: ",
                sys::describe(errno),
                EXIT_NOT_FOUND,
            );
        }
    };
    let dir_len = exe[..len]
        .iter()
        .rposition(|&b| b == b'/')
        .map_or(0, |i| i + 1);

    // Directory (with its trailing '/') + target + NUL.
    let mut path: Buf<{ PATH_MAX + SLOT_LEN }> = Buf::new();
    path.extend(&exe[..dir_len]);
    let target_start = path.len;
    let mut i = SLOT_MARKER.len();
    while i < SLOT_MARKER.len() + MAX_TARGET_LEN {
        // Volatile: the compiler must not fold the slot's build-time
        // contents (all NUL) into the code; the real bytes come later.
        // SAFETY: `i` is within the static slot.
        let byte = unsafe { core::ptr::read_volatile(TARGET_SLOT.as_ptr().add(i)) };
        if byte == 0 {
            break;
        }
        path.push(byte);
        i += 1;
    }
    if path.len == target_start {
        return fail(
            b"this launcher has no target written into it (make it with trampoline-gen)",
            b"",
            EXIT_NOT_FOUND,
        );
    }
    path.push(0);

    let errno = sys::execve(&path.bytes[..path.len], argv, envp);

    let resolved = &path.as_bytes()[..path.len - 1];
    let mut message: Buf<{ PATH_MAX + SLOT_LEN + 128 }> = Buf::new();
    message.extend(b"cannot execute ");
    message.extend(resolved);
    message.extend(b": ");
    let status = if errno == sys::ENOENT || errno == sys::ENOTDIR {
        if sys::exists(&path.bytes[..path.len]) {
            // execve says ENOENT for a present script whose #! interpreter
            // is missing; name that rather than "not found".
            message.extend(b"its interpreter (#! line) was not found");
        } else {
            message.extend(b"launcher target not found");
        }
        EXIT_NOT_FOUND
    } else {
        message.extend(sys::describe(errno));
        EXIT_CANNOT_EXECUTE
    };
    fail(message.as_bytes(), b"", status)
}

/// Writes one line `launcher: {what}{detail}` to stderr and returns `status`.
fn fail(what: &[u8], detail: &[u8], status: i32) -> i32 {
    let mut line: Buf<{ PATH_MAX + SLOT_LEN + 256 }> = Buf::new();
    line.extend(b"launcher: ");
    line.extend(what);
    line.extend(detail);
    line.end_line();
    sys::write_all(2, line.as_bytes());
    status
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    sys::exit(EXIT_CANNOT_EXECUTE)
}
