"""The package and the command agree on every committed vector: the same
dictionary per input (validate and verify), the same canonical bytes and the
same digests."""

import pathlib
import subprocess

import pytest

import mcpres
from conftest import ROOT, committed_dirs, committed_files, mcpres_bin, run_cli

FILES = committed_files()
DIRS = committed_dirs()


def test_there_are_vectors_to_compare():
    # A wrong glob must not turn the comparisons below into nothing.
    assert len(FILES) > 150, FILES
    assert len(DIRS) > 15, DIRS


@pytest.mark.parametrize("command", ["validate", "verify"])
def test_every_file_gives_the_commands_dictionary(command):
    code, lines, err = run_cli([command, "--format", "json", *FILES])
    assert code in (0, 1, 2), err
    assert [line["file"] for line in lines] == FILES, err
    fn = getattr(mcpres, command)
    exits = []
    for path, expected in zip(FILES, lines):
        got = fn(path)
        assert got == expected, path
        exits.append(mcpres.exit_code(got))
    # The command's exit code is the highest of its inputs'.
    assert code == max(exits)
    # Every verdict occurs, or the comparison proves little (without a
    # trust policy no committed attested bundle verifies: see test_package).
    assert {1, 2} <= set(exits)
    if command == "validate":
        assert 0 in exits


def test_bytes_give_the_same_dictionary_as_the_file():
    code, lines, err = run_cli(["validate", "--format", "json", *FILES])
    for path, expected in zip(FILES, lines):
        data = (ROOT / path).read_bytes()
        assert mcpres.validate(data, name=path) == expected, path
        assert mcpres.validate(bytearray(data), name=path) == expected, path


def test_a_batch_gives_the_dictionaries_in_input_order():
    code, lines, err = run_cli(["validate", "--format", "json", *FILES])
    assert mcpres.validate_batch(FILES) == lines
    assert mcpres.validate_batch(FILES, jobs=1) == lines
    code, lines, err = run_cli(["verify", "--format", "json", *FILES])
    assert mcpres.validate_batch(FILES, verify=True, jobs=3) == lines


@pytest.mark.parametrize("path", DIRS)
def test_every_committed_directory_gives_the_commands_dictionary(path):
    code, lines, err = run_cli(["validate", "--format", "json", path])
    assert len(lines) == 1, err
    got = mcpres.validate(path)
    assert got == lines[0]
    assert mcpres.exit_code(got) == code


def valid_documents():
    code, lines, _ = run_cli(["validate", "--format", "json", *FILES])
    return [line["file"] for line in lines if line["valid"]]


def test_canonical_bytes_match_the_command():
    docs = valid_documents()
    assert len(docs) > 20
    for path in docs:
        out = subprocess.run(
            [mcpres_bin(), "canonicalize", path], cwd=ROOT, capture_output=True, check=True
        ).stdout
        assert mcpres.canonicalize(path) == out, path
        assert mcpres.canonicalize((ROOT / path).read_bytes()) == out, path


KINDS = ["observation", "scenario", "evidence", "statement", "execution", "bundle"]


def test_digests_match_the_command_or_both_refuse():
    docs = valid_documents() + ["bundles/example-genuine-runtime"]
    agreed = 0
    for path in docs:
        for kind in KINDS:
            proc = subprocess.run(
                [mcpres_bin(), "digest", "--kind", kind, path], cwd=ROOT, capture_output=True
            )
            if proc.returncode == 0:
                assert mcpres.digest(path, kind) == proc.stdout.decode().strip(), (path, kind)
                if not pathlib.Path(path).is_dir():
                    data = (ROOT / path).read_bytes()
                    assert mcpres.digest(data, kind) == proc.stdout.decode().strip()
                agreed += 1
            else:
                assert proc.returncode == 2, proc.stderr
                with pytest.raises(mcpres.McpresError):
                    mcpres.digest(path, kind)
    assert agreed > 50
