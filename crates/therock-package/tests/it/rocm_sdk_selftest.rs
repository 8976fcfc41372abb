//! `rocm-sdk test` on packages built from a tree shaped like a real ROCm
//! build: the kpack example plus a sanitizer runtime that cannot be
//! `dlopen`ed (initial-exec TLS), a library that needs a system library
//! this machine has but neither the set nor the manylinux allow-list
//! provides (`libtinfo.so.6`, Debian `libtinfo6`, a TEST_PACKAGES entry of
//! `xtask/src/ci.rs`), and `roc-obj-ls` as the Perl script it really is,
//! needing a Perl module the host lacks (as Debian's lacks `File::Which`).
//! A healthy install passes, with the right SKIP and WARN lines, in every
//! layout pip and uv produce; a damaged one fails, naming the cause
//! (docs/rocm-sdk.md).
//!
//! The tree is built once per test binary; every test installs into its
//! own directories, so tests run in parallel.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use common::{Build, Venv, ok};
use fixtures::ExampleMode;

/// What a user installs.
const REQUIREMENT: &str = "rocm[libraries,devel,profiler,device-gfx942]";

/// The sanitizer-style runtime, where TheRock's clang keeps its runtimes.
const SANITIZER: &str = "_rocm_sdk_core/lib/llvm/lib/clang/20/lib/linux/libclang_rt.asan-x86_64.so";
/// The library whose `DT_NEEDED` is a host-only system library.
const HOST_DEPENDENT: &str = "_rocm_sdk_core/lib/llvm/lib/liblldb.so.20";
/// The Perl module `roc-obj-ls` needs from the host; no host has it.
const HOST_PERL_MODULE: &str = "ROCm::Example::HostOnly";

/// Compiles `source` into a shared library at `dest` with gcc.
fn compile_library(dest: &Path, soname: &str, source: &str, flags: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("unit.c");
    fs::write(&src, source).unwrap();
    fs::create_dir_all(dest.parent().unwrap()).unwrap();
    ok(&Command::new("gcc")
        .args(["-shared", "-fPIC", "-O1", "-g0"])
        .arg(format!("-Wl,-soname,{soname}"))
        .arg("-o")
        .arg(dest)
        .arg(&src)
        .args(flags)
        .output()
        .unwrap());
}

/// The kpack example's artifacts with the two files a real build has and
/// the example lacks, added to the `amd-llvm` artifact (core).
fn real_shaped_artifacts() -> &'static Path {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let artifacts = dir.path().join("artifacts");
        ok(&Command::new("cp")
            .arg("-a")
            .arg(common::artifacts(ExampleMode::Kpack))
            .arg(&artifacts)
            .output()
            .unwrap());
        let stage = artifacts.join("amd-llvm_lib_generic/compiler/amd-llvm/stage");
        // A large initial-exec TLS block, as sanitizer runtimes have: the
        // linker sets DF_STATIC_TLS and dlopen cannot find room for it.
        compile_library(
            &stage.join("lib/llvm/lib/clang/20/lib/linux/libclang_rt.asan-x86_64.so"),
            "libclang_rt.asan-x86_64.so",
            "__thread char asan_fake_stack[262144];\n\
             char *__asan_fake_stack_of_thread(void) { return asan_fake_stack; }\n",
            &["-ftls-model=initial-exec"],
        );
        compile_library(
            &stage.join("lib/llvm/lib/liblldb.so.20"),
            "liblldb.so.20",
            "int tigetnum(const char *capname);\n\
             int lldb_terminal_columns(void) { return tigetnum(\"cols\"); }\n",
            &["-Wl,--no-as-needed", "-ltinfo"],
        );
        // TheRock's roc-obj-ls is Perl and `use`s File::Which, which a
        // host may lack; Perl is part of every Debian (perl-base).
        let tool = artifacts.join("core-hip_run_generic/core/clr/stage/bin/roc-obj-ls");
        fs::write(
            &tool,
            format!("#!/usr/bin/perl\nuse strict;\nuse {HOST_PERL_MODULE};\nprint \"Usage\\n\";\n"),
        )
        .unwrap();
        (dir, artifacts)
    })
    .1
}

/// The packages of [`real_shaped_artifacts`].
fn real_build() -> &'static Build {
    static BUILD: OnceLock<Build> = OnceLock::new();
    BUILD.get_or_init(|| Build::from_artifacts(real_shaped_artifacts(), &[]))
}

/// `pip install --no-index --find-links DIST args… REQUIREMENT` into the
/// interpreter of `venv`.
fn pip_install(venv: &Path, dist: &Path, args: &[&str], env: &[(&str, &Path)]) {
    let mut command = pip(venv);
    command.args(["install", "--no-index", "--find-links"]);
    command.arg(dist).args(args).arg(REQUIREMENT);
    for (key, value) in env {
        command.env(key, value);
    }
    ok(&command.env_remove("PYTHONPATH").output().unwrap());
}

/// [`common::pip_into`] the interpreter of `venv` (made without pip),
/// quiet.
fn pip(venv: &Path) -> Command {
    let mut command = common::pip_into(&venv.join("bin/python"));
    command.arg("-q");
    command
}

/// `uv pip install --offline --no-index` with the interpreter of `venv`.
fn uv_install(venv: &Path, dist: &Path, args: &[&str]) {
    ok(&Command::new(common::uv())
        .args(["pip", "install", "--offline", "--no-index", "--no-cache"])
        .arg("--python")
        .arg(venv.join("bin/python"))
        .arg("--find-links")
        .arg(dist)
        .args(args)
        .arg(REQUIREMENT)
        .output()
        .unwrap());
}

/// A fresh venv (`--system-site-packages` when a `--user` install must be
/// visible to it) and its directory.
fn venv(system_site_packages: bool) -> (Venv, PathBuf) {
    let venv = if system_site_packages {
        Venv::with_system_site_packages()
    } else {
        Venv::new()
    };
    let root = venv.root();
    (venv, root)
}

/// Runs `program args` as a user would: no `LD_LIBRARY_PATH`, no
/// interpreter chosen for it, `env` added.
fn run(program: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut command = Command::new(program);
    command
        .args(args)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("PYTHONPATH")
        .env_remove("ROCM_SDK_PYTHON")
        .env_remove("ROCM_SDK_TARGET_FAMILY");
    for (key, value) in env {
        command.env(key, value);
    }
    command
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()))
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Asserts `rocm-sdk test` passed a healthy install of the real-shaped
/// tree: exit 0, no FAIL, the sanitizer runtime skipped for its TLS, the
/// host-dependent library warned about by name, the public API and the
/// tools checked.
fn assert_healthy(out: &Output, layout: &str) {
    let text = text(out);
    assert_eq!(out.status.code(), Some(0), "{layout}:\n{text}");
    assert!(!text.contains("\nFAIL "), "{layout}:\n{text}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.ends_with(" passed, 0 failed\n"), "{layout}:\n{text}");
    let expected = [
        format!(
            "SKIP libraries: {SANITIZER} (not loadable by design: it uses initial-exec \
             thread-local storage (DT_FLAGS has DF_STATIC_TLS, PT_TLS of"
        ),
        format!(
            "WARN needed: {HOST_DEPENDENT} (NEEDED libtinfo.so.6 is taken from the host system ("
        ),
        format!("PASS libraries: {HOST_DEPENDENT} (loads)"),
        "PASS preload: amdhip64 (_rocm_sdk_core/lib/libamdhip64.so.7)".to_owned(),
        "PASS preload: amd_comgr (_rocm_sdk_core/lib/libamd_comgr.so.3)".to_owned(),
        "PASS preload: hipfft (_rocm_sdk_libraries/lib/libhipfft.so.0)".to_owned(),
        "SKIP preload: 24 library-table entries (not part of this ROCm build: hipfile".to_owned(),
        "PASS tools: hipcc --version (HIP version: 7.1.0)".to_owned(),
        "PASS tools: amdclang --version (clang version 20.0.0git".to_owned(),
        "PASS tools: amdclang++ --version (clang version 20.0.0git".to_owned(),
        "PASS tools: amdlld -flavor ld.lld --version (LLD 20.0.0 (compatible with GNU linkers))"
            .to_owned(),
        "WARN tools: roc-obj-ls -h (".to_owned(),
        "PASS devel: hipconfig --rocmpath (".to_owned(),
        "PASS profiler: rocprof-sys-run --version".to_owned(),
        "2 warned, ".to_owned(),
    ];
    for line in expected {
        assert!(
            stdout.lines().any(|l| l.starts_with(&line)) || stdout.contains(&line),
            "{layout}: no line starting {line:?}:\n{text}"
        );
    }
    let tool = stdout
        .lines()
        .find(|l| l.starts_with("WARN tools: roc-obj-ls -h ("))
        .unwrap_or_default();
    assert!(
        tool.contains(&format!(
            "/roc-obj-ls exited with exit status: 2: this machine lacks the Perl module \
             {HOST_PERL_MODULE}, which the tool expects from the host system; install the \
             distribution package that provides it (Debian/Ubuntu: `apt install \
             librocm-example-hostonly-perl`, Fedora/RHEL: `dnf install \
             perl-ROCm-Example-HostOnly`) or `cpan {HOST_PERL_MODULE}`; it said: Can't locate \
             ROCm/Example/HostOnly.pm in @INC"
        )),
        "{layout}: the missing module and its remedy are named: {tool}"
    );
}

/// The report as a user pastes it, what differs from machine to machine
/// replaced: the environment's paths, the interpreter's and the C
/// library's versions.
fn pasteable(out: &Output, venv: &Path) -> String {
    let sp = common::site_packages_of(venv);
    let text = String::from_utf8_lossy(&out.stdout)
        .replace(&sp.display().to_string(), "[site-packages]")
        .replace(&venv.display().to_string(), "[venv]");
    text.lines()
        .map(|line| match line.split_once(": ") {
            Some((key @ ("platform" | "python"), value)) => {
                let pad = value.len() - value.trim_start().len();
                format!("{key}: {}[{key}]", " ".repeat(pad))
            }
            // Perl's own search path.
            _ => match line.split_once(" (@INC contains: ") {
                Some((before, after)) => {
                    let rest = after.split_once(')').map_or("", |(_, rest)| rest);
                    format!("{before} (@INC contains: [perl's]){rest}")
                }
                None => line.to_owned(),
            },
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The reference's layout rule (TheRock's `testLibrariesMirroredIntoDevel`,
/// applied to every runtime platform tree the devel tree mirrors): every
/// file of `_rocm_sdk_core/` and `_rocm_sdk_libraries/` but the package
/// marker, bytecode caches, `.devel_links/` and core's runtime aliases is
/// the same file at the same path in `_rocm_sdk_devel/` after init.
fn assert_mirrored_into_devel(sp: &Path) {
    for platform in ["_rocm_sdk_core", "_rocm_sdk_libraries"] {
        let root = sp.join(platform);
        let mut not_mirrored = Vec::new();
        let mut checked = 0;
        for rel in fixtures::files::relative_files(&root) {
            let parts: Vec<&str> = rel.split('/').collect();
            if rel == "__init__.py" || parts.contains(&"__pycache__") || parts[0] == ".devel_links"
            {
                continue;
            }
            // Core's runtime aliases stay out of the devel tree, which keeps
            // the real `libX.so` links (docs/behaviour.md#runtime-aliases).
            let name = parts.last().copied().unwrap_or_default();
            if elf_surgery::ElfFile::open(&root.join(&rel))
                .is_ok_and(|elf| elf_surgery::alias_target(&elf, name).is_some())
            {
                continue;
            }
            checked += 1;
            let (file, devel) = (root.join(&rel), sp.join("_rocm_sdk_devel").join(&rel));
            let same = match (fs::metadata(&file), fs::metadata(&devel)) {
                (Ok(a), Ok(b)) => {
                    use std::os::unix::fs::MetadataExt;
                    (a.dev(), a.ino()) == (b.dev(), b.ino())
                }
                _ => false,
            };
            if !same {
                not_mirrored.push(format!("{platform}/{rel}"));
            }
        }
        assert!(checked > 0, "{platform} has files");
        assert!(
            not_mirrored.is_empty(),
            "not the same file in the devel tree: {not_mirrored:#?}"
        );
    }
}

#[test]
fn a_healthy_venv_install_passes_with_its_skip_and_warn_lines() {
    let (_dir, venv) = venv(false);
    pip_install(&venv, &real_build().dist(), &[], &[]);
    let rocm_sdk = venv.join("bin/rocm-sdk");
    let out = run(&rocm_sdk, &["test"], &[]);
    assert_healthy(&out, "pip venv");
    assert_mirrored_into_devel(&common::site_packages_of(&venv));
    insta::assert_snapshot!(pasteable(&out, &venv), @r#"
    rocm:          7.1.0
    platform:      [platform]
    python:        [python]
    installer:     pip
    site-packages: [site-packages]
    distributions: rocm 7.1.0, rocm-profiler 7.1.0, rocm-sdk-core 7.1.0, rocm-sdk-devel 7.1.0, rocm-sdk-device-gfx942 7.1.0, rocm-sdk-libraries 7.1.0
    gpu targets:   built for gfx942, gfx942:xnack+, gfx1100; detected no GPU; selected gfx1100 (default)

    PASS installation: rocm (rocm 7.1.0)
    PASS installation: rocm-sdk-core (rocm-sdk-core 7.1.0)
    PASS installation: rocm target selection (gfx1100 (default) still holds on this machine)
    PASS devel-unpack: rocm-sdk-devel (_rocm_sdk_devel is unpacked, device links current)
    PASS packages: rocm (rocm_sdk import from site-packages)
    PASS packages: rocm-profiler (rocm_profiler, _rocm_profiler import from site-packages)
    PASS packages: rocm-sdk-core (rocm_sdk_core, _rocm_sdk_core import from site-packages)
    PASS packages: rocm-sdk-devel (rocm_sdk_devel import from site-packages)
    PASS packages: rocm-sdk-device-gfx942 (overlays _rocm_sdk_libraries)
    PASS packages: rocm-sdk-libraries (rocm_sdk_libraries, _rocm_sdk_libraries import from site-packages)
    PASS versions: ROCm distributions (6 distributions at 7.1.0)
    PASS record: rocm 7.1.0 (19 files match RECORD, 10 listed without hash)
    PASS record: rocm-profiler 7.1.0 (23 files match RECORD, 5 listed without hash)
    PASS record: rocm-sdk-core 7.1.0 (71 files match RECORD, 6 listed without hash)
    PASS record: rocm-sdk-devel 7.1.0 (7 files match RECORD, 56 listed without hash)
    PASS record: rocm-sdk-device-gfx942 7.1.0 (16 files match RECORD, 14 listed without hash)
    PASS record: rocm-sdk-libraries 7.1.0 (10 files match RECORD, 3 listed without hash)
    PASS libraries: _rocm_profiler/lib/librocprof-sys.so (loads)
    PASS libraries: _rocm_profiler/lib/librocprof-sys.so.1 (loads)
    PASS libraries: _rocm_sdk_core/lib/libamd_comgr.so.3 (loads)
    PASS libraries: _rocm_sdk_core/lib/libamdhip64.so.7 (loads)
    PASS libraries: _rocm_sdk_core/lib/libhsa-runtime64.so.1 (loads)
    SKIP libraries: _rocm_sdk_core/lib/llvm/lib/clang/20/lib/linux/libclang_rt.asan-x86_64.so (not loadable by design: it uses initial-exec thread-local storage (DT_FLAGS has DF_STATIC_TLS, PT_TLS of 262144 bytes), so it loads only at program start (linked in or LD_PRELOAD), not by dlopen into a running process; the loader said: [site-packages]/_rocm_sdk_core/lib/llvm/lib/clang/20/lib/linux/libclang_rt.asan-x86_64.so: cannot allocate memory in static TLS block)
    PASS libraries: _rocm_sdk_core/lib/llvm/lib/liblldb.so.20 (loads)
    PASS libraries: _rocm_sdk_core/lib/rocm_sysdeps/lib/librocm_sysdeps_liblzma.so.5 (loads)
    PASS libraries: _rocm_sdk_libraries/lib/libhipfft.so.0 (loads)
    PASS libraries: _rocm_sdk_libraries/lib/librocblas.so.5 (loads)
    PASS libraries: _rocm_sdk_libraries/lib/rocblas/library/librocblas_isa_gfx942.so (loads)
    PASS libraries: _rocm_sdk_libraries/lib/rocblas/library/librocblas_isa_gfx942:xnack+.so (loads)
    PASS libraries: _rocm_sdk_core/lib/libamdhip64.so (dlopen("libamdhip64.so") from a library beside it (libamdhip64.so.7) reaches libamdhip64.so.7 and resolves hipRuntimeVersion)
    PASS libraries: _rocm_sdk_core/lib/librocblas.so (dlopen("librocblas.so") from a library beside it (libamdhip64.so.7) reaches librocblas.so.5 and resolves rocblas_create_handle)
    SKIP preload: 24 library-table entries (not part of this ROCm build: hipfile hiprtc roctx64 rocprofiler-sdk rocprofiler-sdk-roctx roctracer64 rocm-openblas rocm_kpack rocm_smi64 rocdecode rocjpeg amd_smi rocdxg rpp hipblas hipblaslt hiprand hipsparse hipsparselt hipsolver rccl miopen origami hipdnn)
    PASS preload: amd_comgr (_rocm_sdk_core/lib/libamd_comgr.so.3)
    PASS preload: amdhip64 (_rocm_sdk_core/lib/libamdhip64.so.7)
    PASS preload: hipfft (_rocm_sdk_libraries/lib/libhipfft.so.0)
    PASS preload: rocm_sysdeps_liblzma (_rocm_sdk_core/lib/rocm_sysdeps/lib/librocm_sysdeps_liblzma.so.5)
    PASS preload: libamdhip64.so from Python (after initialize_process(preload_shortnames=['amdhip64']), ctypes.CDLL("libamdhip64.so") reaches the preloaded libamdhip64.so.7 (hipRuntimeVersion at one address) and find_library_path("libamdhip64.so") names it)
    PASS preload: library path (5 directories: _rocm_sdk_libraries/lib, _rocm_sdk_core/lib, _rocm_sdk_core/lib/rocm_sysdeps/lib, _rocm_sdk_core/lib/llvm/lib, _rocm_profiler/lib)
    PASS needed: DT_NEEDED (20 of 21 ELF files resolve every entry; the others follow)
    WARN needed: _rocm_sdk_core/lib/llvm/lib/liblldb.so.20 (NEEDED libtinfo.so.6 is taken from the host system (/lib/x86_64-linux-gnu/libtinfo.so.6): it is neither in the ROCm packages nor an allowed manylinux_2_28 system library, so this works here but not on a machine without it)
    PASS scripts: amdclang (runs _rocm_sdk_devel/lib/llvm/bin/amdclang)
    PASS scripts: amdclang++ (runs _rocm_sdk_devel/lib/llvm/bin/amdclang++)
    PASS scripts: amdlld (runs _rocm_sdk_devel/lib/llvm/bin/amdlld)
    PASS scripts: offload-arch (runs _rocm_sdk_devel/lib/llvm/bin/offload-arch)
    PASS scripts: hipcc (runs _rocm_sdk_devel/bin/hipcc)
    PASS scripts: hipconfig (runs _rocm_sdk_devel/bin/hipconfig)
    PASS scripts: roc-obj-ls (runs _rocm_sdk_devel/bin/roc-obj-ls)
    PASS scripts: rocm_agent_enumerator (runs _rocm_sdk_core/bin/rocm_agent_enumerator)
    PASS scripts: rocminfo (runs _rocm_sdk_core/bin/rocminfo)
    PASS scripts: rocm-smi (runs _rocm_sdk_core/bin/rocm-smi)
    PASS scripts: rocprof-compute (runs _rocm_profiler/bin/rocprof-compute)
    PASS scripts: rocprof-sys-run (runs _rocm_profiler/bin/rocprof-sys-run)
    SKIP scripts: 24 scripts (their tools are not part of this build: amdclang-cpp amdclang-cl amdflang hipify-clang roc-obj roc-obj-extract amd-smi hipify-perl roccoremerge rocgdb rocpd rocpd2csv rocpd2otf2 rocpd2pftrace rocpd2summary rocprofv3 rocprofv3-attach rocprofv3-avail rocprof-sys-attach rocprof-sys-avail rocprof-sys-causal rocprof-sys-instrument rocprof-sys-sample rocprof-sys-python)
    PASS tools: hipcc --version (HIP version: 7.1.0)
    PASS tools: amdclang --version (clang version 20.0.0git (invoked as [site-packages]/_rocm_sdk_devel/lib/llvm/bin/amdclang, 1 args))
    PASS tools: amdclang++ --version (clang version 20.0.0git (invoked as [site-packages]/_rocm_sdk_devel/lib/llvm/bin/amdclang++, 1 args))
    PASS tools: amdlld -flavor ld.lld --version (LLD 20.0.0 (compatible with GNU linkers))
    WARN tools: roc-obj-ls -h ([venv]/bin/roc-obj-ls exited with exit status: 2: this machine lacks the Perl module ROCm::Example::HostOnly, which the tool expects from the host system; install the distribution package that provides it (Debian/Ubuntu: `apt install librocm-example-hostonly-perl`, Fedora/RHEL: `dnf install perl-ROCm-Example-HostOnly`) or `cpan ROCm::Example::HostOnly`; it said: Can't locate ROCm/Example/HostOnly.pm in @INC (you may need to install the ROCm::Example::HostOnly module) (@INC contains: [perl's]) at [site-packages]/_rocm_sdk_devel/bin/roc-obj-ls line 3.)
    PASS devel: lib/cmake/hip/hip-config.cmake (exists)
    PASS devel: lib/llvm/bin/clang++ (exists)
    PASS devel: llvm/bin/clang++ (exists)
    PASS devel: hipconfig --rocmpath ([site-packages]/_rocm_sdk_devel)
    PASS devel: runtime links (54 devel paths are the same files as their runtime files)
    PASS devel: rocm-sdk-libraries mirrored (15 files hard-linked into _rocm_sdk_devel)
    SKIP profiler: rocprof-sys-sample --version (bin/rocprof-sys-sample is not part of this build)
    PASS profiler: rocprof-sys-run --version (rocprof-sys-run 1.0.0)
    SKIP profiler: rocprof-sys-instrument --version (bin/rocprof-sys-instrument is not part of this build)
    2 warned, 5 skipped
    60 passed, 0 failed
    "#);

    let json = run(&rocm_sdk, &["test", "--json"], &[]);
    assert_eq!(json.status.code(), Some(0), "{}", text(&json));
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["schema"], 1);
    assert_eq!(report["failed"], 0);
    assert_eq!(report["warned"], 2);
    let check = |name: &str| {
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name && c["category"] != "packages")
            .unwrap_or_else(|| panic!("no check {name}: {report:#}"))
            .clone()
    };
    let sanitizer = check(SANITIZER);
    assert_eq!(sanitizer["outcome"], "skipped");
    assert!(
        sanitizer["reason"].as_str().unwrap().contains("static TLS"),
        "the loader's words follow ours: {sanitizer}"
    );
    let needed = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["category"] == "needed" && c["name"] == HOST_DEPENDENT)
        .unwrap();
    assert_eq!(needed["outcome"], "warned");
    assert!(needed["reason"].as_str().unwrap().contains("libtinfo.so.6"));
    assert_eq!(check("hipfft")["outcome"], "passed");

    // `-q`: nothing at all on a healthy install.
    let quiet = run(&rocm_sdk, &["test", "-q"], &[]);
    assert_eq!(quiet.status.code(), Some(0), "{}", text(&quiet));
    assert_eq!(text(&quiet), "", "rocm-sdk test -q printed something");
}

#[test]
fn every_way_of_launching_it_gives_the_same_report() {
    let (_dir, venv) = venv(false);
    pip_install(&venv, &real_build().dist(), &[], &[]);
    let sp = common::site_packages_of(&venv);
    // The first run unpacks the devel tree; the runs compared come after.
    assert_healthy(&run(&venv.join("bin/rocm-sdk"), &["test"], &[]), "first");
    let script = run(&venv.join("bin/rocm-sdk"), &["test"], &[]);
    let module = run(&venv.join("bin/python"), &["-m", "rocm_sdk", "test"], &[]);
    // The native program itself, from elsewhere, with no interpreter named
    // and the venv not on PATH: it finds both from its own location.
    let elsewhere = tempfile::tempdir().unwrap();
    let native = Command::new(sp.join("rocm_sdk_core/_bin/rocm-sdk"))
        .arg("test")
        .current_dir(elsewhere.path())
        .env("PATH", "/usr/bin:/bin")
        .env_remove("ROCM_SDK_PYTHON")
        .env_remove("VIRTUAL_ENV")
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert_healthy(&script, "rocm-sdk script");
    // The header names the interpreter as each launcher found it
    // (`python3` or `python3.11` of the same venv); the rest is the same.
    let report = |out: &Output| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.starts_with("python:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    for (how, out) in [("python -m rocm_sdk", &module), ("native", &native)] {
        assert_eq!(out.status.code(), Some(0), "{how}:\n{}", text(out));
        assert_eq!(
            report(out),
            report(&script),
            "{how} differs from the rocm-sdk script"
        );
    }
}

#[test]
fn a_pip_user_install_passes() {
    let (dir, venv) = venv(true);
    let base = dir.scratch().join("userbase");
    pip_install(
        &venv,
        &real_build().dist(),
        &["--user"],
        &[("PYTHONUSERBASE", &base)],
    );
    let out = run(
        &base.join("bin/rocm-sdk"),
        &["test"],
        &[("PYTHONUSERBASE", &base)],
    );
    assert_healthy(&out, "pip --user");
}

#[test]
fn a_pip_prefix_install_passes() {
    let (dir, venv) = venv(false);
    let prefix = dir.scratch().join("prefix");
    pip_install(
        &venv,
        &real_build().dist(),
        &["--prefix", prefix.to_str().unwrap()],
        &[],
    );
    let sp = common::site_packages_of(&prefix);
    let out = run(
        &prefix.join("bin/rocm-sdk"),
        &["test"],
        &[("PYTHONPATH", &sp)],
    );
    assert_healthy(&out, "pip --prefix");
}

#[test]
fn a_pip_target_install_passes() {
    let (dir, venv) = venv(false);
    let target = dir.scratch().join("target");
    pip_install(
        &venv,
        &real_build().dist(),
        &["--target", target.to_str().unwrap()],
        &[],
    );
    let out = run(
        &target.join("bin/rocm-sdk"),
        &["test"],
        &[("PYTHONPATH", &target)],
    );
    assert_healthy(&out, "pip --target");
}

#[test]
fn a_uv_venv_install_passes() {
    let (_dir, venv) = venv(false);
    uv_install(&venv, &real_build().dist(), &[]);
    assert_healthy(&run(&venv.join("bin/rocm-sdk"), &["test"], &[]), "uv venv");
}

#[test]
fn uv_target_and_prefix_installs_pass() {
    let (dir, venv) = venv(false);
    let target = dir.scratch().join("target");
    uv_install(
        &venv,
        &real_build().dist(),
        &["--target", target.to_str().unwrap()],
    );
    let out = run(
        &target.join("bin/rocm-sdk"),
        &["test"],
        &[("PYTHONPATH", &target)],
    );
    assert_healthy(&out, "uv --target");

    let prefix = dir.scratch().join("prefix");
    uv_install(
        &venv,
        &real_build().dist(),
        &["--prefix", prefix.to_str().unwrap()],
    );
    let sp = common::site_packages_of(&prefix);
    let out = run(
        &prefix.join("bin/rocm-sdk"),
        &["test"],
        &[("PYTHONPATH", &sp)],
    );
    assert_healthy(&out, "uv --prefix");
}

/// The FAIL lines of a run that must have failed.
fn failures(out: &Output) -> Vec<String> {
    let all = text(out);
    assert_eq!(out.status.code(), Some(1), "{all}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("FAIL "))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_deleted_library_fails_the_preload_naming_the_file() {
    let (_dir, venv) = venv(false);
    pip_install(&venv, &real_build().dist(), &[], &[]);
    let sp = common::site_packages_of(&venv);
    fs::remove_file(sp.join("_rocm_sdk_core/lib/libamdhip64.so.7")).unwrap();
    let out = run(&venv.join("bin/rocm-sdk"), &["test"], &[]);
    let failed = failures(&out);
    // `-q`: the same FAIL lines, then the totals line, nothing else.
    let quiet = run(&venv.join("bin/rocm-sdk"), &["test", "-q"], &[]);
    let mut quiet_lines: Vec<String> = failures(&quiet);
    quiet_lines.push(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap()
            .to_owned(),
    );
    assert_eq!(
        String::from_utf8_lossy(&quiet.stdout)
            .lines()
            .collect::<Vec<_>>(),
        quiet_lines,
        "{}",
        text(&quiet)
    );
    assert_eq!(failures(&quiet), failed);
    let preload = failed
        .iter()
        .find(|l| l.starts_with("FAIL preload: amdhip64 ("))
        .unwrap_or_else(|| panic!("no preload failure for amdhip64:\n{}", text(&out)));
    assert!(
        preload.contains(
            "(rocm_sdk_core/_libraries.json records _rocm_sdk_core/lib/libamdhip64.so.7, which \
             is missing on disk; reinstall it: pip install --force-reinstall \"rocm-sdk-core==7.1.0\""
        ),
        "{preload}"
    );
    assert!(
        preload.contains("raised"),
        "the API's own error follows: {preload}"
    );
}

#[test]
fn find_libraries_failing_for_an_installed_package_fails_naming_the_cause() {
    // Legacy libraries are per family: with a family the release does not
    // offer in ROCM_SDK_TARGET_FAMILY, the API cannot pick the installed
    // libraries package, while every file is in place.
    let build = Build::new(ExampleMode::Legacy, &[]);
    let (_dir, venv) = venv(false);
    let family_dist = build.dist().join("gfx94X-dcgpu");
    ok(&pip(&venv)
        .args(["install", "--no-index", "--find-links"])
        .arg(&family_dist)
        .arg("--find-links")
        .arg(build.dist())
        .arg("rocm[libraries]")
        .output()
        .unwrap());
    let healthy = run(&venv.join("bin/rocm-sdk"), &["test"], &[]);
    assert_eq!(healthy.status.code(), Some(0), "{}", text(&healthy));
    let mut command = Command::new(venv.join("bin/rocm-sdk"));
    let out = command
        .arg("test")
        .env_remove("LD_LIBRARY_PATH")
        .env("ROCM_SDK_TARGET_FAMILY", "gfx000")
        .output()
        .unwrap();
    let failed = failures(&out);
    assert!(
        failed.iter().all(|l| l.starts_with("FAIL preload: ")),
        "only the API check fails: {failed:#?}"
    );
    let hipfft = failed
        .iter()
        .find(|l| l.starts_with("FAIL preload: hipfft ("))
        .unwrap_or_else(|| panic!("no preload failure for hipfft:\n{}", text(&out)));
    assert!(
        hipfft.contains("rocm_sdk.find_libraries(\"hipfft\") / preload_libraries raised "),
        "{hipfft}"
    );
    assert!(
        hipfft.contains("gfx000"),
        "the API's message names the cause: {hipfft}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("PASS preload: amdhip64"),
        "core entries do not depend on the family:\n{}",
        text(&out)
    );
}

/// How many different files named `name` the Python of `venv` maps after
/// loading `paths` with ctypes, in one process (distinct device and inode
/// of its `/proc/self/maps` lines).
fn files_mapped(venv: &Path, paths: &[PathBuf], name: &str) -> usize {
    let script = "import ctypes, sys\n\
                  for p in sys.argv[2:]:\n\
                  \x20   ctypes.CDLL(p)\n\
                  seen = set()\n\
                  for line in open('/proc/self/maps'):\n\
                  \x20   f = line.split()\n\
                  \x20   if len(f) >= 6 and f[5].endswith('/' + sys.argv[1]):\n\
                  \x20       seen.add((f[3], f[4]))\n\
                  print(len(seen))\n";
    let mut command = Command::new(venv.join("bin/python"));
    command.args(["-c", script, name]).args(paths);
    let out = run_command(&mut command);
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

fn run_command(command: &mut Command) -> Output {
    let out = command.env_remove("LD_LIBRARY_PATH").output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    out
}

/// A venv with the real build installed and unpacked, whose core was then
/// reinstalled (what a later image layer does to core: pip writes every file
/// anew), so the devel tree's hard links to core are copies now. Returns the
/// venv, the two paths of one library and its name.
fn separated_install() -> (Venv, PathBuf, [PathBuf; 2], &'static str) {
    let (dir, venv) = venv(false);
    pip_install(&venv, &real_build().dist(), &[], &[]);
    let sp = common::site_packages_of(&venv);
    ok(&run(&venv.join("bin/rocm-sdk"), &["init"], &[]));
    let library = "libamdhip64.so.7";
    let both = [
        sp.join("_rocm_sdk_core/lib").join(library),
        sp.join("_rocm_sdk_devel/lib").join(library),
    ];
    assert_eq!(
        files_mapped(&venv, &both, library),
        1,
        "one file, mapped once"
    );

    let mut reinstall = pip(&venv);
    reinstall
        .arg("install")
        .args([
            "--no-index",
            "--force-reinstall",
            "--no-deps",
            "--find-links",
        ])
        .arg(real_build().dist())
        .arg("rocm-sdk-core");
    run_command(&mut reinstall);
    assert_eq!(
        files_mapped(&venv, &both, library),
        2,
        "the devel path is a copy now: two files mapped"
    );
    (dir, venv, both, library)
}

#[test]
fn links_an_image_layer_separated_fail_the_test_and_init_links_them_again() {
    let (_dir, venv, both, library) = separated_install();
    let rocm_sdk = venv.join("bin/rocm-sdk");

    let out = run(&rocm_sdk, &["test"], &[]);
    let failed = failures(&out);
    assert_eq!(failed.len(), 1, "{failed:#?}");
    let line = &failed[0];
    assert!(
        line.starts_with("FAIL devel: runtime links (")
            && line.contains(
                " devel paths are no longer the same files as their runtime files (an image \
                 layer, a copy of site-packages or a reinstall separated them), so a process \
                 loading a library through both paths maps two copies; run `rocm-sdk init` to \
                 link them again: "
            )
            && line.contains("_rocm_sdk_devel/bin/hipcc is a copy, not _rocm_sdk_core/bin/hipcc; "),
        "{line}"
    );
    // The test reports; it does not repair.
    assert_eq!(failures(&run(&rocm_sdk, &["test"], &[])), failed);

    let init = ok(&run(&rocm_sdk, &["init"], &[]));
    assert!(
        init.starts_with("linked ") && init.contains(" devel paths to their runtime files again"),
        "{init}"
    );
    assert_healthy(&run(&rocm_sdk, &["test"], &[]), "after init");
    assert_eq!(files_mapped(&venv, &both, library), 1, "mapped once again");
    // Idempotent: nothing more to link.
    let again = ok(&run(&rocm_sdk, &["init"], &[]));
    assert!(again.starts_with("devel tree ready: "), "{again}");
}

#[test]
fn the_first_devel_tool_launch_after_a_reinstall_links_them_again() {
    let (_dir, venv, both, library) = separated_install();
    // A devel tool's console script sees the reinstalled core's new RECORD
    // in the links stamp and has `rocm-sdk init` mend the links first.
    let mut tool = Command::new(venv.join("bin/hipconfig"));
    tool.arg("--rocmpath");
    run_command(&mut tool);
    assert_eq!(files_mapped(&venv, &both, library), 1, "mapped once again");
    assert_healthy(
        &run(&venv.join("bin/rocm-sdk"), &["test"], &[]),
        "after the launch",
    );
}
