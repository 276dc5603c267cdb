#!/usr/bin/env python3
"""Throughput of the Python package and of the Dask example against the
command, on one corpus (issue 21). Called by bench/python.sh, which builds
the release binary, the release wheel and the corpus.

    python bench/python_bench.py MCPRES_BIN LIST [RUNS]

Prints bundles per second (best of RUNS) for:
  command      mcpres validate --format json --files-from LIST (one process)
  batch        mcpres.validate_batch(paths) in process (Rust threads, one per core)
  threads      mcpres.validate(path) from a 2-thread ThreadPoolExecutor
  loop         mcpres.validate(path) in a plain loop (one thread)
  dask         python/examples/dask_validate.py on a local 2-worker cluster,
               cluster start included and excluded (its own summary's rate)
"""

import concurrent.futures
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import mcpres

ROOT = pathlib.Path(__file__).resolve().parents[1]


def best(runs, fn):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    binary, listing = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    paths = [line.rstrip("\n") for line in open(listing, encoding="utf-8") if line.strip()]
    n = len(paths)

    def command():
        with open(os.devnull, "wb") as sink:
            code = subprocess.run(
                [binary, "validate", "--format", "json", "--files-from", listing], stdout=sink
            ).returncode
        assert code == 0, code

    def batch():
        assert all(r["valid"] for r in mcpres.validate_batch(paths))

    def threads():
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            assert all(r["valid"] for r in pool.map(mcpres.validate, paths, chunksize=64))

    def loop():
        assert all(mcpres.validate(p)["valid"] for p in paths)

    rows = [
        ("command", best(runs, command)),
        ("batch", best(runs, batch)),
        ("threads", best(runs, threads)),
        ("loop", best(runs, loop)),
    ]
    dask_total, dask_inner = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp) / "r.jsonl"
            start = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, str(ROOT / "python" / "examples" / "dask_validate.py"),
                 "--files-from", listing, "-o", str(out), "--chunk", "1000"],
                capture_output=True,
            )
            dask_total.append(time.perf_counter() - start)
            assert proc.returncode == 0, proc.stderr.decode()
            summary = json.loads(proc.stdout.decode().strip().splitlines()[-1])
            assert summary["inputs"] == n and summary["valid"] == n
            dask_inner.append(summary["seconds"])
    rows.append(("dask (whole process)", min(dask_total)))
    rows.append(("dask (validation only)", min(dask_inner)))
    print(f"{n} bundles, best of {runs}; load {open('/proc/loadavg').read().split()[:3]}, {os.cpu_count()} CPUs")
    print(f"{'path':<24} {'seconds':>8} {'bundles/s':>10} {'vs command':>10}")
    base = rows[0][1]
    for name, secs in rows:
        print(f"{name:<24} {secs:>8.3f} {n / secs:>10.0f} {base / secs:>9.2f}x")


if __name__ == "__main__":
    main()
