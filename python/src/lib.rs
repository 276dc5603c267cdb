//! `mcpres._mcpres`: the Python extension module behind the `mcpres` package.
//!
//! Each function is a thin wrapper over [`mcpres::api`]; none adds a rule of
//! its own, so a dictionary returned here is the object `mcpres validate
//! --format json` prints for the same input. The validator runs with the GIL
//! released (`Python::detach`): many Python threads may call in at once, and
//! [`validate_batch`] spreads a list over Rust threads.
//!
//! One convention for every input: `bytes` are the bytes of one JSON
//! document; `str` and `os.PathLike` name a file or directory.
//!
//! PyO3's macros expand to `unsafe` blocks they mark as allowed; this crate's
//! own code has none (`deny`, not `forbid`, so that the expansion compiles).
#![deny(unsafe_code)]

use std::path::PathBuf;

use mcpres::api::{self, DigestKind, Input, ValidateOptions};
use mcpres::attest::policy::VerifierPolicy;
use mcpres::bundle;
use mcpres::json::Limits;
use mcpres::json::time::Timestamp;
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList};
use rayon::prelude::*;
use serde_json::Value;

/// Rust's allocations in this module (not Python's) go to mimalloc, as in the
/// `mcpres` binary: the validator's many small allocations are its main cost
/// after parsing.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

pyo3::create_exception!(
    _mcpres,
    McpresError,
    PyValueError,
    "An input or option mcpres cannot use: unreadable JSON, a value with no canonical form, a trust policy that is not one, a date-time that is not RFC 3339."
);

/// The name a `bytes` input is reported under when none is given.
const BYTES_NAME: &str = "<bytes>";

/// One input, owned so that it can cross into Rust threads without the GIL.
enum Owned {
    Path(PathBuf),
    Bytes { name: String, bytes: Vec<u8> },
}

impl Owned {
    fn input(&self) -> Input<'_> {
        match self {
            Owned::Path(p) => Input::path(p),
            Owned::Bytes { name, bytes } => Input::bytes(name, bytes),
        }
    }
}

/// `bytes`/`bytearray` are a document; `str`/`os.PathLike` a path.
fn owned(obj: &Bound<'_, PyAny>, name: Option<&str>) -> PyResult<Owned> {
    let name = || name.unwrap_or(BYTES_NAME).to_owned();
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Owned::Bytes {
            name: name(),
            bytes: b.as_bytes().to_vec(),
        });
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Owned::Bytes {
            name: name(),
            bytes: b.to_vec(),
        });
    }
    match obj.extract::<PathBuf>() {
        Ok(p) => Ok(Owned::Path(p)),
        Err(_) => Err(PyTypeError::new_err(format!(
            "expected bytes (a JSON document) or str/os.PathLike (a path), got {}",
            obj.get_type().name()?
        ))),
    }
}

/// The options `mcpres validate` reads from its flags.
fn options(
    trust_policy: Option<PathBuf>,
    at: Option<&str>,
    original_result: Option<&Bound<'_, PyAny>>,
) -> PyResult<ValidateOptions> {
    let limits = Limits::default();
    let mut opts = ValidateOptions::default();
    if let Some(path) = trust_policy {
        let (value, _) = bundle::read_json(&path, &limits)
            .map_err(|e| McpresError::new_err(format!("trust policy {}: {e}", path.display())))?;
        let policy = VerifierPolicy::from_value(&value)
            .map_err(|e| McpresError::new_err(format!("trust policy {}: {e}", path.display())))?;
        opts = opts.with_trust_policy(policy);
    }
    if let Some(text) = at {
        let at = Timestamp::parse(text).ok_or_else(|| {
            McpresError::new_err(format!(
                "at={text:?} is not an RFC 3339 date-time (for example 2026-11-30T12:00:00Z)"
            ))
        })?;
        opts = opts.with_time(at);
    }
    if let Some(obj) = original_result {
        opts.original_result = Some(match owned(obj, None)? {
            Owned::Bytes { bytes, .. } => bytes,
            Owned::Path(p) => bundle::read_file(&p, &limits).map_err(|e| {
                McpresError::new_err(format!("original result {}: {e}", p.display()))
            })?,
        });
    }
    Ok(opts)
}

/// A JSON value as the Python object `json.loads` would give.
fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    match v {
        Value::Null => Ok(py.None().into_bound(py)),
        Value::Bool(b) => b.into_bound_py_any(py),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_bound_py_any(py)
            } else if let Some(u) = n.as_u64() {
                u.into_bound_py_any(py)
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_bound_py_any(py)
            }
        }
        Value::String(s) => s.into_bound_py_any(py),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            Ok(list.into_any())
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, item) in map {
                dict.set_item(k, to_py(py, item)?)?;
            }
            Ok(dict.into_any())
        }
    }
}

fn check(owned: &Owned, opts: &ValidateOptions, verify: bool) -> Value {
    let outcome = if verify {
        api::verify(owned.input(), opts)
    } else {
        api::validate(owned.input(), opts)
    };
    outcome.to_json()
}

/// One input judged without the GIL, returned as its dictionary.
fn judge_one<'py>(
    py: Python<'py>,
    input: &Bound<'py, PyAny>,
    name: Option<&str>,
    opts: &ValidateOptions,
    verify: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let owned = owned(input, name)?;
    let value = py.detach(|| check(&owned, opts, verify));
    to_py(py, &value)
}

/// validate(input, /, *, name=None, trust_policy=None, at=None, original_result=None)
/// --
///
/// Judge one input as `mcpres validate` does and return the dictionary
/// `mcpres validate --format json` prints for it (`file`, `valid`,
/// `diagnostics`, `schemaErrors`, `findings`, ...).
///
/// `input` is `bytes` (one JSON document, reported as `name`, default
/// "<bytes>") or a `str`/`os.PathLike` path to a single-file document, a
/// bundle directory, a profile or OAuth evaluation directory or a field
/// matrix directory. An unreadable input is not an exception: it gives
/// `valid: False` and the `MCP_RES_INPUT_INVALID` diagnostic, as the command
/// does. `trust_policy` (a path) and `at` (RFC 3339) judge attested bundles;
/// `original_result` (bytes or a path) is the unsanitized result an official
/// conformance attachment records. The GIL is released while validating.
#[pyfunction]
#[pyo3(signature = (input, /, *, name=None, trust_policy=None, at=None, original_result=None))]
fn validate<'py>(
    py: Python<'py>,
    input: &Bound<'py, PyAny>,
    name: Option<&str>,
    trust_policy: Option<PathBuf>,
    at: Option<&str>,
    original_result: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let opts = options(trust_policy, at, original_result)?;
    judge_one(py, input, name, &opts, false)
}

/// verify(input, /, *, name=None, trust_policy=None, at=None)
/// --
///
/// Judge one input as an attested bundle, as `mcpres verify` does, and
/// return the dictionary `mcpres verify --format json` prints for it. Any
/// other document fails the attested bundle's schema. `trust_policy` is a
/// path to a `mcp-res.trust-policy/0.2.0` document; without it the
/// signature is checked but no signer is trusted.
#[pyfunction]
#[pyo3(signature = (input, /, *, name=None, trust_policy=None, at=None))]
fn verify<'py>(
    py: Python<'py>,
    input: &Bound<'py, PyAny>,
    name: Option<&str>,
    trust_policy: Option<PathBuf>,
    at: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let opts = options(trust_policy, at, None)?;
    judge_one(py, input, name, &opts, true)
}

/// validate_batch(inputs, /, *, jobs=None, verify=False, trust_policy=None, at=None)
/// --
///
/// Judge many inputs (each as `validate` or, with `verify=True`, as
/// `verify` would) on `jobs` Rust threads (default: one per core) without
/// the GIL, and return their dictionaries in input order. `bytes` inputs
/// are reported as "<bytes>".
#[pyfunction]
#[pyo3(signature = (inputs, /, *, jobs=None, verify=false, trust_policy=None, at=None))]
fn validate_batch<'py>(
    py: Python<'py>,
    inputs: &Bound<'py, PyAny>,
    jobs: Option<usize>,
    verify: bool,
    trust_policy: Option<PathBuf>,
    at: Option<&str>,
) -> PyResult<Bound<'py, PyList>> {
    let owned: Vec<Owned> = inputs
        .try_iter()?
        .map(|item| owned(&item?, None))
        .collect::<PyResult<_>>()?;
    let opts = options(trust_policy, at, None)?;
    let pool = match jobs {
        Some(0) => return Err(PyValueError::new_err("jobs must be at least 1")),
        Some(n) => Some(
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .map_err(|e| McpresError::new_err(format!("cannot start {n} threads: {e}")))?,
        ),
        None => None,
    };
    let values: Vec<Value> = py.detach(|| {
        let run = || {
            owned
                .par_iter()
                .map(|o| check(o, &opts, verify))
                .collect::<Vec<_>>()
        };
        match &pool {
            Some(pool) => pool.install(run),
            None => run(),
        }
    });
    let list = PyList::empty(py);
    for v in &values {
        list.append(to_py(py, v)?)?;
    }
    Ok(list)
}

/// canonicalize(input, /)
/// --
///
/// The canonical bytes of a JSON document (what `mcpres canonicalize`
/// writes): `input` is the document's bytes or a path to it. Raises
/// `mcpres.McpresError` for bytes that are not one strict JSON document or
/// hold a value with no canonical form (a non-integer number, say).
#[pyfunction]
fn canonicalize<'py>(py: Python<'py>, input: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let owned = owned(input, None)?;
    py.detach(|| match &owned {
        Owned::Bytes { bytes, .. } => api::canonicalize(bytes).map_err(|e| e.to_string()),
        Owned::Path(p) => api::canonicalize_path(p).map_err(|e| path_error(p, e)),
    })
    .map(|bytes| PyBytes::new(py, &bytes))
    .map_err(McpresError::new_err)
}

/// An error about a path, named with it (a load error names it already).
fn path_error(path: &std::path::Path, e: api::ApiError) -> String {
    match e {
        api::ApiError::Load(e) => e.to_string(),
        e => format!("{}: {e}", path.display()),
    }
}

fn digest_kind(kind: &str) -> PyResult<DigestKind> {
    Ok(match kind {
        "observation" => DigestKind::Observation,
        "scenario" => DigestKind::Scenario,
        "evidence" => DigestKind::Evidence,
        "statement" => DigestKind::Statement,
        "execution" => DigestKind::Execution,
        "bundle" => DigestKind::Bundle,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown digest kind {other:?}: one of observation, scenario, evidence, statement, execution, bundle"
            )));
        }
    })
}

/// digest(input, /, kind)
/// --
///
/// A named SHA-256 digest as lowercase hex, what `mcpres digest --kind KIND`
/// prints: `kind` is one of "observation", "scenario", "evidence",
/// "statement", "execution", "bundle"; `input` is a document's bytes or a
/// path (a file or a bundle directory).
#[pyfunction]
fn digest(py: Python<'_>, input: &Bound<'_, PyAny>, kind: &str) -> PyResult<String> {
    let kind = digest_kind(kind)?;
    let owned = owned(input, None)?;
    py.detach(|| match &owned {
        Owned::Bytes { bytes, .. } => api::digest(bytes, kind).map_err(|e| e.to_string()),
        Owned::Path(p) => api::digest_path(p, kind).map_err(|e| path_error(p, e)),
    })
    .map_err(McpresError::new_err)
}

/// explain(code, /)
/// --
///
/// What a code means, as `mcpres explain CODE` prints it. A diagnostic code
/// gives a dictionary with `code`, `rule`, `title`, `meaning`, `example` and
/// `fix`. A reason code (one a producer writes into its observations, see
/// `reasons()`) gives `code`, `family` (the producer), `kind` (`holds`,
/// `refused`, `wrong-reason` or `not-observed`), `title` and `meaning`, plus
/// `template` when the code is a member of a generated family
/// (`MCP_RES_HTTP_STATUS_503` of `MCP_RES_HTTP_STATUS_{n}`). The `MCP_RES_`
/// prefix may be left out and case does not matter. Raises `KeyError` for an
/// unknown code.
#[pyfunction]
fn explain<'py>(py: Python<'py>, code: &str) -> PyResult<Bound<'py, PyDict>> {
    let raw = code.trim().to_ascii_uppercase();
    let full = if raw.starts_with("MCP_RES_") {
        raw
    } else {
        format!("MCP_RES_{raw}")
    };
    let d = PyDict::new(py);
    if let Some(e) = mcpres::explain::lookup(&full) {
        d.set_item("code", e.code)?;
        d.set_item("rule", e.rule)?;
        d.set_item("title", e.title)?;
        d.set_item("meaning", e.meaning)?;
        d.set_item("example", e.example)?;
        d.set_item("fix", e.fix)?;
        return Ok(d);
    }
    // The reason table, looked up as the command looks it up.
    let r = mcpres::explain::lookup_reason(&full)
        .ok_or_else(|| PyKeyError::new_err(format!("unknown diagnostic or reason code {full}")))?;
    let member = r.is_generated() && r.matches(&full);
    d.set_item("code", if member { full.as_str() } else { r.code })?;
    d.set_item("family", r.family.as_str())?;
    d.set_item("kind", r.kind.as_str())?;
    d.set_item("title", r.kind.title())?;
    d.set_item("meaning", r.meaning)?;
    if member {
        d.set_item("template", r.code)?;
    }
    Ok(d)
}

/// codes()
/// --
///
/// Every diagnostic code, in the order of `mcpres explain --list`.
#[pyfunction]
fn codes() -> Vec<&'static str> {
    mcpres::explain::explanations().map(|e| e.code).collect()
}

/// reasons()
/// --
///
/// Every reason code (a generated family by its template, `..._{n}`), in the
/// order of the reason section of `mcpres explain --list`.
#[pyfunction]
fn reasons() -> Vec<&'static str> {
    mcpres::explain::reasons().map(|r| r.code).collect()
}

#[pymodule]
fn _mcpres(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(validate_batch, m)?)?;
    m.add_function(wrap_pyfunction!(canonicalize, m)?)?;
    m.add_function(wrap_pyfunction!(digest, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(codes, m)?)?;
    m.add_function(wrap_pyfunction!(reasons, m)?)?;
    m.add("McpresError", m.py().get_type::<McpresError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
