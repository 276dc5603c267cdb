#!/usr/bin/env python3
"""Write a generated corpus of MCP-RES bundles for the distributed example
and its benchmark: N single-file bundles made from the repository's committed
valid vectors, a share of them deliberately broken, plus a list file naming
them and an expectation file saying what each should get.

    python make_corpus.py OUT_DIR N [--seed S] [--tampered 0.1] [--unreadable 0.05]

Kinds of bundle (chosen per file with a seeded random generator):
  valid       a byte-for-byte copy of a committed valid bundle   -> exit 0
  tampered    the same with one hex digit of its first digest changed
                                                                  -> exit 1
  unreadable  the same cut off in the middle (not JSON any more)  -> exit 2

The output directory must not exist: nothing is overwritten.
"""

import argparse
import json
import os
import pathlib
import random
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEMPLATES = sorted((ROOT / "testdata" / "vectors" / "valid").glob("*.json")) + [
    ROOT / "testdata" / "hostile" / "valid-bundle.json"
]
DIGEST_KEY = b'Sha256": "'


def tamper(data):
    data = bytearray(data)
    at = data.index(DIGEST_KEY) + len(DIGEST_KEY)
    data[at] = ord("0") if data[at] != ord("0") else ord("1")
    return bytes(data)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("n", type=int)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--tampered", type=float, default=0.1)
    ap.add_argument("--unreadable", type=float, default=0.05)
    args = ap.parse_args(argv)
    if args.n < 1:
        ap.error("N must be at least 1")
    templates = [(p.name, p.read_bytes()) for p in TEMPLATES]
    # Keep only templates with a digest to tamper with.
    templates = [(name, data) for name, data in templates if DIGEST_KEY in data]
    if not templates:
        sys.exit("no committed valid vector holds a digest to tamper with")
    rng = random.Random(args.seed)
    bundles = args.out / "bundles"
    bundles.mkdir(parents=True)  # FileExistsError if it is there: never overwrite
    expected = {}
    with open(args.out / "list.txt", "x", encoding="utf-8") as listing:
        for i in range(args.n):
            name, data = templates[rng.randrange(len(templates))]
            roll = rng.random()
            if roll < args.unreadable:
                kind, data, code = "unreadable", data[: len(data) // 2], 2
            elif roll < args.unreadable + args.tampered:
                kind, data, code = "tampered", tamper(data), 1
            else:
                kind, code = "valid", 0
            path = bundles / f"{i:07d}.json"
            with open(path, "xb") as f:
                f.write(data)
            listing.write(f"{path}\n")
            expected[str(path)] = {"kind": kind, "template": name, "exit": code}
    with open(args.out / "expected.json", "x", encoding="utf-8") as f:
        json.dump(expected, f, indent=0, sort_keys=True)
    counts = {}
    for e in expected.values():
        counts[e["kind"]] = counts.get(e["kind"], 0) + 1
    print(json.dumps({"bundles": args.n, "dir": os.fspath(bundles), **counts}))


if __name__ == "__main__":
    main()
