"""The distributed example on a real local Dask cluster (two worker
processes on loopback): one line per bundle, equal to the command's, and a
summary whose counts are those the generated corpus was built to give."""

import json
import os
import subprocess
import sys

import pytest

import mcpres
from conftest import ROOT, run_cli

EXAMPLES = ROOT / "python" / "examples"
N = 600


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus") / "c"
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "make_corpus.py"), str(out), str(N), "--seed", "7"],
        capture_output=True,
        check=True,
    )
    made = json.loads(proc.stdout)
    assert made["bundles"] == N
    # Every kind is present, or the test proves little.
    assert made["valid"] and made["tampered"] and made["unreadable"], made
    expected = json.loads((out / "expected.json").read_text())
    return out, expected


def run_example(*args, timeout=600):
    return subprocess.run(
        [sys.executable, str(EXAMPLES / "dask_validate.py"), *args],
        capture_output=True,
        timeout=timeout,
        cwd=ROOT,
    )


def test_the_corpus_gets_what_it_was_built_to_get(corpus):
    out, expected = corpus
    for path, e in list(expected.items())[:: max(1, N // 60)]:
        assert mcpres.exit_code(mcpres.validate(path)) == e["exit"], (path, e)


@pytest.mark.parametrize("send_bytes", [False, True])
def test_a_two_worker_cluster_writes_one_line_per_bundle(corpus, tmp_path, send_bytes):
    out, expected = corpus
    results = tmp_path / "results.jsonl"
    summary_file = tmp_path / "summary.json"
    args = ["--files-from", str(out / "list.txt"), "-o", str(results), "--summary", str(summary_file), "--chunk", "50"]
    if send_bytes:
        args.append("--send-bytes")
    proc = run_example(*args)
    err = proc.stderr.decode("utf-8", "replace")
    summary = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    assert summary == json.loads(summary_file.read_text())
    assert proc.returncode == 2, err  # the corpus holds unreadable bundles
    assert summary["exitCode"] == 2
    assert summary["workers"] == 2 and summary["threadsPerWorker"] == [1], summary
    assert summary["inputs"] == N
    kinds = [e["kind"] for e in expected.values()]
    assert summary["valid"] == kinds.count("valid")
    assert summary["failing"] == kinds.count("tampered")
    assert summary["unusable"] == kinds.count("unreadable")

    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert len(lines) == N
    by_file = {line["file"]: line for line in lines}
    assert sorted(by_file) == sorted(expected)

    # Each line is what the command prints for that bundle.
    code, cli_lines, cli_err = run_cli(["validate", "--format", "json", "--files-from", str(out / "list.txt")])
    assert code == 2, cli_err
    assert len(cli_lines) == N
    for cli_line in cli_lines:
        assert by_file[cli_line["file"]] == cli_line, cli_line["file"]


def test_an_existing_results_file_is_never_overwritten(corpus, tmp_path):
    out, _ = corpus
    results = tmp_path / "results.jsonl"
    results.write_text("keep me\n")
    proc = run_example("--files-from", str(out / "list.txt"), "-o", str(results))
    assert proc.returncode == 3
    assert b"never overwritten" in proc.stderr
    assert results.read_text() == "keep me\n"


def test_no_inputs_is_a_usage_error(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    proc = run_example("--files-from", str(empty), "-o", str(tmp_path / "r.jsonl"))
    assert proc.returncode == 3, proc.stderr
    assert b"no inputs" in proc.stderr
