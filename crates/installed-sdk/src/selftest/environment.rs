//! The header of `rocm-sdk test`: what was tested (platform and C library,
//! Python, installer, distributions, GPU targets), read once so a pasted
//! report answers a maintainer's first questions.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use dist_info::package::PackageKind;
use serde::Deserialize;

use super::Context;
use super::selection::Selected;
use crate::report::Environment;
use crate::site::Site;

/// Asks the interpreter for its version and the platform it sees; one
/// JSON line.
const SOURCE: &str = "import json, platform, sys
libc = ' '.join(p for p in platform.libc_ver() if p)
print(json.dumps({'implementation': platform.python_implementation(),
  'version': platform.python_version(), 'system': platform.system(),
  'machine': platform.machine(), 'libc': libc}))";

#[derive(Deserialize)]
struct Answer {
    implementation: String,
    version: String,
    system: String,
    machine: String,
    libc: String,
}

/// Platform and Python, known before any document is read.
pub(super) fn platform_and_python(python: &Path) -> Environment {
    let answer = Command::new(python)
        .args(["-I", "-B", "-c", SOURCE])
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD")
        .output();
    let (platform, python) = match &answer {
        Ok(o) if o.status.success() => {
            match serde_json::from_slice::<Answer>(o.stdout.trim_ascii()) {
                Ok(a) => (
                    if a.libc.is_empty() {
                        format!("{} {}", a.system, a.machine)
                    } else {
                        format!("{} {}, {}", a.system, a.machine, a.libc)
                    },
                    format!("{} ({} {})", python.display(), a.implementation, a.version),
                ),
                Err(_) => (
                    native_platform(),
                    format!("{} (unexpected answer)", python.display()),
                ),
            }
        }
        Ok(o) => (
            native_platform(),
            format!("{} (failed: {})", python.display(), o.status),
        ),
        Err(e) => (
            native_platform(),
            format!("{} (cannot run: {e})", python.display()),
        ),
    };
    Environment {
        platform,
        python,
        ..Environment::default()
    }
}

/// The platform as this program was built for, when Python cannot say.
fn native_platform() -> String {
    format!("{} {}", std::env::consts::OS, std::env::consts::ARCH)
}

/// The rest of the header, from what the checks read.
pub(super) fn complete(env: &mut Environment, cx: &Context<'_>, selected: Option<&Selected>) {
    env.distributions = cx
        .distributions
        .iter()
        .map(|d| format!("{} {}", d.name, d.version))
        .collect();
    env.installer = cx
        .one(PackageKind::Core)
        .and_then(|d| devel_tar::read_installer(&d.dist_info));
    env.gpu_targets = Some(gpu_targets(cx.site, cx, selected));
}

fn gpu_targets(site: &Site, cx: &Context<'_>, selected: Option<&Selected>) -> String {
    let built = site
        .platform_dir(&cx.document, PackageKind::Core)
        .and_then(|core| crate::read_dist_targets(&core).ok())
        .map_or_else(|| "unknown".to_owned(), |t| t.targets.join(", "));
    let mut text = format!("built for {built}");
    if let Some(selected) = selected {
        let detected = match &selected.detected {
            Some(gpus) if !gpus.is_empty() => gpus.join(", "),
            Some(_) => "no GPU".to_owned(),
            None => "not looked for".to_owned(),
        };
        let chosen = match (&selected.target, &selected.source) {
            (Some(target), Some(source)) => format!("{target} ({source})"),
            _ => "none (no target package)".to_owned(),
        };
        let _ = write!(text, "; detected {detected}; selected {chosen}");
    }
    text
}
