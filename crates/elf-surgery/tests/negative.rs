//! Inputs that must be refused with a clear error, never a panic, and
//! never a written file: truncated, random, device code, object files,
//! and section tables that lie.

mod common;

use std::fs;
use std::io::Cursor;
use std::path::Path;

use common::{Linker, Rng, build_small_lib, corpus_request};
use elf_surgery::{ElfClass, ElfFile, ElfKind, ErrorKind, Unchanged, edit_file};

/// Edits `bytes` written to a file in `dir`; on error the file and the
/// directory must be exactly as before.
fn edit_bytes(dir: &Path, bytes: &[u8]) -> elf_surgery::Result<elf_surgery::Edit> {
    let path = dir.join("input.so");
    fs::write(&path, bytes).unwrap();
    let result = edit_file(&path, &corpus_request());
    if let Err(e) = &result {
        assert_eq!(e.path(), Some(path.as_path()), "the error names the file");
        assert_eq!(
            fs::read(&path).unwrap(),
            bytes,
            "a refused file was changed"
        );
        let names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            names.len() == 1 || names.iter().all(|n| !n.to_string_lossy().ends_with(".tmp")),
            "temporary file left: {names:?}"
        );
    }
    result
}

fn put_u16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn get_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Index of the section header of `sh_type` in a 64-bit LE file.
fn section_header(b: &[u8], sh_type: u32) -> usize {
    let shoff = get_u64(b, 40) as usize;
    let shnum = u16::from_le_bytes([b[60], b[61]]) as usize;
    (0..shnum)
        .map(|i| shoff + i * 64)
        .find(|&h| u32::from_le_bytes(b[h + 4..h + 8].try_into().unwrap()) == sh_type)
        .expect("section present")
}

#[test]
fn truncated_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let lib = build_small_lib(dir.path(), Linker::Gnu, "libmain.so");
    let full = fs::read(&lib).unwrap();
    let work = tempfile::tempdir().unwrap();
    for len in [
        0,
        3,
        15,
        16,
        40,
        63,
        64,
        100,
        0x200,
        full.len() / 2,
        full.len() - 1,
    ] {
        let cut = &full[..len];
        let parsed = ElfFile::parse(&mut Cursor::new(cut));
        if len < 16 {
            assert_eq!(parsed.unwrap().kind(), ElfKind::NotElf);
        }
        match edit_bytes(work.path(), cut) {
            Ok(edit) => panic!("truncated to {len} bytes but edited: {edit:?}"),
            Err(e) => assert!(
                matches!(
                    e.kind(),
                    ErrorKind::Truncated(_) | ErrorKind::Malformed(_) | ErrorKind::Unsupported(_)
                ),
                "{len}: {e}"
            ),
        }
    }
}

#[test]
fn random_bytes_are_not_elf_or_refused() {
    let work = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(7);
    for i in 0..200 {
        let len = rng.below(600);
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        if i % 2 == 0 && len >= 4 {
            bytes[..4].copy_from_slice(b"\x7fELF");
        }
        let err = edit_bytes(work.path(), &bytes).expect_err("random bytes were edited");
        assert!(!err.to_string().is_empty());
    }
}

/// A bare ELF header of the given class and data encoding.
fn bare_header(class: u8, data: u8, machine: u16) -> Vec<u8> {
    let mut b = vec![0u8; 64];
    b[..4].copy_from_slice(b"\x7fELF");
    b[4] = class;
    b[5] = data;
    b[6] = 1;
    let (t, m) = if data == 2 {
        (3u16.to_be_bytes(), machine.to_be_bytes())
    } else {
        (3u16.to_le_bytes(), machine.to_le_bytes())
    };
    b[16..18].copy_from_slice(&t);
    b[18..20].copy_from_slice(&m);
    b
}

#[test]
fn bare_headers_of_every_class_and_byte_order_parse_and_need_no_edit() {
    // No program headers: nothing a loader would read, so nothing to edit
    // (files of every class and byte order are edited alike; the
    // hand-made files of the unit tests carry a dynamic section).
    let work = tempfile::tempdir().unwrap();
    let cases = [
        (
            bare_header(1, 1, object::elf::EM_386),
            Some(ElfClass::Elf32),
        ),
        (
            bare_header(2, 2, object::elf::EM_PPC64),
            Some(ElfClass::Elf64),
        ),
        (
            bare_header(2, 1, object::elf::EM_RISCV),
            Some(ElfClass::Elf64),
        ),
    ];
    for (bytes, class) in cases {
        let elf = ElfFile::parse(&mut Cursor::new(&bytes)).unwrap();
        assert_eq!(elf.class(), class);
        assert_eq!(elf.kind(), ElfKind::SharedObject);
        let edit = edit_bytes(work.path(), &bytes).unwrap();
        assert_eq!(edit.unchanged_reason(), Some(Unchanged::NoDynamicSection));
    }
}

#[test]
fn device_code_and_objects_are_never_edited() {
    let dir = tempfile::tempdir().unwrap();
    let lib = build_small_lib(dir.path(), Linker::Lld, "libmain.so");
    let mut bytes = fs::read(&lib).unwrap();
    put_u16(&mut bytes, 18, object::elf::EM_AMDGPU);
    assert_eq!(
        ElfFile::parse(&mut Cursor::new(&bytes)).unwrap().kind(),
        ElfKind::DeviceCode
    );
    let err = edit_bytes(dir.path(), &bytes).unwrap_err();
    assert!(err.to_string().contains("AMDGPU"), "{err}");

    let obj = dir.path().join("sib.o");
    common::run_checked(
        std::process::Command::new("gcc")
            .args(["-c", "-o"])
            .arg(&obj)
            .arg(common::c_source("sib.c")),
    );
    let bytes = fs::read(&obj).unwrap();
    assert_eq!(
        ElfFile::parse(&mut Cursor::new(&bytes)).unwrap().kind(),
        ElfKind::Relocatable
    );
    assert!(matches!(
        edit_bytes(dir.path(), &bytes).unwrap_err().kind(),
        ErrorKind::Unsupported(_)
    ));
}

#[test]
fn lying_tables_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for linker in [Linker::Gnu, Linker::Lld] {
        let lib = build_small_lib(dir.path(), linker, "libmain.so");
        let good = fs::read(&lib).unwrap();
        let work = tempfile::tempdir().unwrap();

        // The .dynamic section header points somewhere else than PT_DYNAMIC.
        let mut b = good.clone();
        let h = section_header(&b, object::elf::SHT_DYNAMIC);
        let off = get_u64(&b, h + 24);
        put_u64(&mut b, h + 24, off + 8);
        let err = edit_bytes(work.path(), &b).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::Malformed(_)),
            "{linker:?}: {err}"
        );

        // The .dynstr section header disagrees with DT_STRSZ.
        let mut b = good.clone();
        let h = section_header(&b, object::elf::SHT_DYNAMIC);
        let link = u32::from_le_bytes(b[h + 40..h + 44].try_into().unwrap()) as usize;
        let strtab = get_u64(&b, 40) as usize + link * 64;
        let size = get_u64(&b, strtab + 32);
        put_u64(&mut b, strtab + 32, size + 100);
        let err = edit_bytes(work.path(), &b).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::Malformed(_)),
            "{linker:?}: {err}"
        );

        // Section and program header tables past the end of the file.
        for field in [32, 40] {
            let mut b = good.clone();
            put_u64(&mut b, field, u64::MAX - 10);
            let err = edit_bytes(work.path(), &b).unwrap_err();
            assert!(
                matches!(err.kind(), ErrorKind::Truncated(_)),
                "{linker:?}: {err}"
            );
        }

        // Section count far beyond the file.
        let mut b = good.clone();
        put_u16(&mut b, 60, 0xfff0);
        let err = edit_bytes(work.path(), &b).unwrap_err();
        assert!(
            matches!(err.kind(), ErrorKind::Truncated(_)),
            "{linker:?}: {err}"
        );
    }
}

/// A source of the parsed file's length but not its bytes (another build
/// of the library, the file rewritten in place) is refused by every call
/// that is handed the source again, not read or edited with facts that
/// are not its own.
#[test]
fn a_different_file_of_the_same_length_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let original = fs::read(build_small_lib(dir.path(), Linker::Gnu, "libsmall.so")).unwrap();
    let mut other = original.clone();
    // The same length, one NEEDED name changed: a byte the parse read.
    let at = other
        .windows(10)
        .position(|w| w == b"libsib.so\0")
        .expect("NEEDED libsib.so in .dynstr");
    other[at + 3] = b'x';

    let elf = ElfFile::parse(&mut Cursor::new(&original)).unwrap();
    let differs = |e: elf_surgery::Error| matches!(e.kind(), ErrorKind::SourceDiffers { .. });
    let request = corpus_request();
    assert!(differs(
        elf.plan_edit(&mut Cursor::new(&other), &request)
            .unwrap_err()
    ));
    assert!(differs(
        elf.read_imports(&mut Cursor::new(&other)).unwrap_err()
    ));
    assert!(differs(
        elf.library_name_literals(&mut Cursor::new(&other))
            .unwrap_err()
    ));
    let edit = elf
        .plan_edit(&mut Cursor::new(&original), &request)
        .unwrap();
    assert!(!edit.is_identity());
    let Err(err) = edit.reader(Cursor::new(&other)) else {
        panic!("another file is refused");
    };
    assert!(differs(err));
    let dest = dir.path().join("out.so");
    let permissions = fs::metadata(dir.path()).unwrap().permissions();
    let err = edit
        .write_atomically(&mut Cursor::new(&other), &dest, permissions)
        .unwrap_err();
    assert!(differs(err));
    assert!(!dest.exists(), "nothing is written");
    // The file itself, read again, is accepted.
    assert!(edit.reader(Cursor::new(&original)).is_ok());
    assert!(elf.read_imports(&mut Cursor::new(&original)).is_ok());
}
