//! The end-to-end tests of `therock-package` and the `rocm-sdk` it embeds,
//! folded into one test binary: each module was a binary of its own, each
//! linked and run alone (docs/testing.md, "One test binary").

mod common;

mod archive_build;
mod build_flags;
mod compression_level;
mod devel_integrity;
mod drop_in;
mod errors_said_once;
mod exit_status;
mod help;
mod hostile_inputs;
mod index;
mod inspect;
mod install;
mod interrupted;
mod manylinux;
mod metadata;
mod native_program;
mod one_view;
mod oracle;
mod post_release;
mod releasing_doc;
mod reproducible;
mod rocm_sdk_e2e;
mod rocm_sdk_selftest;
mod runtime_aliases;
mod shard;
mod terminal;
mod timings;
mod untrusted_release;
mod verify;
mod verify_shipped;
mod windows;
mod windows_names;
