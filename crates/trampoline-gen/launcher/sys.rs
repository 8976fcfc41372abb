//! The few Linux system calls the launcher needs, made directly (no libc).
//! The architecture-specific parts (entry point, syscall instruction and
//! numbers) live in one file per architecture.

#[cfg(target_arch = "x86_64")]
#[path = "linux_x86_64.rs"]
mod arch;

pub(crate) const ENOENT: isize = 2;
pub(crate) const ENOTDIR: isize = 20;
const EINTR: isize = 4;
const E2BIG: isize = 7;
const ENOEXEC: isize = 8;
const ENOMEM: isize = 12;
const EACCES: isize = 13;
const EISDIR: isize = 21;
const ETXTBSY: isize = 26;
const ENAMETOOLONG: isize = 36;
const ELOOP: isize = 40;

/// Reads the symlink at `path` (NUL-terminated) into `buf`; the length or
/// the errno.
pub(crate) fn readlink(path: &[u8], buf: &mut [u8]) -> Result<usize, isize> {
    let ret = arch::readlink(path.as_ptr(), buf.as_mut_ptr(), buf.len());
    usize::try_from(ret).map_err(|_| -ret)
}

/// Replaces the process with `path` (NUL-terminated); returns only on
/// failure, with the errno.
pub(crate) fn execve(path: &[u8], argv: *const *const u8, envp: *const *const u8) -> isize {
    -arch::execve(path.as_ptr(), argv, envp)
}

/// Whether anything exists at `path` (NUL-terminated).
pub(crate) fn exists(path: &[u8]) -> bool {
    arch::access_exists(path.as_ptr()) == 0
}

/// Writes all of `bytes` to `fd`, best effort (nothing to do on failure).
pub(crate) fn write_all(fd: i32, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        let ret = arch::write(fd, bytes.as_ptr(), bytes.len());
        match usize::try_from(ret) {
            Ok(0) => return,
            Ok(n) => bytes = &bytes[n..],
            Err(_) if -ret == EINTR => {}
            Err(_) => return,
        }
    }
}

pub(crate) fn exit(status: i32) -> ! {
    arch::exit_group(status)
}

/// A short description of an errno from `execve`.
pub(crate) fn describe(errno: isize) -> &'static [u8] {
    match errno {
        ENOENT => b"no such file or directory",
        ENOTDIR => b"a path component is not a directory",
        EACCES => b"permission denied (is the target executable?)",
        ENOEXEC => b"not an executable format (a script needs a #! line)",
        EISDIR => b"is a directory",
        E2BIG => b"argument list too long",
        ENOMEM => b"out of memory",
        ETXTBSY => b"text file busy",
        ENAMETOOLONG => b"path too long",
        ELOOP => b"too many levels of symbolic links",
        _ => b"execve failed",
    }
}
