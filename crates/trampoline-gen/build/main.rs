//! Compiles the launcher images from `launcher/` with the same `rustc`
//! that builds this crate, so `trampoline-gen` carries them inside the
//! library (after `cargo build` and `cargo install` alike).

#![allow(
    clippy::print_stdout,
    reason = "cargo reads build-script instructions from stdout"
)]

mod recipe;

use std::path::PathBuf;

fn main() {
    println!("cargo::rerun-if-changed=launcher");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest_dir = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let launcher_dir = manifest_dir.join("launcher");
    for recipe in recipe::ALL {
        if let Err(message) = recipe::compile_image(&rustc, &launcher_dir, *recipe, &out_dir) {
            panic!("trampoline-gen: {message}");
        }
    }
}
