//! The embedded launcher image itself: small, and the same bytes whoever
//! builds it where.

#[allow(dead_code, reason = "the test uses part of the build recipe")]
#[path = "../build/recipe.rs"]
mod recipe;

use trampoline_gen::Platform;

#[test]
fn image_is_tens_of_kib_not_hundreds() {
    for &platform in Platform::ALL {
        let size = platform.image().len();
        assert!(
            (1024..64 * 1024).contains(&size),
            "{platform}: {size} bytes"
        );
    }
}

#[test]
fn image_is_a_static_x86_64_executable() {
    let image = Platform::LinuxX86_64.image();
    assert_eq!(&image[..4], b"\x7fELF");
    assert_eq!(image[4], 2, "64-bit");
    assert_eq!(u16::from_le_bytes([image[16], image[17]]), 2, "ET_EXEC");
    assert_eq!(u16::from_le_bytes([image[18], image[19]]), 62, "EM_X86_64");
}

#[test]
fn rebuilding_elsewhere_gives_the_same_bytes() {
    // The recipe of build.rs, run again from a different output directory
    // (and at a different time): the embedded image must come out equal.
    let out = tempfile::tempdir().unwrap();
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let launcher_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("launcher");
    let path = recipe::compile_image(&rustc, &launcher_dir, recipe::LINUX_X86_64, out.path())
        .unwrap_or_else(|e| panic!("{e}"));
    let rebuilt = std::fs::read(path).unwrap();
    assert!(
        rebuilt == Platform::LinuxX86_64.image(),
        "rebuilding the launcher gave different bytes ({} vs {} bytes)",
        rebuilt.len(),
        Platform::LinuxX86_64.image().len()
    );
    assert_eq!(recipe::find_slot(&rebuilt).map(|_| ()), Ok(()));
}
