"""The package's own behaviour: argument handling, errors, threads and the GIL."""

import concurrent.futures
import subprocess
import threading
import time

import pytest

import mcpres
from conftest import ROOT, mcpres_bin, run_cli

VALID = "testdata/hostile/valid-bundle.json"


def test_the_module_names_its_functions_and_version():
    for name in mcpres.__all__:
        assert hasattr(mcpres, name), name
    assert mcpres.__version__
    assert issubclass(mcpres.McpresError, ValueError)


def test_every_code_is_explained_like_the_command():
    codes = mcpres.codes()
    assert len(codes) == len(set(codes)) > 50
    for c in codes:
        e = mcpres.explain(c)
        assert e["code"] == c
        assert set(e) == {"code", "rule", "title", "meaning", "example", "fix"}
        assert all(isinstance(v, str) and v for v in e.values())
    e = mcpres.explain("wrong_stop_reason")
    assert e["code"] == "MCP_RES_WRONG_STOP_REASON"
    assert e["rule"] == "MCPRES-NEG-002"
    text = subprocess.run(
        [mcpres_bin(), "explain", "MCP_RES_WRONG_STOP_REASON"], capture_output=True, check=True
    ).stdout.decode()
    for key in ("title", "meaning", "example", "fix"):
        assert e[key] in text
    with pytest.raises(KeyError):
        mcpres.explain("MCP_RES_NO_SUCH_CODE")


def test_every_reason_code_is_explained_like_the_command():
    reasons = mcpres.reasons()
    assert len(reasons) == len(set(reasons)) > 50
    assert not set(reasons) & set(mcpres.codes())
    for c in reasons:
        e = mcpres.explain(c)
        assert e["code"] == c
        assert set(e) == {"code", "family", "kind", "title", "meaning"}
        assert e["kind"] in {"holds", "refused", "wrong-reason", "not-observed"}
        assert all(isinstance(v, str) and v for v in e.values())
    e = mcpres.explain("framing_newline_delimited")
    assert e["code"] == "MCP_RES_FRAMING_NEWLINE_DELIMITED"
    assert (e["family"], e["kind"]) == ("stdio-transport", "holds")
    text = subprocess.run(
        [mcpres_bin(), "explain", "MCP_RES_FRAMING_NEWLINE_DELIMITED"],
        capture_output=True,
        check=True,
    ).stdout.decode()
    for key in ("family", "kind", "title", "meaning"):
        assert e[key] in text
    # A member of a generated family names its template.
    e = mcpres.explain("MCP_RES_HTTP_STATUS_503")
    assert e["code"] == "MCP_RES_HTTP_STATUS_503"
    assert e["template"] == "MCP_RES_HTTP_STATUS_{n}"
    assert "MCP_RES_HTTP_STATUS_{n}" in reasons


def test_a_path_may_be_a_pathlike_and_bytes_take_a_name():
    by_str = mcpres.validate(VALID)
    by_path = mcpres.validate(ROOT / VALID)
    assert by_str["valid"] and by_path["valid"]
    assert by_path["file"] == str(ROOT / VALID)
    assert mcpres.validate((ROOT / VALID).read_bytes())["file"] == "<bytes>"
    assert mcpres.validate((ROOT / VALID).read_bytes(), name="x.json")["file"] == "x.json"


def test_unreadable_input_is_a_result_not_an_exception():
    r = mcpres.validate("no/such/file.json")
    assert r["valid"] is False
    assert r["diagnostics"] == ["MCP_RES_INPUT_INVALID"]
    assert mcpres.exit_code(r) == 2
    r = mcpres.validate(b"{\"a\": 1.5}")
    assert mcpres.exit_code(r) == 2
    assert "line 1" in r["findings"][0]["message"]


def test_a_tampered_bundle_fails_with_a_named_diagnostic():
    data = bytearray((ROOT / VALID).read_bytes())
    # Change one hex digit of the first digest the document holds.
    key = b'Sha256": "'
    at = data.index(key) + len(key)
    data[at] = ord("0") if data[at] != ord("0") else ord("1")
    r = mcpres.validate(bytes(data))
    assert r["valid"] is False
    assert mcpres.exit_code(r) == 1
    assert r["diagnostics"] and r["diagnostics"][0] != "MCP_RES_INPUT_INVALID"


def test_wrong_argument_types_and_options_raise():
    with pytest.raises(TypeError):
        mcpres.validate(42)
    with pytest.raises(mcpres.McpresError, match="RFC 3339"):
        mcpres.verify(VALID, at="yesterday")
    with pytest.raises(mcpres.McpresError, match="trust policy"):
        mcpres.verify(VALID, trust_policy=VALID)
    with pytest.raises(mcpres.McpresError, match="trust policy"):
        mcpres.verify(VALID, trust_policy="no/such/policy.json")
    with pytest.raises(ValueError, match="unknown digest kind"):
        mcpres.digest(VALID, "sha1")
    with pytest.raises(mcpres.McpresError):
        mcpres.canonicalize(b"[1, 2.5]")
    with pytest.raises(ValueError):
        mcpres.validate_batch([VALID], jobs=0)
    with pytest.raises(TypeError):
        mcpres.validate_batch([VALID, 3])


def test_a_trust_policy_and_time_reach_the_verifier():
    attested = "bundles/example-attested.json"
    policy = "bundles/example-trust-policy.json"
    code, lines, err = run_cli(
        ["verify", "--format", "json", "--trust-policy", policy, "--at", "2026-12-01T00:00:00Z", attested]
    )
    got = mcpres.verify(attested, trust_policy=policy, at="2026-12-01T00:00:00Z")
    assert got == lines[0], err
    assert got["valid"] is True
    assert got["authenticityClassification"] == "SIGNED_WITH_IDENTITY"
    assert got != mcpres.verify(attested)


def test_many_threads_get_the_same_answers_as_one():
    files = sorted(
        p.relative_to(ROOT).as_posix() for p in (ROOT / "testdata" / "vectors").rglob("*.json")
    )
    expected = [mcpres.validate(f) for f in files]
    work = files * 20
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(mcpres.validate, work))
    assert got == expected * 20


def test_the_gil_is_released_while_validating():
    # A Python thread counts while the main thread is inside one long call.
    # Holding the GIL for the whole call would leave the counter where it was
    # (give or take the one switch before the call starts).
    data = (ROOT / VALID).read_bytes()
    batch = [data] * 1000
    ticks = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.0005)

    t = threading.Thread(target=count)
    t.start()
    try:
        time.sleep(0.01)
        before = ticks[0]
        results = mcpres.validate_batch(batch, jobs=1)
        during = ticks[0] - before
    finally:
        stop.set()
        t.join()
    assert all(r["valid"] for r in results)
    assert during > 20, during
