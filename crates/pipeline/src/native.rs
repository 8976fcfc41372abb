//! The native `rocm-sdk` each wheel platform gets. This library builds
//! none: its caller supplies them ([`NativePrograms`]), as bytes it carries
//! (`therock-package` embeds the programs its build script built) or as
//! files named at run time. Every program is checked by its header before
//! a wheel carries it; a wheel carries the program of its own platform or
//! the build refuses, and a program of another platform is never shipped
//! (docs/pipeline.md, "The native rocm-sdk").

use std::borrow::Cow;
use std::fmt;
use std::io::{Cursor, Read as _};
use std::path::{Path, PathBuf};

use dist_info::requirement::Platform;
use elf_surgery::{ElfClass, ElfFile, ElfKind};

/// The newest glibc a Linux program in a wheel may need: the
/// manylinux_2_28 floor (docs/behaviour.md#native-binaries).
const GLIBC_FLOOR: (u32, u32) = (2, 28);
/// Far more than any `rocm-sdk`; a larger file is not one.
const MAX_PROGRAM_BYTES: u64 = 256 << 20;
/// `EM_X86_64`.
const ELF_X86_64: u16 = 62;
/// `IMAGE_FILE_MACHINE_AMD64`.
const PE_AMD64: u16 = 0x8664;

/// What a wheel platform's program must be, and where it goes.
#[derive(Debug, Clone, Copy)]
struct Slot {
    platform: Platform,
    /// The Rust target it is built for.
    target: &'static str,
    /// Where it goes inside the core wheel.
    wheel_path: &'static str,
}

const SLOTS: [Slot; 2] = [
    Slot {
        platform: Platform::Linux,
        target: "x86_64-unknown-linux-gnu",
        wheel_path: "{pure}/_bin/rocm-sdk",
    },
    Slot {
        platform: Platform::Windows,
        target: "x86_64-pc-windows-gnu",
        wheel_path: "{pure}/_bin/rocm-sdk.exe",
    },
];

fn slot(platform: Platform) -> Slot {
    *SLOTS
        .iter()
        .find(|s| s.platform == platform)
        .expect("every platform has a slot")
}

/// The Rust target the `rocm-sdk` of `platform` is built for
/// (`x86_64-unknown-linux-gnu`, `x86_64-pc-windows-gnu`).
pub fn native_target(platform: Platform) -> &'static str {
    slot(platform).target
}

/// Where one platform's program comes from.
#[derive(Clone)]
enum Source {
    /// Bytes the caller holds; `origin` names them in errors.
    Bytes {
        origin: String,
        bytes: Cow<'static, [u8]>,
    },
    /// A file, read and checked when a plan needs it.
    File(PathBuf),
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bytes { origin, bytes } => f
                .debug_struct("Bytes")
                .field("origin", origin)
                .field("len", &bytes.len())
                .finish(),
            Self::File(path) => f.debug_tuple("File").field(path).finish(),
        }
    }
}

/// The native `rocm-sdk` programs a build may put into core wheels, at
/// most one per platform; a later one for the same platform replaces the
/// earlier one.
///
/// ```no_run
/// use dist_info::requirement::Platform;
/// use pipeline::NativePrograms;
///
/// let programs = NativePrograms::new()
///     .with_file(Platform::Linux, "target/x86_64-unknown-linux-gnu/release/rocm-sdk")
///     .with_file(Platform::Windows, "target/x86_64-pc-windows-gnu/release/rocm-sdk.exe");
/// ```
#[derive(Debug, Clone, Default)]
pub struct NativePrograms {
    linux: Option<Source>,
    windows: Option<Source>,
}

impl NativePrograms {
    /// No program for any platform: a build refuses every platform, a plain
    /// plan lists the program without bytes.
    pub fn new() -> Self {
        Self::default()
    }

    /// The program of `platform` is `bytes`, which errors call `origin`
    /// ("the rocm-sdk built into this therock-package").
    #[must_use]
    pub fn with_bytes(
        mut self,
        platform: Platform,
        origin: impl Into<String>,
        bytes: impl Into<Cow<'static, [u8]>>,
    ) -> Self {
        *self.slot_mut(platform) = Some(Source::Bytes {
            origin: origin.into(),
            bytes: bytes.into(),
        });
        self
    }

    /// The program of `platform` is the file at `path`, read and checked
    /// when a plan needs it.
    #[must_use]
    pub fn with_file(mut self, platform: Platform, path: impl Into<PathBuf>) -> Self {
        *self.slot_mut(platform) = Some(Source::File(path.into()));
        self
    }

    /// Whether a program of `platform` was supplied (unchecked).
    pub fn has(&self, platform: Platform) -> bool {
        self.source(platform).is_some()
    }

    fn slot_mut(&mut self, platform: Platform) -> &mut Option<Source> {
        match platform {
            Platform::Linux => &mut self.linux,
            Platform::Windows => &mut self.windows,
        }
    }

    fn source(&self, platform: Platform) -> Option<&Source> {
        match platform {
            Platform::Linux => self.linux.as_ref(),
            Platform::Windows => self.windows.as_ref(),
        }
    }

    /// The program for wheels tagged `platform_tag` (on `platform`):
    /// where it goes in the core wheel and its bytes, checked by
    /// [`check_program`]. `Ok(None)` when none was supplied.
    pub(crate) fn program_for(
        &self,
        platform: Platform,
        platform_tag: &str,
    ) -> Result<Option<WheelProgram>, NativeProgramError> {
        let slot = slot(platform);
        let Some(source) = self.source(platform) else {
            return Ok(None);
        };
        let (origin, bytes) = match source {
            Source::Bytes { origin, bytes } => (origin.clone(), bytes.clone()),
            Source::File(path) => (
                format!("the rocm-sdk program {}", path.display()),
                Cow::Owned(read_program(path)?),
            ),
        };
        check_program(platform, platform_tag, &origin, &bytes)?;
        Ok(Some((slot.wheel_path, bytes)))
    }
}

/// A checked program: where it goes inside the core wheel, and its bytes.
pub(crate) type WheelProgram = (&'static str, Cow<'static, [u8]>);

/// Where the program of `platform` goes inside the core wheel.
pub(crate) fn wheel_path(platform: Platform) -> &'static str {
    slot(platform).wheel_path
}

/// Why a native program cannot go into a wheel.
#[derive(Debug, thiserror::Error)]
pub enum NativeProgramError {
    /// No program was supplied for the platform.
    #[error(
        "cannot build {platform_tag} wheels: no rocm-sdk program was supplied for them (Rust \
         target {target}), and a wheel never ships another platform's program; supply one \
         built for {target}"
    )]
    Missing {
        /// The wheel platform tag.
        platform_tag: String,
        /// The Rust target of the missing program.
        target: &'static str,
        /// The platform whose program is missing.
        platform: Platform,
    },
    /// A named file cannot be read, or is not a regular file.
    #[error("cannot read the rocm-sdk program {}: {problem}; name the program file", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong (said here, so it is no source as well).
        problem: ReadProblem,
    },
    /// The program is of another format or machine, or no executable.
    #[error(
        "{origin} is {found}, but {platform_tag} wheels need {expected} (Rust target {target}); \
         name the rocm-sdk built for {target}"
    )]
    WrongKind {
        /// The file (or bytes) named.
        origin: String,
        /// The wheel platform tag.
        platform_tag: String,
        /// What the bytes are.
        found: Found,
        /// What they must be.
        expected: &'static str,
        /// The Rust target of the right program.
        target: &'static str,
    },
    /// A dynamically linked Linux program needs a newer glibc than wheels
    /// allow.
    #[error(
        "{origin} needs {version} from {library}, newer than the glibc {}.{} Linux wheels' \
         programs may need (docs/behaviour.md#native-binaries); link it statically \
         (RUSTFLAGS=\"-C target-feature=+crt-static\") or on an older system",
        GLIBC_FLOOR.0,
        GLIBC_FLOOR.1
    )]
    GlibcTooNew {
        /// The file (or bytes) named.
        origin: String,
        /// The library the version is needed from (`libc.so.6`).
        library: String,
        /// The version (`GLIBC_2.34`).
        version: String,
    },
}

impl NativeProgramError {
    /// The error for a platform nobody supplied a program for.
    pub(crate) fn missing(platform: Platform, platform_tag: &str) -> Self {
        Self::Missing {
            platform_tag: platform_tag.to_owned(),
            target: native_target(platform),
            platform,
        }
    }
}

/// Why a named program file cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadProblem {
    /// Opening or reading it failed.
    #[error(transparent)]
    Io(std::io::Error),
    /// It is a directory, a device, ...
    #[error("it is not a regular file")]
    NotAFile,
    /// It is larger than any program.
    #[error("it is larger than {} MiB, far more than any rocm-sdk", MAX_PROGRAM_BYTES >> 20)]
    TooLarge,
}

/// What a program's bytes turned out to be instead of the program a
/// platform's wheels need ([`NativeProgramError::WrongKind`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Found {
    /// A Windows program, for Linux wheels.
    #[error("a Windows (PE) program")]
    WindowsProgram,
    /// Bytes that start like ELF but do not parse.
    #[error("not a readable ELF file ({0})")]
    UnreadableElf(Box<elf_surgery::Error>),
    /// No ELF file at all, for Linux wheels.
    #[error("not an ELF file")]
    NotElf,
    /// An ELF file of another machine or class.
    #[error("an ELF file for {}", elf_machine_name(*machine, *class))]
    ElfForMachine {
        /// `e_machine`.
        machine: Option<u16>,
        /// 32 or 64 bits.
        class: Option<ElfClass>,
    },
    /// An ELF file that is no executable.
    #[error("an ELF file but no executable ({0:?})")]
    ElfNotExecutable(ElfKind),
    /// An ELF file whose symbol versions cannot be read.
    #[error("an ELF file whose symbol versions cannot be read ({0})")]
    UnreadableSymbolVersions(Box<elf_surgery::Error>),
    /// A Linux file, for Windows wheels.
    #[error("a Linux (ELF) file")]
    LinuxFile,
    /// No PE image at all, for Windows wheels.
    #[error("not a Windows (PE) program")]
    NotWindowsProgram,
    /// A PE image of another machine.
    #[error("a PE image for machine {0:#06x}")]
    PeForMachine(u16),
    /// A PE image that is no executable (a DLL, an object).
    #[error("a PE image but no executable")]
    PeNotExecutable,
}

/// Reads a named program: a regular file of bounded size.
fn read_program(path: &Path) -> Result<Vec<u8>, NativeProgramError> {
    let error = |problem: ReadProblem| NativeProgramError::Read {
        path: path.to_owned(),
        problem,
    };
    let file = std::fs::File::open(path).map_err(|e| error(ReadProblem::Io(e)))?;
    let meta = file.metadata().map_err(|e| error(ReadProblem::Io(e)))?;
    if !meta.is_file() {
        return Err(error(ReadProblem::NotAFile));
    }
    let mut bytes = Vec::new();
    file.take(MAX_PROGRAM_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| error(ReadProblem::Io(e)))?;
    if bytes.len() as u64 > MAX_PROGRAM_BYTES {
        return Err(error(ReadProblem::TooLarge));
    }
    Ok(bytes)
}

/// Checks that `bytes` (called `origin` in errors) can be the program of
/// `platform`'s wheels: an x86-64 executable of the platform's format, and
/// on Linux one that is static or needs no glibc newer than 2.28
/// (docs/behaviour.md#native-binaries).
pub fn check_program(
    platform: Platform,
    platform_tag: &str,
    origin: &str,
    bytes: &[u8],
) -> Result<(), NativeProgramError> {
    let target = native_target(platform);
    let wrong = |found: Found, expected: &'static str| NativeProgramError::WrongKind {
        origin: origin.to_owned(),
        platform_tag: platform_tag.to_owned(),
        found,
        expected,
        target,
    };
    match platform {
        Platform::Linux => {
            const EXPECTED: &str = "an x86-64 Linux (ELF) executable";
            if pe_header(bytes).is_some() {
                return Err(wrong(Found::WindowsProgram, EXPECTED));
            }
            let elf = ElfFile::parse(&mut Cursor::new(bytes))
                .map_err(|e| wrong(Found::UnreadableElf(Box::new(e)), EXPECTED))?;
            if elf.kind() == ElfKind::NotElf {
                return Err(wrong(Found::NotElf, EXPECTED));
            }
            if elf.class() != Some(ElfClass::Elf64) || elf.machine() != Some(ELF_X86_64) {
                return Err(wrong(
                    Found::ElfForMachine {
                        machine: elf.machine(),
                        class: elf.class(),
                    },
                    EXPECTED,
                ));
            }
            match elf.kind() {
                ElfKind::StaticExecutable => Ok(()),
                ElfKind::DynamicExecutable => check_glibc(&elf, bytes, origin, &wrong),
                other => Err(wrong(Found::ElfNotExecutable(other), EXPECTED)),
            }
        }
        Platform::Windows => {
            const EXPECTED: &str = "an x86-64 Windows (PE) executable";
            if bytes.starts_with(b"\x7fELF") {
                return Err(wrong(Found::LinuxFile, EXPECTED));
            }
            let Some(pe) = pe_header(bytes) else {
                return Err(wrong(Found::NotWindowsProgram, EXPECTED));
            };
            if pe.machine != PE_AMD64 {
                return Err(wrong(Found::PeForMachine(pe.machine), EXPECTED));
            }
            // IMAGE_FILE_EXECUTABLE_IMAGE set, IMAGE_FILE_DLL clear.
            if pe.characteristics & 0x0002 == 0 || pe.characteristics & 0x2000 != 0 {
                return Err(wrong(Found::PeNotExecutable, EXPECTED));
            }
            Ok(())
        }
    }
}

/// A dynamic Linux program: every `GLIBC_x.y` it needs must be at most the
/// floor.
fn check_glibc(
    elf: &ElfFile,
    bytes: &[u8],
    origin: &str,
    wrong: &dyn Fn(Found, &'static str) -> NativeProgramError,
) -> Result<(), NativeProgramError> {
    let imports = elf.read_imports(&mut Cursor::new(bytes)).map_err(|e| {
        wrong(
            Found::UnreadableSymbolVersions(Box::new(e)),
            "an x86-64 Linux (ELF) executable",
        )
    })?;
    let newest = imports
        .needs
        .iter()
        .flat_map(|need| need.versions.iter().map(move |v| (need, v)))
        .filter_map(|(need, v)| Some((glibc_version(v)?, need, v)))
        .max_by_key(|(version, ..)| *version);
    match newest {
        Some((version, need, name)) if version > GLIBC_FLOOR => {
            Err(NativeProgramError::GlibcTooNew {
                origin: origin.to_owned(),
                library: need.library.clone(),
                version: name.clone(),
            })
        }
        _ => Ok(()),
    }
}

/// `GLIBC_2.34` → `(2, 34)`; other version names are not glibc's.
fn glibc_version(name: &str) -> Option<(u32, u32)> {
    let rest = name.strip_prefix("GLIBC_")?;
    let mut parts = rest.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().map_or(Some(0), |m| m.parse().ok())?;
    Some((major, minor))
}

fn elf_machine_name(machine: Option<u16>, class: Option<ElfClass>) -> String {
    let bits = match class {
        Some(ElfClass::Elf32) => "32-bit ",
        _ => "",
    };
    match machine {
        Some(3) => "32-bit x86".to_owned(),
        Some(40) => "32-bit ARM".to_owned(),
        Some(62) => format!("{bits}x86-64"),
        Some(183) => format!("{bits}AArch64"),
        Some(243) => format!("{bits}RISC-V"),
        Some(m) => format!("{bits}machine {m}"),
        None => "an unknown machine".to_owned(),
    }
}

/// The COFF file header of a PE image: `MZ`, then `PE\0\0` where
/// `e_lfanew` points.
struct PeHeader {
    machine: u16,
    characteristics: u16,
}

fn pe_header(bytes: &[u8]) -> Option<PeHeader> {
    if !bytes.starts_with(b"MZ") {
        return None;
    }
    let at = u32::from_le_bytes(bytes.get(0x3c..0x40)?.try_into().ok()?) as usize;
    let header = bytes.get(at..at.checked_add(24)?)?;
    if &header[..4] != b"PE\0\0" {
        return None;
    }
    let u16_at = |i: usize| u16::from_le_bytes([header[i], header[i + 1]]);
    Some(PeHeader {
        machine: u16_at(4),
        characteristics: u16_at(22),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::process::Command;

    use dist_info::requirement::Platform;

    use super::{NativeProgramError, NativePrograms, check_program};

    /// A real static x86-64 Linux executable: the launcher image.
    fn static_linux_program() -> Vec<u8> {
        trampoline_gen::Launcher::for_target(trampoline_gen::Platform::LinuxX86_64, "x")
            .unwrap()
            .into_bytes()
    }

    /// The COFF header of a PE executable image for `machine`, after a
    /// DOS header whose `e_lfanew` points at it.
    fn pe_header(machine: u16) -> Vec<u8> {
        let mut bytes = vec![0u8; 0x80 + 24];
        bytes[..2].copy_from_slice(b"MZ");
        bytes[0x3c..0x40].copy_from_slice(&0x80u32.to_le_bytes());
        bytes[0x80..0x84].copy_from_slice(b"PE\0\0");
        bytes[0x84..0x86].copy_from_slice(&machine.to_le_bytes());
        // IMAGE_FILE_EXECUTABLE_IMAGE | IMAGE_FILE_LARGE_ADDRESS_AWARE
        bytes[0x96..0x98].copy_from_slice(&0x0022u16.to_le_bytes());
        bytes
    }

    /// Checks the file `name` holding `bytes` as `platform`'s program, the
    /// way a build reads a program named at run time: the error's text,
    /// the temporary directory replaced by `TMP`.
    fn located_error(platform: Platform, tag: &str, name: &str, bytes: &[u8]) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let programs = NativePrograms::new().with_file(platform, &path);
        let error = programs.program_for(platform, tag).unwrap_err();
        error
            .to_string()
            .replace(&dir.path().display().to_string(), "TMP")
    }

    /// A dynamically linked program calling `closefrom` (GLIBC_2.34), built
    /// with the system's gcc.
    fn dynamic_program_needing_glibc_2_34(dir: &Path) -> Vec<u8> {
        let source = dir.join("new.c");
        std::fs::write(
            &source,
            "#define _GNU_SOURCE\n#include <unistd.h>\nint main(void) { closefrom(3); return 0; }\n",
        )
        .unwrap();
        let program = dir.join("new");
        let status = Command::new("gcc")
            .arg("-o")
            .arg(&program)
            .arg(&source)
            .status()
            .expect("gcc is installed by cargo xtask setup");
        assert!(status.success());
        std::fs::read(program).unwrap()
    }

    #[test]
    fn a_located_program_for_another_machine_is_refused() {
        let mut aarch64 = static_linux_program();
        aarch64[18..20].copy_from_slice(&183u16.to_le_bytes()); // EM_AARCH64
        insta::assert_snapshot!(
            located_error(Platform::Linux, "manylinux_2_28_x86_64", "rocm-sdk", &aarch64),
            @"the rocm-sdk program TMP/rocm-sdk is an ELF file for AArch64, but manylinux_2_28_x86_64 wheels need an x86-64 Linux (ELF) executable (Rust target x86_64-unknown-linux-gnu); name the rocm-sdk built for x86_64-unknown-linux-gnu"
        );
        insta::assert_snapshot!(
            located_error(Platform::Windows, "win_amd64", "rocm-sdk.exe", &pe_header(0xaa64)),
            @"the rocm-sdk program TMP/rocm-sdk.exe is a PE image for machine 0xaa64, but win_amd64 wheels need an x86-64 Windows (PE) executable (Rust target x86_64-pc-windows-gnu); name the rocm-sdk built for x86_64-pc-windows-gnu"
        );
    }

    #[test]
    fn a_located_program_of_the_other_format_is_refused() {
        insta::assert_snapshot!(
            located_error(Platform::Linux, "linux_x86_64", "rocm-sdk.exe", &pe_header(0x8664)),
            @"the rocm-sdk program TMP/rocm-sdk.exe is a Windows (PE) program, but linux_x86_64 wheels need an x86-64 Linux (ELF) executable (Rust target x86_64-unknown-linux-gnu); name the rocm-sdk built for x86_64-unknown-linux-gnu"
        );
        insta::assert_snapshot!(
            located_error(Platform::Windows, "win_amd64", "rocm-sdk", &static_linux_program()),
            @"the rocm-sdk program TMP/rocm-sdk is a Linux (ELF) file, but win_amd64 wheels need an x86-64 Windows (PE) executable (Rust target x86_64-pc-windows-gnu); name the rocm-sdk built for x86_64-pc-windows-gnu"
        );
        insta::assert_snapshot!(
            located_error(Platform::Linux, "linux_x86_64", "rocm-sdk", b"#!/bin/sh\nexec rocm-sdk \"$@\"\n"),
            @"the rocm-sdk program TMP/rocm-sdk is not an ELF file, but linux_x86_64 wheels need an x86-64 Linux (ELF) executable (Rust target x86_64-unknown-linux-gnu); name the rocm-sdk built for x86_64-unknown-linux-gnu"
        );
    }

    #[test]
    fn a_located_linux_program_needing_a_newer_glibc_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let program = dynamic_program_needing_glibc_2_34(dir.path());
        insta::assert_snapshot!(
            located_error(Platform::Linux, "manylinux_2_28_x86_64", "rocm-sdk", &program),
            @r#"the rocm-sdk program TMP/rocm-sdk needs GLIBC_2.34 from libc.so.6, newer than the glibc 2.28 Linux wheels' programs may need (docs/behaviour.md#native-binaries); link it statically (RUSTFLAGS="-C target-feature=+crt-static") or on an older system"#
        );
    }

    #[test]
    fn a_missing_or_unreadable_located_program_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let programs = NativePrograms::new()
            .with_file(Platform::Linux, dir.path().join("missing"))
            .with_file(Platform::Windows, dir.path());
        let text = |e: NativeProgramError| {
            e.to_string()
                .replace(&dir.path().display().to_string(), "TMP")
        };
        let missing = programs
            .program_for(Platform::Linux, "linux_x86_64")
            .unwrap_err();
        insta::assert_snapshot!(text(missing), @"cannot read the rocm-sdk program TMP/missing: No such file or directory (os error 2); name the program file");
        let directory = programs
            .program_for(Platform::Windows, "win_amd64")
            .unwrap_err();
        insta::assert_snapshot!(text(directory), @"cannot read the rocm-sdk program TMP: it is not a regular file; name the program file");
    }

    #[test]
    fn a_platform_without_its_program_is_refused_by_target_name() {
        use crate::python::{Program, wheel_files};
        let error = wheel_files(
            &NativePrograms::new(),
            Platform::Windows,
            "win_amd64",
            Program::Required,
        )
        .unwrap_err();
        // In the library's terms; `therock-package` says which flag and
        // how to rebuild it (its `flag_terms.rs`).
        insta::assert_snapshot!(error.to_string(), @"cannot build win_amd64 wheels: no rocm-sdk program was supplied for them (Rust target x86_64-pc-windows-gnu), and a wheel never ships another platform's program; supply one built for x86_64-pc-windows-gnu");
    }

    #[test]
    fn right_programs_are_accepted_and_go_to_their_platforms_path() {
        let linux = static_linux_program();
        check_program(Platform::Linux, "linux_x86_64", "launcher", &linux).unwrap();
        check_program(Platform::Windows, "win_amd64", "header", &pe_header(0x8664)).unwrap();
        let programs = NativePrograms::new()
            .with_bytes(Platform::Linux, "launcher", linux.clone())
            .with_bytes(Platform::Windows, "header", pe_header(0x8664));
        let (path, bytes) = programs
            .program_for(Platform::Linux, "linux_x86_64")
            .unwrap()
            .unwrap();
        assert_eq!((path, &bytes[..]), ("{pure}/_bin/rocm-sdk", &linux[..]));
        let (path, _) = programs
            .program_for(Platform::Windows, "win_amd64")
            .unwrap()
            .unwrap();
        assert_eq!(path, "{pure}/_bin/rocm-sdk.exe");
    }
}
