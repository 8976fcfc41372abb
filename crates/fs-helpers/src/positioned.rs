//! Reads and writes at an offset without moving a shared file cursor, so
//! several readers (threads, or a reader and a writer) can share one open
//! file.

use std::fs::File;
use std::io;

/// Reads from `file` at `offset` into `buf` (retried when interrupted);
/// returns how many bytes were read, 0 at the end of the file.
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    loop {
        match read_once_at(file, buf, offset) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

#[cfg(unix)]
fn read_once_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

/// Windows' positioned calls move the file cursor (unlike `pread`), and a
/// file may be written sequentially through the same handle it is patched
/// and read back through (a wheel), so the cursor is put back where it
/// was.
#[cfg(windows)]
fn read_once_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    keeping_cursor(file, |file| {
        std::os::windows::fs::FileExt::seek_read(file, buf, offset)
    })
}

#[cfg(windows)]
fn keeping_cursor<T>(file: &File, op: impl FnOnce(&File) -> io::Result<T>) -> io::Result<T> {
    use std::io::{Seek, SeekFrom};
    let mut handle = file;
    let cursor = handle.stream_position()?;
    let result = op(file);
    handle.seek(SeekFrom::Start(cursor))?;
    result
}

/// Writes all of `buf` into `file` at `offset`.
#[cfg(unix)]
pub fn write_all_at(file: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
}

/// Writes all of `buf` into `file` at `offset`.
#[cfg(windows)]
pub fn write_all_at(file: &File, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
    keeping_cursor(file, |file| {
        while !buf.is_empty() {
            let n = std::os::windows::fs::FileExt::seek_write(file, buf, offset)?;
            buf = &buf[n..];
            offset += n as u64;
        }
        Ok(())
    })
}

/// Fills `buf` from `offset`, failing on a short file.
pub fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, offset)? {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}
