//! Runtime aliases end to end (docs/behaviour.md#runtime-aliases): from
//! the runtime wheels alone, the example's libhipfft opens `librocblas.so`
//! by name, and a consumer library whose RUNPATH points at core (the way
//! PyTorch's wheels point at ROCm's) opens `libamdhip64.so` and
//! `librocblas.so` by name, resolves a symbol, and finds each library mapped
//! once beside its SONAME; linking `-lX` against the devel tree still
//! takes the real library.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Build, Venv, ok};
use elf_surgery::ElfFile;
use fixtures::ExampleMode;

/// Runs `python -c code args…` of the venv in a fresh process.
fn python(venv: &Venv, code: &str, args: &[&str]) -> String {
    let mut all = vec!["-I", "-c", code];
    all.extend_from_slice(args);
    ok(&venv.run("python", &all)).trim().to_owned()
}

/// Installs `requirement` from the kpack example's wheels.
fn installed(requirement: &str) -> (Venv, PathBuf) {
    let venv = Venv::new();
    ok(&venv.pip_install(&Build::shared(ExampleMode::Kpack).dist(), &[requirement]));
    let sp = fs::canonicalize(venv.site_packages()).unwrap();
    (venv, sp)
}

const USE_BLAS: &str = "import ctypes, sys\n\
    hipfft = ctypes.CDLL(sys.argv[1] + '/_rocm_sdk_libraries/lib/libhipfft.so.0')\n\
    print(hipfft.hipfftUseBlas())\n";

#[test]
fn the_example_opens_an_unversioned_name_from_runtime_wheels_alone() {
    let (venv, sp) = installed("rocm[libraries]");
    assert!(!sp.join("_rocm_sdk_devel").exists(), "no devel tree");
    let sp_text = sp.display().to_string();
    // 0: librocblas.so opened and rocblas_create_handle called through it.
    assert_eq!(python(&venv, USE_BLAS, &[&sp_text]), "0");

    // The alias is what makes it work: without it the name is not found (1).
    let alias = sp.join("_rocm_sdk_core/lib/librocblas.so");
    let target = ElfFile::open(&alias).unwrap();
    assert_eq!(
        elf_surgery::alias_target(&target, "librocblas.so"),
        Some("librocblas.so.5")
    );
    assert!(fs::metadata(&alias).unwrap().len() < 1024);
    fs::remove_file(&alias).unwrap();
    assert_eq!(python(&venv, USE_BLAS, &[&sp_text]), "1");
}

/// A consumer library: opens a name by name (through its own RUNPATH),
/// looks a symbol up through that handle, opens the SONAME too, and counts
/// the mappings of the SONAME's file from its start.
const CONSUMER: &str = r#"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
int consumer_check(const char *name, const char *symbol, const char *soname) {
    void *by_name = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!by_name) { fprintf(stderr, "%s\n", dlerror()); return -1; }
    void *function = dlsym(by_name, symbol);
    if (!function) { fprintf(stderr, "%s\n", dlerror()); return -2; }
    void *by_soname = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!by_soname || dlsym(by_soname, symbol) != function) return -3;
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    int loads = 0;
    while (maps && fgets(line, sizeof line, maps)) {
        unsigned long start, end, offset;
        char perms[8];
        char *path = strchr(line, '/');
        if (!path || sscanf(line, "%lx-%lx %7s %lx", &start, &end, perms, &offset) != 4) continue;
        path[strcspn(path, "\n")] = 0;
        if (offset == 0 && strcmp(strrchr(path, '/') + 1, soname) == 0) loads++;
    }
    return loads;
}
"#;

const RUN_CONSUMER: &str = "import ctypes, sys\n\
    consumer = ctypes.CDLL(sys.argv[1])\n\
    check = consumer.consumer_check\n\
    check.argtypes = [ctypes.c_char_p] * 3\n\
    print(' '.join(str(check(*(a.encode() for a in sys.argv[i:i + 3]))) for i in range(2, len(sys.argv), 3)))\n";

#[test]
fn a_consumer_pointing_at_core_opens_unversioned_names_mapped_once() {
    let (venv, sp) = installed("rocm[libraries]");
    // Beside the ROCm packages, as a framework's wheel installs.
    let package = sp.join("consumer_pkg");
    fs::create_dir_all(&package).unwrap();
    let source = venv.scratch().join("consumer.c");
    fs::write(&source, CONSUMER).unwrap();
    let consumer = package.join("libconsumer.so");
    ok(&Command::new("gcc")
        .args([
            "-shared",
            "-fPIC",
            "-O1",
            "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../_rocm_sdk_core/lib",
            "-o",
        ])
        .arg(&consumer)
        .arg(&source)
        .arg("-ldl")
        .output()
        .unwrap());
    let consumer = consumer.display().to_string();
    let names = [
        "libamdhip64.so",
        "hipGetDeviceCount",
        "libamdhip64.so.7",
        "librocblas.so",
        "rocblas_create_handle",
        "librocblas.so.5",
    ];
    let mut args = vec![consumer.as_str()];
    args.extend(names);
    // Each library found by name, its symbol resolved, mapped once.
    assert_eq!(python(&venv, RUN_CONSUMER, &args), "1 1");
}

/// In a fresh interpreter: `ctypes.CDLL("libamdhip64.so")` before and after
/// `initialize_process`, the function addresses through both handles, a C
/// `dlopen` of the bare name from a library with no search path of its
/// own (the consumer, outside site-packages), and `find_library_path`.
const AFTER_INITIALIZE: &str = "import ctypes, sys, rocm_sdk\n\
    def opens(name):\n\
    \x20   try:\n\
    \x20       ctypes.CDLL(name)\n\
    \x20       return 'found'\n\
    \x20   except OSError:\n\
    \x20       return 'not-found'\n\
    before = opens('libamdhip64.so')\n\
    rocm_sdk.initialize_process(preload_shortnames=['amdhip64'])\n\
    hip = ctypes.CDLL('libamdhip64.so')\n\
    real = rocm_sdk._ALL_CDLLS['amdhip64']\n\
    address = lambda h: ctypes.cast(h.hipGetDeviceCount, ctypes.c_void_p).value\n\
    check = ctypes.CDLL(sys.argv[1]).consumer_check\n\
    check.argtypes = [ctypes.c_char_p] * 3\n\
    loads = check(b'libamdhip64.so', b'hipGetDeviceCount', b'libamdhip64.so.7')\n\
    print(before, address(hip) == address(real), loads, rocm_sdk.find_library_path('libamdhip64.so'))\n";

#[test]
fn python_opens_unversioned_names_after_initialize_process() {
    let (venv, sp) = installed("rocm[libraries]");
    // A library with no RUNPATH, outside site-packages: "any library".
    let source = venv.scratch().join("consumer.c");
    fs::write(&source, CONSUMER).unwrap();
    let consumer = venv.scratch().join("libconsumer.so");
    ok(&Command::new("gcc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&consumer)
        .arg(&source)
        .arg("-ldl")
        .output()
        .unwrap());
    let out = python(&venv, AFTER_INITIALIZE, &[consumer.to_str().unwrap()]);
    // Not found before; after: the same function through the bare name,
    // the C dlopen finds it too, the library mapped once, and its path.
    let real = fs::canonicalize(sp.join("_rocm_sdk_core/lib/libamdhip64.so.7")).unwrap();
    let (head, path) = out.rsplit_once(' ').unwrap();
    assert_eq!(head, "not-found True 1", "{out}");
    assert_eq!(fs::canonicalize(path).unwrap(), real, "{out}");
}

fn needed(path: &Path) -> Vec<String> {
    ElfFile::open(path).unwrap().needed().to_vec()
}

#[test]
fn linking_against_the_devel_tree_takes_the_real_libraries() {
    let (venv, sp) = installed("rocm[libraries,devel]");
    ok(&venv.run("rocm-sdk", &["init", "--quiet"]));
    let devel_lib = sp.join("_rocm_sdk_devel/lib");
    for (name, soname) in [
        ("libamdhip64.so", "libamdhip64.so.7"),
        ("librocblas.so", "librocblas.so.5"),
    ] {
        // The devel tree's name is the real library, not the alias.
        let devel = ElfFile::open(&devel_lib.join(name)).unwrap();
        assert_eq!(devel.soname(), Some(soname), "{name}");
        assert!(sp.join("_rocm_sdk_core/lib").join(name).is_file(), "{name}");
    }
    let source = venv.scratch().join("user.c");
    fs::write(
        &source,
        "int hipGetDeviceCount(int *);\nint rocblas_create_handle(void **);\n\
         int user(void) { int n; void *h; return hipGetDeviceCount(&n) + rocblas_create_handle(&h); }\n",
    )
    .unwrap();
    let out = venv.scratch().join("libuser.so");
    ok(&Command::new("gcc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&out)
        .arg(&source)
        .arg(format!("-L{}", devel_lib.display()))
        .args(["-lamdhip64", "-lrocblas"])
        .output()
        .unwrap());
    let rocm: Vec<String> = needed(&out)
        .into_iter()
        .filter(|n| !n.starts_with("libc."))
        .collect();
    assert_eq!(rocm, ["libamdhip64.so.7", "librocblas.so.5"]);
}

/// `plan` of the kpack example with `extra` flags: its exit code and its
/// stdout and stderr, the artifact directory replaced by `[ARTIFACTS]`.
fn plan(extra: &[&str]) -> (i32, String, String) {
    let dir = common::artifacts(ExampleMode::Kpack);
    let mut args = vec!["plan", "--artifact-dir", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = common::therock_package(&args);
    let text = |bytes: &[u8]| {
        String::from_utf8_lossy(bytes).replace(&dir.display().to_string(), "[ARTIFACTS]")
    };
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

#[test]
fn a_runtime_alias_asked_for_is_planned_with_its_reason_or_refused_naming_it() {
    let (code, stdout, stderr) = plan(&["--runtime-alias", "libhipfft.so"]);
    assert_eq!(code, 0, "{stderr}");
    let aliases: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("runtime alias"))
        .map(str::trim)
        .collect();
    insta::assert_snapshot!(aliases.join("\n"), @"
    runtime alias _rocm_sdk_core/lib/libamdhip64.so for libamdhip64.so.7 (896 bytes): opened by name by programs that load HIP at run time (PyTorch's preloading among them)
    runtime alias _rocm_sdk_core/lib/libhipfft.so for libhipfft.so.0 (920 bytes): asked for with --runtime-alias
    runtime alias _rocm_sdk_core/lib/librocblas.so for librocblas.so.5 (920 bytes): found in lib/libhipfft.so.0.1 (fft_lib_generic)
    ");

    let (code, _, stderr) = plan(&["--runtime-alias", "libhipfft.so.0"]);
    assert_eq!(code, 2, "{stderr}");
    insta::assert_snapshot!(stderr.trim_end(), @"
    error: invalid value 'libhipfft.so.0' for '--runtime-alias <NAME>': not an unversioned library name; give a file name like libamdhip64.so

    For more information, try '--help'.
    ");
    let (code, _, stderr) = plan(&["--runtime-alias", "libnothere.so"]);
    assert_eq!(code, 1, "{stderr}");
    insta::assert_snapshot!(stderr.trim_end(), @"therock-package: error: --runtime-alias libnothere.so: no runtime package ships a library whose SONAME is a versioned form of it (libnothere.so.N); check the name or leave the flag out");
}

/// A member of the wheel in `dist` whose file name starts with `prefix`.
fn member(dist: &Path, prefix: &str, name: &str) -> Vec<u8> {
    let wheel = fixtures::files::entry_starting_with(dist, prefix);
    wheel_writer::WheelReader::open(&wheel)
        .unwrap()
        .read_member(name, u64::MAX)
        .unwrap()
}

#[test]
fn verify_refuses_an_alias_that_reaches_nothing_or_shadows_a_real_file() {
    let shared = Build::shared(ExampleMode::Kpack).dist();
    let dist = tempfile::tempdir().unwrap();
    for file in fs::read_dir(&shared).unwrap() {
        let file = file.unwrap().path();
        fs::copy(&file, dist.path().join(file.file_name().unwrap())).unwrap();
    }
    // Another wheel of the set: core's alias of the HIP library where its
    // `$ORIGIN` reaches no libamdhip64.so.7, and a real library (rocBLAS
    // itself, SONAME librocblas.so.5) under the name of core's other alias.
    let alias = member(
        dist.path(),
        "rocm_sdk_core-",
        "_rocm_sdk_core/lib/libamdhip64.so",
    );
    let rocblas = member(
        dist.path(),
        "rocm_sdk_libraries-",
        "_rocm_sdk_libraries/lib/librocblas.so.5",
    );
    fixtures::raw_wheel::RawWheel::new("extra", "1.0")
        .file("extra/__init__.py", b"")
        .file("extra/lib/libamdhip64.so", &alias)
        .file("extra/lib/librocblas.so", &rocblas)
        .write(dist.path());
    let report = common::fails(&common::verify(&[dist.path()], &[]));
    let problems: Vec<&str> = report
        .lines()
        .skip_while(|l| !l.starts_with("FAILED  runtime-aliases"))
        .take_while(|l| !l.starts_with("ok") && !l.starts_with("FAILED  search"))
        .collect();
    insta::assert_snapshot!(problems.join("\n"), @"
    FAILED  runtime-aliases: every runtime alias (libX.so standing for a library of the set) reaches its library inside the set and shadows no real file (3 aliases)
            - _rocm_sdk_core/lib/librocblas.so (in rocm_sdk_core-7.1.0-py3-none-linux_x86_64.whl): the runtime alias has the name of the real file extra/lib/librocblas.so (in extra-1.0-py3-none-linux_x86_64.whl); a lookup by name could find the alias instead of it; rebuild the set
            - extra/lib/libamdhip64.so (in extra-1.0-py3-none-linux_x86_64.whl): the runtime alias stands for libamdhip64.so.7, which its RUNPATH does not reach inside the set; rebuild the set with the library's package
    ");
}
