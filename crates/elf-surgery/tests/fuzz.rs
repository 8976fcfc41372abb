//! Fuzz-style test on the stable toolchain: mutated real libraries and
//! random inputs, a bounded number of deterministic iterations. Nothing may
//! panic, and every edit that is returned must be sound: its output parses,
//! carries the new RPATH, and is a fixed point of the same edit (which
//! re-checks every loader invariant on it as an input).

mod common;

use std::fs;
use std::io::Cursor;

use common::{Linker, Rng, build_small_lib, corpus_request};
use elf_surgery::{ElfFile, ErrorKind, Unchanged};

const ITERATIONS: usize = 1500;

/// Applies the corpus edit to `bytes` in memory; `None` when refused.
///
/// A refusal by verification would mean the planner built a bad edit from
/// an input it accepted: that is a bug even though nothing is written.
fn try_edit(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut source = Cursor::new(bytes);
    let elf = ElfFile::parse(&mut source).ok()?;
    let edit = match elf.plan_edit(&mut source, &corpus_request()) {
        Ok(edit) => edit,
        Err(e) => {
            assert!(
                !matches!(e.kind(), ErrorKind::Verification(_)),
                "planner bug: {e}"
            );
            return None;
        }
    };
    let mut out = Vec::new();
    std::io::copy(&mut edit.reader(&mut source).unwrap(), &mut out).unwrap();
    assert_eq!(out.len() as u64, edit.output_len());
    Some(out)
}

fn check_sound(out: &[u8]) {
    let mut cursor = Cursor::new(out);
    let elf = ElfFile::parse(&mut cursor).expect("an edited file parses");
    if elf.has_dynamic() {
        assert!(
            elf.rpath()
                .is_some_and(|r| r.ends_with("$ORIGIN/../x/lib:$ORIGIN/../../y/lib")),
            "{:?}",
            elf.rpath()
        );
        assert_eq!(elf.runpath(), None);
    }
    match elf.plan_edit(&mut cursor, &corpus_request()) {
        Ok(again) => assert!(again.is_identity(), "the edit is not a fixed point"),
        Err(e) => panic!("an edited file is refused as input: {e}"),
    }
}

/// Byte ranges worth mutating: headers and the tables an edit touches.
fn interesting_ranges(bytes: &[u8]) -> Vec<(usize, usize)> {
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    let mut ranges = vec![(0, 64)];
    let (phoff, phnum) = (
        u64_at(32),
        usize::from(u16::from_le_bytes([bytes[56], bytes[57]])),
    );
    ranges.push((phoff, phoff + phnum * 56));
    let (shoff, shnum) = (
        u64_at(40),
        usize::from(u16::from_le_bytes([bytes[60], bytes[61]])),
    );
    ranges.push((shoff, shoff + shnum * 64));
    for i in 0..phnum {
        let h = phoff + i * 56;
        if u32::from_le_bytes(bytes[h..h + 4].try_into().unwrap()) == object::elf::PT_DYNAMIC {
            ranges.push((u64_at(h + 8), u64_at(h + 8) + u64_at(h + 32)));
        }
    }
    ranges.retain(|(s, e)| s < e && *e <= bytes.len());
    ranges
}

#[test]
fn mutated_libraries_never_panic_nor_yield_unsound_edits() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(0x5eed);
    let (mut edited, mut refused) = (0, 0);
    for (linker, name) in [(Linker::Gnu, "libgnu.so"), (Linker::Lld, "liblld.so")] {
        let base = fs::read(build_small_lib(dir.path(), linker, name)).unwrap();
        check_sound(&try_edit(&base).expect("the unmutated library edits"));
        let ranges = interesting_ranges(&base);
        for _ in 0..ITERATIONS / 2 {
            let mut bytes = base.clone();
            for _ in 0..=rng.below(4) {
                let (s, e) = ranges[rng.below(ranges.len())];
                let at = s + rng.below(e - s);
                bytes[at] = match rng.below(4) {
                    0 => 0,
                    1 => 0xff,
                    2 => bytes[at] ^ (1 << rng.below(8)),
                    _ => rng.next_u64() as u8,
                };
            }
            if rng.below(10) == 0 {
                bytes.truncate(rng.below(bytes.len()));
            }
            match try_edit(&bytes) {
                Some(out) => {
                    check_sound(&out);
                    edited += 1;
                }
                None => refused += 1,
            }
        }
    }
    // Both outcomes are exercised, or the mutations are not reaching anything.
    assert!(
        edited > 50 && refused > 50,
        "edited {edited}, refused {refused}"
    );
}

#[test]
fn random_inputs_never_panic() {
    let mut rng = Rng::new(42);
    for i in 0..ITERATIONS {
        let len = rng.below(2048);
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        if len >= 64 && i % 3 != 0 {
            bytes[..4].copy_from_slice(b"\x7fELF");
            bytes[4] = 2;
            bytes[5] = 1;
            bytes[18] = 62;
            bytes[19] = 0;
        }
        let mut source = Cursor::new(&bytes);
        if let Ok(elf) = ElfFile::parse(&mut source) {
            match elf.plan_edit(&mut source, &corpus_request()) {
                Ok(edit) => {
                    // Only a static executable may pass unchanged; anything
                    // else that passes must be sound.
                    if edit.unchanged_reason() != Some(Unchanged::NoDynamicSection) {
                        check_sound(&try_edit(&bytes).unwrap());
                    }
                }
                Err(e) => assert!(
                    !matches!(e.kind(), ErrorKind::Verification(_)) || !e.to_string().is_empty()
                ),
            }
        }
    }
}
