//! Linux x86_64: process entry, raw system calls and the memory builtins
//! that a freestanding image must provide itself.

use core::arch::{asm, global_asm};

// The kernel starts us with `rsp` pointing at argc (16-byte aligned).
// Hand that pointer to Rust with the stack aligned as the ABI expects.
global_asm!(
    ".globl _start",
    ".type _start,@function",
    "_start:",
    "xor ebp, ebp",
    "mov rdi, rsp",
    "and rsp, -16",
    "call launcher_main",
    "ud2",
);

const SYS_WRITE: usize = 1;
const SYS_ACCESS: usize = 21;
const SYS_EXECVE: usize = 59;
const SYS_READLINK: usize = 89;
const SYS_EXIT_GROUP: usize = 231;
const F_OK: usize = 0;

/// # Safety
/// The arguments must be valid for system call `nr`.
unsafe fn syscall3(nr: usize, a: usize, b: usize, c: usize) -> isize {
    let ret: isize;
    // SAFETY: the caller upholds the system call's contract; `syscall`
    // clobbers rcx and r11 only.
    unsafe {
        asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a,
            in("rsi") b,
            in("rdx") c,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

pub(super) fn readlink(path: *const u8, buf: *mut u8, len: usize) -> isize {
    // SAFETY: `path` is NUL-terminated and `buf` holds `len` bytes (callers
    // pass slices).
    unsafe { syscall3(SYS_READLINK, path as usize, buf as usize, len) }
}

pub(super) fn execve(path: *const u8, argv: *const *const u8, envp: *const *const u8) -> isize {
    // SAFETY: `path` is NUL-terminated; argv and envp are the kernel's own
    // NULL-terminated arrays from the initial stack.
    unsafe { syscall3(SYS_EXECVE, path as usize, argv as usize, envp as usize) }
}

pub(super) fn access_exists(path: *const u8) -> isize {
    // SAFETY: `path` is NUL-terminated.
    unsafe { syscall3(SYS_ACCESS, path as usize, F_OK, 0) }
}

pub(super) fn write(fd: i32, buf: *const u8, len: usize) -> isize {
    // SAFETY: `buf` holds `len` bytes.
    unsafe { syscall3(SYS_WRITE, fd as usize, buf as usize, len) }
}

pub(super) fn exit_group(status: i32) -> ! {
    // SAFETY: exit_group takes an integer and does not return.
    unsafe {
        asm!("syscall", in("rax") SYS_EXIT_GROUP, in("rdi") status as usize, options(noreturn, nostack));
    }
}

// The compiler emits calls to these for array copies and fills; without a
// libc nobody else provides them. `rep movsb`/`rep stosb` rather than
// loops, which the optimiser would turn back into calls to themselves.

/// # Safety
/// As C `memcpy`.
#[unsafe(no_mangle)]
unsafe extern "C" fn memcpy(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    // SAFETY: as C memcpy; the direction flag is clear per the ABI.
    unsafe {
        asm!("rep movsb", inout("rcx") n => _, inout("rdi") dest => _, inout("rsi") src => _, options(nostack, preserves_flags));
    }
    dest
}

/// # Safety
/// As C `memmove`.
#[unsafe(no_mangle)]
unsafe extern "C" fn memmove(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    if (dest as usize).wrapping_sub(src as usize) >= n {
        // Forward copy is safe: dest is before src or beyond its end.
        // SAFETY: as C memmove.
        unsafe { memcpy(dest, src, n) }
    } else {
        // SAFETY: as C memmove; copy backwards from the last byte, then
        // restore the direction flag the ABI requires clear.
        unsafe {
            asm!(
                "std",
                "rep movsb",
                "cld",
                inout("rcx") n => _,
                inout("rdi") dest.add(n - 1) => _,
                inout("rsi") src.add(n - 1) => _,
                options(nostack),
            );
        }
        dest
    }
}

/// # Safety
/// As C `memset`.
#[unsafe(no_mangle)]
unsafe extern "C" fn memset(dest: *mut u8, value: i32, n: usize) -> *mut u8 {
    // SAFETY: as C memset.
    unsafe {
        asm!("rep stosb", inout("rcx") n => _, inout("rdi") dest => _, in("al") value as u8, options(nostack, preserves_flags));
    }
    dest
}

/// # Safety
/// As C `memcmp`.
#[unsafe(no_mangle)]
unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    for i in 0..n {
        // SAFETY: both regions hold `n` bytes; volatile keeps the loop a
        // loop instead of a call to memcmp.
        let (x, y) = unsafe {
            (
                core::ptr::read_volatile(a.add(i)),
                core::ptr::read_volatile(b.add(i)),
            )
        };
        if x != y {
            return i32::from(x) - i32::from(y);
        }
    }
    0
}

/// # Safety
/// As C `bcmp`.
#[unsafe(no_mangle)]
unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: as memcmp.
    unsafe { memcmp(a, b, n) }
}
