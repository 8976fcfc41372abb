//! The devel tarball inside a `rocm-sdk-devel` wheel
//! (`rocm_sdk_devel/_devel.tar*`), read as a stream: what `rocm-sdk init`
//! unpacks into site-packages, so checks of installed paths and shipped
//! ELF files cover it too.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use devel_tar::TarCodec;

/// Whether a wheel member is the devel tarball (`rocm_sdk_devel/_devel.tar*`).
pub(crate) fn is_devel_tarball(member: &str) -> bool {
    codec_of(member).is_some()
}

fn codec_of(member: &str) -> Option<TarCodec> {
    member
        .rsplit_once('/')
        .and_then(|(_, name)| TarCodec::from_file_name(name))
}

/// Runs `read` over the plain tar stream of the devel tarball `member` of
/// the wheel at `wheel`, decoded while it is read.
pub(crate) fn with_archive<T>(
    wheel: &Path,
    member: &str,
    read: impl FnOnce(&mut tar::Archive<Box<dyn Read + Send + '_>>) -> io::Result<T>,
) -> io::Result<T> {
    let codec = codec_of(member).ok_or_else(|| io::Error::other("not a devel tarball name"))?;
    let mut zip =
        zip::ZipArchive::new(BufReader::new(File::open(wheel)?)).map_err(io::Error::other)?;
    let stream = zip.by_name(member).map_err(io::Error::other)?;
    read(&mut tar::Archive::new(
        codec.decoder(BufReader::new(stream))?,
    ))
}

/// A member's path as a clean site-packages path (no `./`, no trailing `/`).
pub(crate) fn clean_path(raw: &[u8]) -> String {
    let raw = String::from_utf8_lossy(raw);
    let name = raw.strip_prefix("./").unwrap_or(&raw);
    name.strip_suffix('/').unwrap_or(name).to_owned()
}
