//! The native `rocm-sdk` each wheel platform gets: build.rs builds one per
//! platform whose Rust target is installed and embeds it. A wheel carries
//! the program of its own platform or the build refuses; a program of
//! another platform is never shipped (docs/pipeline.md, "The native
//! rocm-sdk").

use dist_info::requirement::Platform;

/// The program a wheel platform runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NativeProgram {
    /// The wheel platform.
    pub(crate) platform: Platform,
    /// The Rust target it is built for.
    pub(crate) target: &'static str,
    /// Where it goes inside the core wheel.
    pub(crate) wheel_path: &'static str,
    /// Its bytes, when this `therock-package` was built with that target.
    pub(crate) bytes: Option<&'static [u8]>,
}

/// Every platform's program, as this build embedded them.
pub(crate) const EMBEDDED: [NativeProgram; 2] = [
    NativeProgram {
        platform: Platform::Linux,
        target: "x86_64-unknown-linux-gnu",
        wheel_path: "{pure}/_bin/rocm-sdk",
        #[cfg(native_linux)]
        bytes: Some(include_bytes!(concat!(env!("OUT_DIR"), "/rocm-sdk"))),
        #[cfg(not(native_linux))]
        bytes: None,
    },
    NativeProgram {
        platform: Platform::Windows,
        target: "x86_64-pc-windows-gnu",
        wheel_path: "{pure}/_bin/rocm-sdk.exe",
        #[cfg(native_windows)]
        bytes: Some(include_bytes!(concat!(env!("OUT_DIR"), "/rocm-sdk.exe"))),
        #[cfg(not(native_windows))]
        bytes: None,
    },
];

/// Where the program of `platform` goes inside the core wheel.
pub(crate) fn wheel_path(programs: &[NativeProgram], platform: Platform) -> &'static str {
    programs
        .iter()
        .find(|p| p.platform == platform)
        .expect("every platform has a program entry")
        .wheel_path
}

/// The program for wheels tagged `platform_tag` (on `platform`), from
/// `programs`; refuses when it was not built into this tool.
pub(crate) fn program_for(
    programs: &[NativeProgram],
    platform: Platform,
    platform_tag: &str,
) -> anyhow::Result<(&'static str, &'static [u8])> {
    let program = programs
        .iter()
        .find(|p| p.platform == platform)
        .expect("every platform has a program entry");
    match program.bytes {
        Some(bytes) => Ok((program.wheel_path, bytes)),
        None => anyhow::bail!(
            "cannot build {platform_tag} wheels: this therock-package was built without the \
             rocm-sdk program for them (Rust target {target}), and a wheel never ships another \
             platform's program; install the target (rustup target add {target}){linker} and \
             rebuild therock-package",
            target = program.target,
            linker = if platform == Platform::Windows {
                " and the mingw-w64 linker (Debian gcc-mingw-w64-x86-64)"
            } else {
                ""
            },
        ),
    }
}

/// The embedded programs as a tool built without `platform`'s would have
/// them.
#[cfg(test)]
pub(crate) fn embedded_without(platform: Platform) -> Vec<NativeProgram> {
    EMBEDDED
        .iter()
        .map(|p| NativeProgram {
            bytes: p.bytes.filter(|_| p.platform != platform),
            ..*p
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{EMBEDDED, embedded_without, program_for};
    use dist_info::requirement::Platform;

    #[test]
    fn a_platform_without_its_program_is_refused_by_target_name() {
        let without_windows = embedded_without(Platform::Windows);
        let error = program_for(&without_windows, Platform::Windows, "win_amd64").unwrap_err();
        insta::assert_snapshot!(error.to_string());
    }

    #[test]
    fn each_platform_gets_its_own_program() {
        let (path, bytes) = program_for(&EMBEDDED, Platform::Linux, "linux_x86_64").unwrap();
        assert_eq!(path, "{pure}/_bin/rocm-sdk");
        assert_eq!(&bytes[..4], b"\x7fELF");
        let (path, bytes) = program_for(&EMBEDDED, Platform::Windows, "win_amd64").unwrap();
        assert_eq!(path, "{pure}/_bin/rocm-sdk.exe");
        assert_eq!(&bytes[..2], b"MZ");
    }
}
