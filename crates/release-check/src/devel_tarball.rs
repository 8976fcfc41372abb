//! The devel tarball inside a `rocm-sdk-devel` wheel
//! (`rocm_sdk_devel/_devel.tar*`), read as a stream: what `rocm-sdk init`
//! unpacks into site-packages, so checks of installed paths and shipped
//! ELF files cover it too.

use std::io::{self, BufReader, Read};
use std::path::Path;

use devel_tar::{DIGEST_FILE, TarCodec, TarDigest};
use fs_helpers::error_chain::Chain;
use wheel_writer::WheelReader;

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
    let mut wheel =
        WheelReader::open(wheel).map_err(|e| io::Error::other(Chain(&e).to_string()))?;
    let stream = wheel
        .open_member(member)
        .map_err(|e| io::Error::other(Chain(&e).to_string()))?;
    read(&mut tar::Archive::new(
        codec.decoder(BufReader::new(stream))?,
    ))
}

/// Whether a wheel member is the devel tarball's digest file.
pub(crate) fn is_digest_file(member: &str) -> bool {
    member
        .rsplit_once('/')
        .is_some_and(|(_, name)| name == DIGEST_FILE)
}

/// What is wrong with the digest file `member` of the wheel at `wheel`
/// (docs/devel-tar.md#the-digest-file): `rocm-sdk init` checks the tarball
/// against it, so a wrong one would make every install refuse the tarball.
pub(crate) fn digest_problem(wheel: &mut WheelReader, member: &str) -> Option<String> {
    let problem = |what: String| {
        Some(format!(
            "member {member}: {what}; rebuild the wheel (rocm-sdk init would refuse the devel tarball)"
        ))
    };
    let bytes = match wheel.read_member(member, 4096) {
        Ok(bytes) => bytes,
        Err(e) => return problem(format!("cannot be read ({})", Chain(&e))),
    };
    let described = match TarDigest::parse(&bytes) {
        Ok(described) => described,
        Err(e) => return problem(format!("is not a digest file ({e})")),
    };
    // `rocm-sdk init` checks only the tar it unpacks against it.
    if TarCodec::from_file_name(&described.tar_name).is_none() {
        return problem(format!(
            "it describes {}, which is not a devel tarball's name",
            described.tar_name
        ));
    }
    let dir = member.rsplit_once('/').map_or("", |(dir, _)| dir);
    let tar = format!("{dir}/{}", described.tar_name);
    let actual = match wheel.open_member(&tar) {
        Ok(stream) => TarDigest::of_reader(&described.tar_name, stream),
        Err(_) => return problem(format!("it describes {tar}, which the wheel does not hold")),
    };
    match actual {
        Ok(actual) if actual == described => None,
        Ok(actual) => problem(format!(
            "{tar} is {} bytes with blake3 {}, the digest file lists {} bytes with blake3 {}",
            actual.size,
            actual.blake3_hex(),
            described.size,
            described.blake3_hex(),
        )),
        Err(e) => problem(format!("{tar} cannot be read ({e})")),
    }
}

/// A member's path as a clean site-packages path (no `./`, no trailing `/`).
pub(crate) fn clean_path(raw: &[u8]) -> String {
    let raw = String::from_utf8_lossy(raw);
    let name = raw.strip_prefix("./").unwrap_or(&raw);
    name.strip_suffix('/').unwrap_or(name).to_owned()
}
