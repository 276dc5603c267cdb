//! The Python package (`python/`, PyO3 + maturin): its pytest suite run
//! against this build's `mcpres` binary. The suite compares the package with
//! the command on every committed vector, checks threads and the GIL, and
//! runs the Dask example on a local two-worker cluster.
//!
//! The package must already be installed in a Python environment named by
//! `MCPRES_PY_PACKAGE_PYTHON` (`.ci/run` builds the wheel from this checkout
//! with maturin and installs it, with pytest and dask[distributed]). Without
//! it the test prints why it skips, unless `MCPRES_REQUIRE_PY_PACKAGE` is set
//! (CI), where its absence fails it.

use std::ffi::OsStr;
use std::process::{Command, Output};

/// pytest on `tests` (paths from the repository root) under `python`,
/// compared with this build's `mcpres`; nothing written into the tree.
fn pytest(python: &OsStr, tests: &[&str]) -> Output {
    Command::new(python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .args(tests)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("MCPRES_BIN", env!("CARGO_BIN_EXE_mcpres"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run pytest")
}

/// pytest succeeded and its last line counts only passed tests: a suite
/// that collected nothing, or skipped or deselected tests, is no success.
fn assert_all_passed(out: &Output, under: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "pytest failed under {under} (exit {:?}); its output is above",
        out.status.code()
    );
    let last = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    assert!(
        last.contains(" passed") && !last.contains("skipped") && !last.contains("deselected"),
        "not every test ran under {under}: {last}"
    );
}

#[test]
fn the_python_package_suite_passes_against_this_build() {
    let Some(python) = std::env::var_os("MCPRES_PY_PACKAGE_PYTHON") else {
        assert!(
            std::env::var_os("MCPRES_REQUIRE_PY_PACKAGE").is_none(),
            "MCPRES_REQUIRE_PY_PACKAGE is set but MCPRES_PY_PACKAGE_PYTHON is not: build and install the wheel (see README, Python package)"
        );
        eprintln!(
            "skipped: MCPRES_PY_PACKAGE_PYTHON names no Python with the mcpres package installed (see README, Python package)"
        );
        return;
    };
    // The package must be importable and be the one built from this tree's
    // crate version (python/Cargo.toml follows the root crate's).
    let version = Command::new(&python)
        .args(["-c", "import mcpres; print(mcpres.__version__)"])
        .output()
        .expect("run the package's Python");
    assert!(
        version.status.success(),
        "cannot import mcpres: {}",
        String::from_utf8_lossy(&version.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        env!("CARGO_PKG_VERSION"),
        "the installed mcpres package is not this version: rebuild and reinstall the wheel"
    );
    let out = pytest(&python, &["python/tests"]);
    assert_all_passed(&out, "the package's Python");
}

/// The wheel is built once for CPython's stable ABI (`abi3`, 3.9 and later):
/// the package's own and vector tests run under every interpreter listed in
/// `MCPRES_PY_PACKAGE_ABI_PYTHONS` (colon-separated; `.ci/run` lists CPython
/// 3.9 and 3.13 where the machine has them, each with that same wheel).
#[test]
fn the_same_abi3_wheel_passes_on_other_cpython_versions() {
    let listed = std::env::var("MCPRES_PY_PACKAGE_ABI_PYTHONS").unwrap_or_default();
    let pythons: Vec<&str> = listed.split(':').filter(|p| !p.is_empty()).collect();
    if pythons.is_empty() {
        eprintln!(
            "skipped: MCPRES_PY_PACKAGE_ABI_PYTHONS lists no other CPython with the wheel installed"
        );
        return;
    }
    for python in pythons {
        let version = Command::new(python)
            .args(["-c", "import sys; print(sys.version.split()[0])"])
            .output()
            .expect("run the listed Python");
        let out = pytest(
            python.as_ref(),
            &[
                "python/tests/test_package.py",
                "python/tests/test_vectors.py",
            ],
        );
        println!(
            "CPython {}:",
            String::from_utf8_lossy(&version.stdout).trim()
        );
        assert_all_passed(&out, python);
    }
}
