"""Shared fixtures: the repository, the mcpres command built from the same
sources as the package, and the committed vectors the two must agree on."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def mcpres_bin():
    """The command to compare with: MCPRES_BIN, else the debug build."""
    path = os.environ.get("MCPRES_BIN") or str(ROOT / "target" / "debug" / "mcpres")
    if not os.access(path, os.X_OK):
        raise RuntimeError(
            f"no mcpres binary at {path}: build it (cargo build) or set MCPRES_BIN"
        )
    return path


def run_cli(args, *, stdin=None):
    """Run mcpres in the repository root; returns (exit code, stdout lines as dicts)."""
    proc = subprocess.run(
        [mcpres_bin(), *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        timeout=600,
    )
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return proc.returncode, lines, proc.stderr.decode("utf-8", "replace")


def committed_files():
    """Every committed single-file vector: each *.json under testdata/, and
    the single-file documents at the top of bundles/ (relative paths, as the
    command reports them)."""
    files = sorted(
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / "testdata").rglob("*.json")
        if p.is_file() and not p.is_symlink()
    )
    files += sorted(
        p.relative_to(ROOT).as_posix() for p in (ROOT / "bundles").glob("*.json")
    )
    return files


def committed_dirs():
    """The committed bundle and evaluation directories of bundles/."""
    dirs = [ROOT / "bundles" / "example-genuine-runtime", ROOT / "bundles" / "field" / "evidence"]
    for family in ("harness", "oauth", "profiles"):
        dirs += sorted(p for p in (ROOT / "bundles" / family).iterdir() if p.is_dir())
    return [d.relative_to(ROOT).as_posix() for d in dirs]


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(autouse=True)
def _in_root(monkeypatch):
    # Paths are given relative to the repository, as to the command.
    monkeypatch.chdir(ROOT)
