//! Member paths: the writers apply the rule every reader of a package
//! applies (`pypa_formats::member::check_relpath`), so nothing is written that
//! `verify`, an installer or the devel unpack would refuse.

use crate::Error;

/// Checks that `path` can be stored and unpacked safely: a clean relative
/// path (`/` separators, no empty, `.` or `..` segment, no drive, backslash
/// or control character).
pub(crate) fn validate_member_path(path: &str) -> Result<(), Error> {
    pypa_formats::member::check_relpath(path).map_err(|problem| Error::UnsafePath {
        path: path.to_owned(),
        problem,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_paths_are_refused() {
        assert!(validate_member_path("_rocm_sdk_core/lib/libamdhip64.so.7").is_ok());
        for bad in [
            "",
            "/etc/passwd",
            "a/../b",
            "a//b",
            "a/",
            "./a",
            "a\\b",
            "a\0",
            "a\nb",
            "C:/x",
        ] {
            assert!(
                matches!(validate_member_path(bad), Err(Error::UnsafePath { .. })),
                "{bad:?}"
            );
        }
    }
}
