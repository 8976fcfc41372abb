//! The launcher generator: small executables that exec a target at a path
//! relative to their own location (docs/behaviour.md#launchers).
//!
//! A symlink to an executable cannot go into a wheel, so the packager puts
//! a launcher at the link's path instead. The launcher reads its own real
//! path (`/proc/self/exe` on Linux), joins the relative target written into
//! it, and `execve`s that with the original `argv` (including `argv[0]`) and
//! environment, so exit status and signals are the target's own. A missing
//! target prints one line naming the resolved path and exits 127; a target
//! that cannot be executed exits 126.
//!
//! No compiler runs at packaging time: each platform's launcher image is
//! compiled from this crate's `launcher/` sources by `build.rs` and embedded
//! in the library; making a launcher only writes the target into the
//! image's reserved slot.
//!
//! ```
//! use trampoline_gen::{Launcher, Platform};
//!
//! let launcher = Launcher::for_target(Platform::LinuxX86_64, "../libexec/rocm_smi/rocm_smi.py")?;
//! assert_eq!(launcher.target().as_str(), "../libexec/rocm_smi/rocm_smi.py");
//! let read_back = trampoline_gen::read_target(launcher.bytes())?;
//! assert_eq!(&read_back, launcher.target());
//! # Ok::<(), trampoline_gen::Error>(())
//! ```

mod error;
mod image;
mod launcher;
mod platform;
mod slot;
#[path = "../launcher/slot_layout.rs"]
mod slot_layout;
mod target;

pub use error::{Error, SlotError};
pub use launcher::{Launcher, read_target, read_target_file};
pub use platform::Platform;
pub use target::RelativeTarget;
