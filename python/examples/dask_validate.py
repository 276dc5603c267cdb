#!/usr/bin/env python3
"""Validate a corpus of MCP-RES bundles on a Dask distributed cluster with the
`mcpres` Python package: one JSON result line per bundle (the object
`mcpres validate --format json` prints for it) and a summary.

    # a local cluster of two single-threaded worker processes (loopback only)
    python dask_validate.py --files-from list.txt -o results.jsonl

    # a real cluster: only the address changes
    python dask_validate.py --scheduler tcp://scheduler.internal:8786 \
        --files-from list.txt -o results.jsonl

Inputs are paths, read by the workers: on a real cluster they must see the
same files (a shared or object-store mount). `--send-bytes` instead reads each
file on the client and ships its bytes with the task, for workers without the
files (results then name the file as given).

The list is cut into chunks of `--chunk` inputs; at most `--in-flight` chunks
are queued at once, so neither the client nor the scheduler holds the whole
corpus's results, and lines are written as chunks finish (completion order;
every line names its `file`). The results file must not exist. The summary
(counts, the exit code `mcpres validate` would give for the whole corpus,
wall time and bundles per second) goes to standard output as one JSON object
and, with `--summary FILE`, to a file. Exit code: that of the corpus (0 all
valid, 1 a failing bundle, 2 an unreadable one), or 3 when the example itself
cannot run.
"""

import argparse
import json
import os
import sys
import time


def validate_chunk(items, send_bytes, jobs):
    """Runs on a worker: judge one chunk, return (lines, exit codes)."""
    import mcpres

    if send_bytes:
        results = [mcpres.validate(data, name=name) for name, data in items]
    else:
        results = mcpres.validate_batch(items, jobs=jobs)
    lines = [json.dumps(r, separators=(",", ":"), ensure_ascii=False) for r in results]
    return lines, [mcpres.exit_code(r) for r in results]


def read_inputs(args):
    paths = list(args.inputs)
    if args.files_from:
        with open(args.files_from, encoding="utf-8") as f:
            paths += [line.rstrip("\n") for line in f if line.strip()]
    return paths


def chunks(paths, size, send_bytes):
    for start in range(0, len(paths), size):
        part = paths[start : start + size]
        if send_bytes:
            items = []
            for p in part:
                try:
                    with open(p, "rb") as f:
                        items.append((p, f.read()))
                except OSError as e:
                    # Judged on the worker as what it is: no document.
                    items.append((p, f"unreadable: {e}".encode()))
            yield items
        else:
            yield part


def run(args, client, paths):
    from dask.distributed import as_completed

    started = time.perf_counter()
    counts = {"valid": 0, "failing": 0, "unusable": 0}
    exit_code = 0
    done = 0
    pending = chunks(paths, args.chunk, args.send_bytes)
    with open(args.output, "x", encoding="utf-8") as out:
        queue = as_completed()
        for _ in range(args.in_flight):
            part = next(pending, None)
            if part is None:
                break
            queue.add(client.submit(validate_chunk, part, args.send_bytes, args.jobs, pure=False))
        for future in queue:
            lines, codes = future.result()
            future.release()
            out.write("\n".join(lines) + "\n")
            for c in codes:
                counts[("valid", "failing", "unusable")[c]] += 1
                exit_code = max(exit_code, c)
            done += len(lines)
            if args.progress:
                print(f"\r{done}/{len(paths)} bundles", end="", file=sys.stderr, flush=True)
            part = next(pending, None)
            if part is not None:
                queue.add(client.submit(validate_chunk, part, args.send_bytes, args.jobs, pure=False))
    if args.progress:
        print(file=sys.stderr)
    seconds = time.perf_counter() - started
    workers = _workers(client)
    return {
        "inputs": len(paths),
        **counts,
        "exitCode": exit_code,
        "seconds": round(seconds, 3),
        "bundlesPerSecond": round(len(paths) / seconds, 1) if seconds else None,
        "workers": len(workers),
        "threadsPerWorker": sorted({w.get("nthreads", 0) for w in workers.values()}),
        "chunk": args.chunk,
        "sendBytes": args.send_bytes,
        "output": os.fspath(args.output),
    }


def _workers(client):
    """Every worker the scheduler knows (newer releases list only a few by default)."""
    try:
        return client.scheduler_info(n_workers=-1)["workers"]
    except TypeError:
        return client.scheduler_info()["workers"]


class Parser(argparse.ArgumentParser):
    """Usage errors exit 3: 1 and 2 are the corpus's own verdicts."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(3, f"{self.prog}: error: {message}\n")


def main(argv=None):
    ap = Parser(
        description="Validate MCP-RES bundles on a Dask distributed cluster with the mcpres package."
    )
    ap.add_argument("inputs", nargs="*", help="bundle files or directories")
    ap.add_argument("--files-from", metavar="LIST", help="a file with one input path per line")
    ap.add_argument("-o", "--output", required=True, help="results file, one JSON line per bundle (must not exist)")
    ap.add_argument("--summary", metavar="FILE", help="also write the summary here (must not exist)")
    ap.add_argument("--scheduler", metavar="ADDRESS", help="a running cluster's scheduler address; default: a local cluster")
    ap.add_argument("--local-workers", type=int, default=2, help="worker processes of the local cluster (default 2)")
    ap.add_argument("--chunk", type=int, default=500, help="inputs per task (default 500)")
    ap.add_argument("--in-flight", type=int, default=8, help="tasks queued at once (default 8)")
    ap.add_argument("--jobs", type=int, default=1, help="Rust threads per task (default 1: one per worker thread)")
    ap.add_argument("--send-bytes", action="store_true", help="ship file bytes from the client instead of paths")
    ap.add_argument("--progress", action="store_true", help="a progress line on standard error")
    args = ap.parse_args(argv)
    if args.chunk < 1 or args.in_flight < 1 or args.jobs < 1 or args.local_workers < 1:
        ap.error("--chunk, --in-flight, --jobs and --local-workers must be at least 1")
    if os.path.exists(args.output):
        ap.error(f"{args.output} exists: the results file is never overwritten")
    if args.summary and os.path.exists(args.summary):
        ap.error(f"{args.summary} exists: the summary file is never overwritten")

    try:
        paths = read_inputs(args)
    except OSError as e:
        ap.error(f"--files-from: {e}")
    if not paths:
        ap.error("no inputs (give paths or --files-from LIST)")

    from dask.distributed import Client, LocalCluster

    if args.scheduler:
        client = Client(args.scheduler)
        cluster = None
    else:
        # Loopback only, no dashboard: nothing listens beyond this machine.
        cluster = LocalCluster(
            n_workers=args.local_workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        )
        client = Client(cluster)
    try:
        summary = run(args, client, paths)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    text = json.dumps(summary, sort_keys=True)
    print(text)
    if args.summary:
        with open(args.summary, "x", encoding="utf-8") as f:
            f.write(text + "\n")
    return summary["exitCode"]


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
