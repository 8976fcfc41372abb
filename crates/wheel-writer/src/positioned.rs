//! Reads and writes at an offset without moving a shared file cursor.

use std::fs::File;
use std::io;

#[cfg(unix)]
pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

/// Windows' positioned calls move the file cursor (unlike `pread`), and a
/// wheel is written sequentially through the same handle it patches and
/// reads back from, so the cursor is put back where it was.
#[cfg(windows)]
pub(crate) fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
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

#[cfg(unix)]
pub(crate) fn write_all_at(file: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
}

#[cfg(windows)]
pub(crate) fn write_all_at(file: &File, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
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
pub(crate) fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match read_at(file, buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
