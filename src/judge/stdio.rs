//! What a stdio probe's raw transcript shows, read from its recorded chunks
//! (`transcript.chunks`: `stream` `stdin`, `stdout` or `stderr`, the bytes as
//! `text` or `base64`, or only a digest and head when `elided`).
//!
//! The stdout bytes are joined in order and split into LF-terminated lines;
//! a complete line that parses as a JSON object is a message. From the
//! messages the judge reads whether the subject's syntax guard visibly fired:
//! a JSON-RPC error with code -32700, or a response with a null id (the
//! answer to a line whose id the subject could not read). Every classifier
//! of the stdio runners credits an observation with the syntax guard only on
//! such an answer, so an observation credited with it whose transcript holds
//! none is not what its bytes give. And it counts the complete stdout lines
//! that are not JSON-RPC: stdout-protocol-purity's positive holds only when
//! there is none in the whole stored transcript, which ends after the process
//! did (a subject that writes on stdout as it exits pollutes it too).

use base64::Engine;
use serde_json::Value;

/// The stdout bytes of a stdio probe's transcript, in order: `None` when the
/// transcript records no chunks (not a stdio probe, or the subject never
/// started) or a stdout chunk is elided (its bytes are not stored).
pub fn stdout_bytes(transcript: &Value) -> Option<Vec<u8>> {
    stream_bytes(transcript, "stdout")
}

/// The bytes of `stream` (`stdin`, `stdout`, `stderr`) of a stdio probe's
/// transcript, in order; `None` as for [`stdout_bytes`].
pub fn stream_bytes(transcript: &Value, stream: &str) -> Option<Vec<u8>> {
    let chunks = transcript.get("chunks")?.as_array()?;
    let mut out = Vec::new();
    for c in chunks.iter().filter(|c| c["stream"] == stream) {
        if let Some(text) = c["text"].as_str() {
            out.extend_from_slice(text.as_bytes());
        } else if let Some(b64) = c["base64"].as_str() {
            out.extend(base64::engine::general_purpose::STANDARD.decode(b64).ok()?);
        } else {
            return None;
        }
    }
    Some(out)
}

/// Does `stderr` hold a complete line that is a JSON object with a
/// `jsonrpc` member: a protocol message written on the diagnostic channel?
pub fn carries_protocol(stderr: &[u8]) -> bool {
    let mut lines: Vec<&[u8]> = stderr.split(|&b| b == b'\n').collect();
    // The unterminated tail is no line yet.
    lines.pop();
    lines.into_iter().any(|l| {
        serde_json::from_slice::<Value>(l.strip_suffix(b"\r").unwrap_or(l))
            .ok()
            .is_some_and(|v| v.get("jsonrpc").is_some())
    })
}

/// The bytes of `stream` up to its first chunk whose bytes are not stored
/// (elided); `None` when the transcript records no chunks.
pub fn stream_prefix(transcript: &Value, stream: &str) -> Option<Vec<u8>> {
    let chunks = transcript.get("chunks")?.as_array()?;
    let mut out = Vec::new();
    for c in chunks.iter().filter(|c| c["stream"] == stream) {
        if let Some(text) = c["text"].as_str() {
            out.extend_from_slice(text.as_bytes());
        } else if let Some(bytes) = c["base64"]
            .as_str()
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        {
            out.extend(bytes);
        } else {
            break;
        }
    }
    Some(out)
}

/// The command names of the shells a launcher may interpose
/// (`shell-free-argument-boundaries`).
pub const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "busybox", "fish", "csh", "tcsh",
];

/// `shell-free-argument-boundaries`' positive, read from what it stored: the
/// running executable (`observation.exe`), its argv (`observation.argv`)
/// and the launch's arguments (`launch.args`). A shell's name is
/// `MCP_RES_SHELL_INTERMEDIARY`; an argv that does not end with the launch's
/// arguments is `MCP_RES_ARGV_CHANGED`; else the arguments passed verbatim.
/// `None` when a field is not stored.
pub fn argv_reading(transcript: &Value) -> Option<&'static str> {
    let observation = transcript.get("observation")?;
    let exe = observation.get("exe")?;
    let argv: Vec<&str> = observation
        .get("argv")?
        .as_array()?
        .iter()
        .map(Value::as_str)
        .collect::<Option<_>>()?;
    let args: Vec<&str> = transcript
        .pointer("/launch/args")?
        .as_array()?
        .iter()
        .map(Value::as_str)
        .collect::<Option<_>>()?;
    let shell = exe
        .as_str()
        .and_then(|e| std::path::Path::new(e).file_name())
        .and_then(|n| n.to_str())
        .is_some_and(|n| SHELLS.contains(&n));
    Some(if shell {
        crate::diag::reasons::SHELL_INTERMEDIARY
    } else if !argv.ends_with(&args) {
        crate::diag::reasons::ARGV_CHANGED
    } else {
        crate::diag::reasons::ARGV_PASSED_VERBATIM
    })
}

/// `silent-process`' control, read from its stored stdout chunks against
/// its window (`observation.windowMs`, from the probe's start) and the
/// runner's first ending step (the `stdin-closed` event): `Some(true)` when
/// a stdout chunk arrived within the window (the subject spoke unasked
/// before the runner's decision), `Some(false)` when none arrived before the
/// runner ended the probe (nothing unasked could have been counted).
/// `None` when neither holds (a chunk between the two: the runner's count
/// decides) or the record lacks what is read.
pub fn spoke_unasked(transcript: &Value) -> Option<bool> {
    let window = transcript.pointer("/observation/windowMs")?.as_u64()?;
    let chunks = transcript.get("chunks")?.as_array()?;
    if chunks.iter().any(|c| c["stream"] == "stdin") {
        return None;
    }
    let ended = transcript
        .get("events")?
        .as_array()?
        .iter()
        .find(|e| e["event"] == "stdin-closed")
        .and_then(|e| e["atMs"].as_u64())?;
    let stdout: Vec<u64> = chunks
        .iter()
        .filter(|c| c["stream"] == "stdout")
        .filter_map(|c| c["atMs"].as_u64().or_else(|| c["firstMs"].as_u64()))
        .collect();
    if stdout.iter().any(|&at| at < window) {
        Some(true)
    } else if stdout.iter().all(|&at| at > ended) {
        Some(false)
    } else {
        None
    }
}

/// What an exchange's evidence counts, over the complete stdout lines it was
/// gathered from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gathered {
    pub parse_errors: usize,
    pub null_id_errors: usize,
    pub non_json_lines: usize,
    pub batch_results: usize,
    pub other_responses: usize,
}

/// An exchange's evidence counted again from the stored stdout: the
/// complete lines `observation.stdoutLines` names (`[from, to)`), classified
/// as the runner classified them (a null-id -32700 error is a parse error,
/// another null-id error a null-id error, a response to an id other than
/// the liveness request's (`observation.liveId`) another response, results
/// inside arrays batch results, anything not a JSON object or array a
/// non-JSON line). `None` when the range is not stored, the stdout bytes are
/// not all stored, or the range runs past them.
pub fn gathered(transcript: &Value) -> Option<Gathered> {
    let live = transcript.pointer("/observation/liveId");
    let lines = gathered_lines(transcript)?;
    let mut g = Gathered::default();
    for line in &lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        match serde_json::from_slice::<Value>(line) {
            Ok(v) if v.is_object() => {
                if v.get("id") == Some(&Value::Null) {
                    match v.pointer("/error/code").and_then(Value::as_i64) {
                        Some(-32700) => g.parse_errors += 1,
                        Some(_) => g.null_id_errors += 1,
                        None => {}
                    }
                }
                if v.get("id").is_some_and(|i| Some(i) != live) && v.get("method").is_none() {
                    g.other_responses += 1;
                }
            }
            Ok(Value::Array(items)) => {
                g.batch_results += items.iter().filter(|i| i.get("result").is_some()).count();
            }
            _ => g.non_json_lines += 1,
        }
    }
    Some(g)
}

/// The complete stdout lines an exchange's evidence was gathered from
/// (`observation.stdoutLines`, `[from, to)`), without their line feeds.
/// `None` as for [`gathered`].
fn gathered_lines(transcript: &Value) -> Option<Vec<Vec<u8>>> {
    let range = transcript.pointer("/observation/stdoutLines")?.as_array()?;
    let (from, to) = match range.as_slice() {
        [a, b] => (
            usize::try_from(a.as_u64()?).ok()?,
            usize::try_from(b.as_u64()?).ok()?,
        ),
        _ => return None,
    };
    let stdout = stdout_bytes(transcript)?;
    let end = stdout
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let lines: Vec<&[u8]> = stdout[..end]
        .split_inclusive(|&b| b == b'\n')
        .map(|l| &l[..l.len() - 1])
        .collect();
    Some(lines.get(from..to)?.iter().map(|l| l.to_vec()).collect())
}

/// The JSON objects among the complete stdout lines an exchange's evidence
/// was gathered from (`observation.stdoutLines`, as [`gathered`] reads
/// them). `None` as for [`gathered`].
pub fn gathered_objects(transcript: &Value) -> Option<Vec<Value>> {
    Some(
        gathered_lines(transcript)?
            .iter()
            .filter_map(|line| {
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                serde_json::from_slice::<Value>(line)
                    .ok()
                    .filter(Value::is_object)
            })
            .collect(),
    )
}

/// `shell-free-argument-boundaries`' control and mutant, read from the
/// launch attempt they stored: the program string handed to the launcher
/// (`launcher.program`) and what the launcher did with it
/// (`observation.result`: `the launcher started it`, or `refused: ERROR`).
/// Started is `MCP_RES_LAUNCH_SHELL_SPLIT`; a refusal because no such file
/// exists (`No such file or directory`) is `MCP_RES_LAUNCH_NOT_SHELL_SPLIT`
/// for a program string with a space (a program and its argument as one
/// string) and `MCP_RES_PROGRAM_ABSENT` otherwise; another refusal is
/// `MCP_RES_LAUNCH_FAILED`. `None` when a field is not stored.
pub fn launch_reading(artifact_transcript: &Value) -> Option<&'static str> {
    use crate::diag::reasons::*;
    let program = artifact_transcript.pointer("/launcher/program")?.as_str()?;
    let result = artifact_transcript
        .pointer("/observation/result")?
        .as_str()?;
    Some(if result == "the launcher started it" {
        LAUNCH_SHELL_SPLIT
    } else if let Some(why) = result.strip_prefix("refused: ") {
        if why.contains("No such file or directory") {
            if program.contains(' ') {
                LAUNCH_NOT_SHELL_SPLIT
            } else {
                PROGRAM_ABSENT
            }
        } else {
            LAUNCH_FAILED
        }
    } else {
        return None;
    })
}

/// `silent-process`' control, read from the stored stdout prefix its runner
/// decided on (`observation.stdoutBytesUnasked` bytes): nothing is
/// `MCP_RES_SILENT_UNTIL_ASKED`; a complete line with a -32700 error is
/// `MCP_RES_SYNTAX_GUARD`; anything else `MCP_RES_UNSOLICITED_OUTPUT`.
/// `None` when the count is not stored or the bytes are not all stored.
pub fn unasked_reading(transcript: &Value) -> Option<&'static str> {
    let n = usize::try_from(
        transcript
            .pointer("/observation/stdoutBytesUnasked")?
            .as_u64()?,
    )
    .ok()?;
    let stdout = stdout_bytes(transcript)?;
    let prefix = stdout.get(..n)?;
    Some(if prefix.is_empty() {
        crate::diag::reasons::SILENT_UNTIL_ASKED
    } else if answered_before(prefix, &Value::Null).1 {
        crate::diag::reasons::SYNTAX_GUARD
    } else {
        crate::diag::reasons::UNSOLICITED_OUTPUT
    })
}

/// In `stdout` (a prefix of a subject's output): is request `id` answered
/// (a complete line holding a response with that id), and is there a parse
/// error (-32700)?
pub fn answered_before(stdout: &[u8], id: &Value) -> (bool, bool) {
    let messages = messages(stdout);
    let answered = messages
        .iter()
        .any(|m| m.get("id") == Some(id) && m.get("method").is_none());
    let parse_error = messages
        .iter()
        .any(|m| m.pointer("/error/code").and_then(Value::as_i64) == Some(-32700));
    (answered, parse_error)
}

/// `partial-line`'s control (and mutant), read from the stored stdout prefix
/// its runner decided on before sending the LF (`observation.stdoutBytesAtLf`
/// bytes): `Some(true)` when that prefix answers its request
/// (`observation.requestId`) or holds a parse error (the unterminated line
/// was dispatched), `Some(false)` when not. `None` when the record lacks
/// either field or the stdout bytes are not all stored.
pub fn dispatched_before_lf(transcript: &Value) -> Option<bool> {
    let observation = transcript.get("observation")?;
    let id = observation.get("requestId")?;
    let n = usize::try_from(observation.get("stdoutBytesAtLf")?.as_u64()?).ok()?;
    let stdout = stdout_bytes(transcript)?;
    let (answered, parse_error) = answered_before(stdout.get(..n)?, id);
    Some(answered || parse_error)
}

/// What the stored record says became of the first signal the runner sent
/// and waited on: its name (as sent: `SIGTERM`, `SIGINT`, ...) and whether
/// the subject exited on it. Read from the order of the transcript's events:
/// after `sent NAME`, an `exited` event before the runner's `no exit after
/// NAME` is an exit on the signal; the marker first is none. `None` for a
/// record made before the runner kept its waits (no `signalWaits`), or with
/// no such signal.
pub fn signal_ended(transcript: &Value) -> Option<(String, bool)> {
    let waits = transcript.get("signalWaits")?.as_array()?;
    let name = waits.first()?.get("signal")?.as_str()?;
    let events = transcript.get("events")?.as_array()?;
    let text = |e: &Value| e.get("event").and_then(Value::as_str).map(str::to_string);
    let sent = format!("sent {name}");
    let gave_up = format!("no exit after {name}");
    let start = events
        .iter()
        .position(|e| text(e).as_deref() == Some(sent.as_str()))?;
    for e in &events[start + 1..] {
        match text(e).as_deref() {
            Some("exited") => return Some((name.to_string(), true)),
            Some(t) if t == gave_up => return Some((name.to_string(), false)),
            _ => {}
        }
    }
    None
}

/// The event `process-exit`'s runner notes when the subject had not exited
/// when it stopped waiting after closing stdin.
pub const NO_EXIT_AFTER_STDIN_CLOSE: &str = "no exit after stdin closed";

/// Whether the subject exited after its stdin was closed, read from the
/// order of the stored events: after `stdin-closed`, an `exited` event
/// before the runner's [`NO_EXIT_AFTER_STDIN_CLOSE`] is an exit; the marker
/// first is none. `None` when the record shows neither.
pub fn exited_after_stdin_close(transcript: &Value) -> Option<bool> {
    let events = transcript.get("events")?.as_array()?;
    let start = events.iter().position(|e| e["event"] == "stdin-closed")?;
    events[start + 1..]
        .iter()
        .find_map(|e| match e["event"].as_str() {
            Some("exited") => Some(true),
            Some(NO_EXIT_AFTER_STDIN_CLOSE) => Some(false),
            _ => None,
        })
}

/// The ids of the opening requests (`initialize`, `server/discover`) among
/// the complete lines of `stdin`.
fn opening_ids(stdin: &[u8]) -> Vec<Value> {
    messages(stdin)
        .into_iter()
        .filter(|m| matches!(m["method"].as_str(), Some("initialize" | "server/discover")))
        .filter_map(|m| m.get("id").cloned())
        .collect()
}

/// Did the conversation open: is one of the opening requests the stored
/// stdin sends (`initialize`, `server/discover`) answered with a result on
/// the stored stdout? `None` when stdin sends none, or the bytes of either
/// stream are not all stored.
pub fn opened(transcript: &Value) -> Option<bool> {
    let openings = opening_ids(&stream_bytes(transcript, "stdin")?);
    if openings.is_empty() {
        return None;
    }
    let answers = messages(&stdout_bytes(transcript)?);
    Some(openings.iter().any(|id| {
        answers.iter().any(|a| {
            a.get("id") == Some(id) && a.get("method").is_none() && a.get("result").is_some()
        })
    }))
}

/// Did the stored stdin send an opening request (`initialize`,
/// `server/discover`)? `None` when the transcript is no stdio probe's (no
/// chunks: the subject never started), a write to stdin failed (a line the
/// runner meant to send may be missing), or stdin's bytes are not all
/// stored.
pub fn opening_sent(transcript: &Value) -> Option<bool> {
    transcript.get("chunks")?.as_array()?;
    let failed = transcript
        .get("events")
        .and_then(Value::as_array)
        .is_some_and(|e| e.iter().any(|e| e["event"] == "write-failed"));
    if failed {
        return None;
    }
    Some(
        messages(&stream_bytes(transcript, "stdin")?)
            .iter()
            .any(|m| matches!(m["method"].as_str(), Some("initialize" | "server/discover"))),
    )
}

/// Did the runner go on past the opening? `Some(true)` when the stored stdout
/// answers an opening request of the stored stdin (`initialize`,
/// `server/discover`) with a result in a chunk that arrived at T, and the
/// stored stdin has a chunk written strictly after T. A runner that gives up
/// on an opening (no answer within the start-up bound, an error, a revision
/// not spoken) writes nothing more to that process, so one that wrote after
/// the answer arrived had it: the conversation opened, whatever a label says.
/// `Some(false)` when no such pair is stored; `None` when stdin sends no
/// opening or a chunk's bytes or time are not stored.
pub fn proceeded_after_opening(transcript: &Value) -> Option<bool> {
    let chunks = transcript.get("chunks")?.as_array()?;
    let openings = opening_ids(&stream_bytes(transcript, "stdin")?);
    if openings.is_empty() {
        return None;
    }
    let at = |c: &Value| c["atMs"].as_u64().or_else(|| c["firstMs"].as_u64());
    let mut stdout: Vec<u8> = Vec::new();
    // Complete lines before this offset were read already.
    let mut read = 0;
    let mut answered_at = None;
    for c in chunks.iter().filter(|c| c["stream"] == "stdout") {
        if let Some(text) = c["text"].as_str() {
            stdout.extend_from_slice(text.as_bytes());
        } else {
            let b64 = c["base64"].as_str()?;
            stdout.extend(base64::engine::general_purpose::STANDARD.decode(b64).ok()?);
        }
        let Some(lf) = stdout.iter().rposition(|&b| b == b'\n') else {
            continue;
        };
        if lf < read {
            continue;
        }
        let answered = messages(&stdout[read..=lf]).iter().any(|a| {
            a.get("method").is_none()
                && a.get("result").is_some()
                && a.get("id").is_some_and(|id| openings.contains(id))
        });
        read = lf + 1;
        if answered {
            answered_at = Some(at(c)?);
            break;
        }
    }
    let Some(answered_at) = answered_at else {
        return Some(false);
    };
    let mut written = chunks.iter().filter(|c| c["stream"] == "stdin");
    Some(written.any(|c| at(c).is_some_and(|t| t > answered_at)))
}

/// The error code with which the stored stdout answers an opening request
/// of the stored stdin, when none of them is answered with a result: the
/// conversation was refused, not left unanswered. A -32601 to
/// `server/discover` (a revision not spoken) is not such a refusal. `None`
/// when an opening was answered with a result, none was answered with an
/// error, or the bytes are not all stored.
pub fn opening_error(transcript: &Value) -> Option<i64> {
    if opened(transcript)? {
        return None;
    }
    let stdin = stream_bytes(transcript, "stdin")?;
    let answers = messages(&stdout_bytes(transcript)?);
    messages(&stdin)
        .into_iter()
        .filter(|m| matches!(m["method"].as_str(), Some("initialize" | "server/discover")))
        .find_map(|m| {
            let id = m.get("id")?;
            let code = answers
                .iter()
                .find(|a| a.get("id") == Some(id) && a.get("method").is_none())?
                .pointer("/error/code")?
                .as_i64()?;
            (!(m["method"] == "server/discover" && code == -32601)).then_some(code)
        })
}

/// The id of a response on the stored stdout that answers no request of the
/// stored stdin, when no opening request (`initialize`, `server/discover`)
/// is answered with a result: the subject answered the opening under
/// another id (a string for a number, say), which JSON-RPC 2.0 (§5: the id
/// MUST be the request's) does not allow. `None` when the conversation
/// opened, every response answers a request sent, or the bytes are not all
/// stored.
pub fn opening_misanswered(transcript: &Value) -> Option<Value> {
    if opened(transcript)? {
        return None;
    }
    let stdin = stream_bytes(transcript, "stdin")?;
    let sent: Vec<Value> = messages(&stdin)
        .into_iter()
        .filter(|m| m.get("method").is_some())
        .filter_map(|m| m.get("id").cloned())
        .collect();
    messages(&stdout_bytes(transcript)?)
        .into_iter()
        .filter(|m| {
            m.get("method").is_none() && (m.get("result").is_some() || m.get("error").is_some())
        })
        .filter_map(|m| m.get("id").cloned())
        .find(|id| !id.is_null() && !sent.contains(id))
}

/// Does the subject's stdout end with a torn line (bytes after the last LF)?
/// Read from the last stdout chunk: `None` when there is none or its bytes
/// are not stored (elided).
pub fn last_line_torn(transcript: &Value) -> Option<bool> {
    let last = transcript
        .get("chunks")?
        .as_array()?
        .iter()
        .rev()
        .find(|c| c["stream"] == "stdout" && c["bytes"].as_u64() != Some(0))?;
    let bytes = if let Some(text) = last["text"].as_str() {
        text.as_bytes().to_vec()
    } else {
        base64::engine::general_purpose::STANDARD
            .decode(last["base64"].as_str()?)
            .ok()?
    };
    Some(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// The JSON objects among the complete stdout lines (CR before LF ignored).
pub fn messages(stdout: &[u8]) -> Vec<Value> {
    let mut lines: Vec<&[u8]> = stdout.split(|&b| b == b'\n').collect();
    // What follows the last LF is no complete line.
    lines.pop();
    lines
        .into_iter()
        .filter_map(|l| {
            let l = l.strip_suffix(b"\r").unwrap_or(l);
            serde_json::from_slice::<Value>(l)
                .ok()
                .filter(Value::is_object)
        })
        .collect()
}

/// Whether the transcript shows the syntax guard firing (a -32700 error or
/// a response with a null id on stdout); `None` when its stdout bytes are not
/// all stored.
pub fn syntax_guard_seen(transcript: &Value) -> Option<bool> {
    let stdout = stdout_bytes(transcript)?;
    Some(messages(&stdout).iter().any(|m| {
        m.pointer("/error/code").and_then(Value::as_i64) == Some(-32700)
            || (m.get("id") == Some(&Value::Null) && m.get("method").is_none())
    }))
}

/// How many complete stdout lines of the transcript are not JSON-RPC 2.0
/// objects; `None` when its stdout bytes are not all stored.
pub fn non_protocol_lines(transcript: &Value) -> Option<usize> {
    let stdout = stdout_bytes(transcript)?;
    let mut lines: Vec<&[u8]> = stdout.split(|&b| b == b'\n').collect();
    lines.pop();
    Some(
        lines
            .into_iter()
            .filter(|l| {
                let l = l.strip_suffix(b"\r").unwrap_or(l);
                serde_json::from_slice::<Value>(l)
                    .ok()
                    .is_none_or(|v| v.get("jsonrpc") != Some(&Value::from("2.0")))
            })
            .count(),
    )
}

/// How the redactor marks a credential it replaced in a stored stream.
const REDACTION_MARK: &[u8] = b"[REDACTED:";

/// The answers a stdio probe's runner waited for (`replies`: per wait, the
/// id, how many stdout bytes it had read when it decided, and what it read),
/// each read again from that prefix of the stored stdout: the first complete
/// line holding a response with that id is `result` or `error CODE`; none is
/// `no answer`, or `stdout closed` when the prefix is the whole of the
/// stored stdout. `Some(Ok(labels))`, the recorded readings, when the bytes
/// give every one; `Some(Err(why))` for the first they do not give; `None`
/// for a record that keeps no waits (made before they were kept, or not a
/// stdio probe) or whose stdout bytes are not all stored. A wait decided
/// past the first redaction marker is kept unread (the runner counted the
/// bytes before the redactor replaced a credential).
pub fn replies_read(transcript: &Value) -> Option<Result<Vec<String>, String>> {
    let replies = transcript.get("replies")?.as_array()?;
    let stdout = stdout_bytes(transcript)?;
    if transcript.get("stdoutDroppedBytes").and_then(Value::as_u64) != Some(0) {
        return None;
    }
    // The runner counted the bytes it read; the stored stdout is redacted
    // (a credential replaced by a `[REDACTED:...]` marker where it starts),
    // so it is the same bytes only up to its first marker: a wait decided
    // past it is not read again.
    let exact = stdout
        .windows(REDACTION_MARK.len())
        .position(|w| w == REDACTION_MARK)
        .unwrap_or(usize::MAX);
    // Every complete line's message with the offset just past its LF: a
    // wait that had read `seen` bytes saw the lines ending at or before it
    // (parsed once, not once per wait: a burst's waits are hundreds).
    let mut lines: Vec<(usize, Value)> = Vec::new();
    let mut start = 0;
    for (at, _) in stdout.iter().enumerate().filter(|(_, b)| **b == b'\n') {
        let line = &stdout[start..at];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Ok(v) = serde_json::from_slice::<Value>(line)
            && v.is_object()
        {
            lines.push((at + 1, v));
        }
        start = at + 1;
    }
    let mut labels = Vec::new();
    for (i, r) in replies.iter().enumerate() {
        let Some(recorded) = r.get("reply").and_then(Value::as_str) else {
            return Some(Err(format!("its wait {i} records no reading")));
        };
        labels.push(recorded.to_string());
        let Some(seen) = r
            .get("seenBytes")
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
        else {
            return Some(Err(format!("its wait {i} records no stdout byte count")));
        };
        if seen > stdout.len() {
            if exact != usize::MAX {
                continue;
            }
            return Some(Err(format!(
                "its wait {i} says {seen} stdout bytes had been read, but {} are stored",
                stdout.len()
            )));
        }
        // A wait kept without its id (one with no canonical form) is not
        // read, nor one decided past a redaction.
        let Some(id) = r.get("id") else {
            continue;
        };
        if seen > exact || (recorded == "stdout closed" && exact != usize::MAX) {
            continue;
        }
        let answer = lines
            .iter()
            .take_while(|(end, _)| *end <= seen)
            .map(|(_, m)| m)
            .find(|m| {
                m.get("id") == Some(id)
                    && m.get("method").is_none()
                    && (m.get("result").is_some() || m.get("error").is_some())
            });
        let read = match &answer {
            Some(m) => match m.get("error") {
                Some(e) => format!(
                    "error {}",
                    e.get("code").and_then(Value::as_i64).unwrap_or(0)
                ),
                None => "result".to_string(),
            },
            None if recorded == "stdout closed" => {
                if seen != stdout.len() {
                    return Some(Err(format!(
                        "its wait {i} for {id} says stdout closed after {seen} bytes, but {} stdout bytes are stored",
                        stdout.len()
                    )));
                }
                continue;
            }
            None => "no answer".to_string(),
        };
        if read != recorded {
            return Some(Err(format!(
                "its wait {i} for {id} says {recorded}, but the {seen} stdout bytes it had read give {read}"
            )));
        }
    }
    Some(Ok(labels))
}

/// What the last kept wait (`replies`) for the request `id` read (`result`,
/// `error CODE`, `no answer`, `stdout closed`): the reading the runner
/// decided that request on. `None` when the record keeps no waits or none
/// for `id`.
pub fn last_wait_for(transcript: &Value, id: &Value) -> Option<String> {
    transcript
        .get("replies")?
        .as_array()?
        .iter()
        .rfind(|r| r.get("id") == Some(id))
        .and_then(|r| r["reply"].as_str())
        .map(str::to_string)
}

/// The readings of every kept wait (`replies`), in order; `None` when the
/// record keeps none.
pub fn wait_readings(transcript: &Value) -> Option<Vec<&str>> {
    Some(
        transcript
            .get("replies")?
            .as_array()?
            .iter()
            .filter_map(|r| r["reply"].as_str())
            .collect(),
    )
}

/// The kept waits other than the opening's (the first for an opening
/// request on the stored stdin, read up to its first chunk not stored: the
/// opening goes first), in order: each request's id and what its wait read.
/// `None` when the record keeps no waits or no chunks.
pub fn request_waits(transcript: &Value) -> Option<Vec<(Value, String)>> {
    let replies = transcript.get("replies")?.as_array()?;
    let ids = opening_ids(&stream_prefix(transcript, "stdin")?);
    let opening = replies
        .iter()
        .position(|r| r.get("id").is_some_and(|id| ids.contains(id)));
    Some(
        replies
            .iter()
            .enumerate()
            .filter(|(k, _)| Some(*k) != opening)
            .filter_map(|(_, r)| Some((r.get("id")?.clone(), r["reply"].as_str()?.to_string())))
            .collect(),
    )
}

/// How many complete stdout lines of the transcript are JSON objects with
/// the id `id`; `None` when its stdout bytes are not all stored.
pub fn lines_with_id(transcript: &Value, id: &Value) -> Option<usize> {
    Some(
        messages(&stdout_bytes(transcript)?)
            .iter()
            .filter(|m| m.get("id") == Some(id))
            .count(),
    )
}

/// What the runner read for the opening request: the first kept wait
/// (`replies`) whose id is that of an opening request (`initialize`,
/// `server/discover`) on the stored stdin. `None` when the record keeps no
/// waits, its stdin is not all stored, or no wait was for an opening.
pub fn opening_wait(transcript: &Value) -> Option<String> {
    let replies = transcript.get("replies")?.as_array()?;
    let ids = opening_ids(&stream_bytes(transcript, "stdin")?);
    replies
        .iter()
        .find(|r| r.get("id").is_some_and(|id| ids.contains(id)))
        .and_then(|r| r["reply"].as_str())
        .map(str::to_string)
}

/// Did a kept wait other than the opening's (the first for an opening
/// request) read an answer (a result or an error)? `None` when the record keeps no waits or its stdin
/// is not all stored.
pub fn request_answered(transcript: &Value) -> Option<bool> {
    Some(request_answer(transcript)?.is_some())
}

/// What the last kept wait other than the opening's that read an answer
/// read (`result` or `error CODE`); `Some(None)` when none did, `None` when
/// the record keeps no waits or its stdin is not all stored.
pub fn request_answer(transcript: &Value) -> Option<Option<String>> {
    // The opening's wait is the first for an opening request; a later
    // `server/discover` (a mutant's request) is a request like any other.
    Some(
        request_waits(transcript)?
            .into_iter()
            .map(|(_, reading)| reading)
            .rfind(|t| t == "result" || t.starts_with("error ")),
    )
}

/// Whether a stdio probe's record shows its subject gone by itself before
/// the runner's first act that ends it: a wait that read its stdout closed;
/// the exchange's own reading (`observation.stdoutClosed`, or an exit it
/// reaped); the end of the probe (`end.endedBy`) being the subject's; or a
/// `stdout-closed` or `exited` event no later than the runner's first
/// ending. `None` for a record that keeps no waits (`replies`).
pub fn went_by_itself(transcript: &Value) -> Option<bool> {
    let replies = transcript.get("replies")?.as_array()?;
    if replies.iter().any(|r| r["reply"] == "stdout closed") {
        return Some(true);
    }
    let observation = &transcript["observation"];
    if observation.get("stdoutClosed") == Some(&Value::Bool(true))
        || observation.get("exit").is_some_and(|e| !e.is_null())
    {
        return Some(true);
    }
    let ended_by = transcript.pointer("/end/endedBy");
    if ended_by == Some(&Value::String("subject".into())) {
        return Some(true);
    }
    let first_ending = ended_by.and_then(|e| e.get("atMs")).and_then(Value::as_u64);
    let events = transcript.get("events").and_then(Value::as_array);
    Some(events.is_some_and(|events| {
        events.iter().any(|e| {
            matches!(e["event"].as_str(), Some("stdout-closed" | "exited"))
                && e["atMs"]
                    .as_u64()
                    .is_some_and(|at| first_ending.is_none_or(|end| at <= end))
        })
    }))
}

#[cfg(test)]
mod tests {

    /// A transcript whose stdout is `lines` (one chunk) with `replies` kept.
    fn waited(lines: &str, replies: Value) -> Value {
        serde_json::json!({
            "chunks": [{"atMs": 5, "stream": "stdout", "text": lines}],
            "stdoutDroppedBytes": 0,
            "replies": replies,
        })
    }

    #[test]
    fn each_wait_is_read_again_from_the_stdout_it_had_read() {
        use serde_json::json;
        let out = "{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{}}\n{\"id\":2,\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32602,\"message\":\"x\"}}\n";
        let first = out.find('\n').unwrap() + 1;
        let all = out.len();
        let ok = waited(
            out,
            json!([
                {"id": 1, "seenBytes": first, "reply": "result"},
                {"id": 2, "seenBytes": all, "reply": "error -32602"},
                {"id": 3, "seenBytes": all, "reply": "stdout closed"},
                {"seenBytes": all, "reply": "no answer"},
            ]),
        );
        assert_eq!(
            replies_read(&ok),
            Some(Ok(vec![
                "result".to_string(),
                "error -32602".to_string(),
                "stdout closed".to_string(),
                "no answer".to_string()
            ]))
        );
        // Decided before the answer arrived: silence is what it read.
        let early = waited(
            out,
            json!([{"id": 2, "seenBytes": first, "reply": "no answer"}]),
        );
        assert!(matches!(replies_read(&early), Some(Ok(_))));
        // Said unanswered with the answer in the bytes it had read.
        let missed = waited(
            out,
            json!([{"id": 2, "seenBytes": all, "reply": "no answer"}]),
        );
        assert!(
            matches!(replies_read(&missed), Some(Err(why)) if why.contains("give error -32602"))
        );
        // A close with bytes after it cannot be.
        let closed = waited(
            out,
            json!([{"id": 3, "seenBytes": first, "reply": "stdout closed"}]),
        );
        assert!(matches!(replies_read(&closed), Some(Err(_))));
        // More bytes read than stored.
        let over = waited(
            out,
            json!([{"id": 3, "seenBytes": all + 1, "reply": "no answer"}]),
        );
        assert!(matches!(replies_read(&over), Some(Err(_))));
        // Past a redaction marker the stored bytes are not those the runner
        // counted: a wait decided there is not read again.
        let redacted = "{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{\"name\":\"[REDACTED:environment-value]\"}}\n";
        let past = waited(
            redacted,
            json!([{"id": 1, "seenBytes": redacted.len() + 9, "reply": "result"}]),
        );
        assert!(matches!(replies_read(&past), Some(Ok(_))));
        // A record without waits, or with stdout not all stored, is not read.
        assert_eq!(replies_read(&json!({"chunks": []})), None);
        let mut dropped = ok.clone();
        dropped["stdoutDroppedBytes"] = json!(10);
        assert_eq!(replies_read(&dropped), None);
    }

    #[test]
    fn a_subject_gone_by_itself_is_read_from_its_waits_and_ends() {
        use serde_json::json;
        let t = |replies: Value, observation: Value, ended_by: Value, events: Value| json!({"replies": replies, "observation": observation, "end": {"endedBy": ended_by}, "events": events});
        let runner = json!({"mcpres": "stdin closed", "atMs": 100});
        let silent = json!([{"id": 1, "seenBytes": 0, "reply": "no answer"}]);
        // Nothing of its own before the runner ended it.
        assert_eq!(
            went_by_itself(&t(
                silent.clone(),
                json!({}),
                runner.clone(),
                json!([{"atMs": 101, "event": "stdout-closed"}, {"atMs": 102, "event": "exited"}])
            )),
            Some(false)
        );
        // Its stdout closed before the runner's ending.
        assert_eq!(
            went_by_itself(&t(
                silent.clone(),
                json!({}),
                runner.clone(),
                json!([{"atMs": 99, "event": "stdout-closed"}])
            )),
            Some(true)
        );
        // A wait that read the close; an exchange that saw it; its own end.
        let closed = json!([{"id": 1, "seenBytes": 0, "reply": "stdout closed"}]);
        assert_eq!(
            went_by_itself(&t(closed, json!({}), runner.clone(), json!([]))),
            Some(true)
        );
        assert_eq!(
            went_by_itself(&t(
                silent.clone(),
                json!({"stdoutClosed": true, "exit": null}),
                runner.clone(),
                json!([])
            )),
            Some(true)
        );
        assert_eq!(
            went_by_itself(&t(silent, json!({}), json!("subject"), json!([]))),
            Some(true)
        );
        // A record without waits is not read.
        assert_eq!(went_by_itself(&json!({"end": {"endedBy": runner}})), None);
    }

    #[test]
    fn unasked_output_is_read_against_the_window_and_the_runners_end() {
        let t = |stdout_at: &[u64]| {
            let mut chunks: Vec<Value> = stdout_at
                .iter()
                .map(|at| serde_json::json!({"atMs": at, "stream": "stdout", "text": "x"}))
                .collect();
            chunks.push(serde_json::json!({"atMs": 3, "stream": "stderr", "text": "ready"}));
            serde_json::json!({
                "chunks": chunks,
                "events": [{"atMs": 510, "event": "stdin-closed"}],
                "observation": {"windowMs": 500, "stdoutBytesUnasked": 0},
            })
        };
        assert_eq!(spoke_unasked(&t(&[])), Some(false));
        assert_eq!(spoke_unasked(&t(&[600])), Some(false));
        assert_eq!(spoke_unasked(&t(&[20])), Some(true));
        // Between the window's end and the runner's end: the count decides.
        assert_eq!(spoke_unasked(&t(&[505])), None);
        let mut sent = t(&[]);
        sent["chunks"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({"atMs": 1, "stream": "stdin", "text": "{}\n"}));
        assert_eq!(spoke_unasked(&sent), None);
    }

    #[test]
    fn a_runner_that_wrote_after_the_opening_was_answered_went_on_past_it() {
        use serde_json::json;
        let open = "{\"id\":7,\"jsonrpc\":\"2.0\",\"method\":\"initialize\",\"params\":{}}\n";
        let answer = "{\"id\":7,\"jsonrpc\":\"2.0\",\"result\":{}}\n";
        let t = |chunks: Vec<Value>| json!({ "chunks": chunks });
        let chunk =
            |at: u64, stream: &str, text: &str| json!({"atMs": at, "stream": stream, "text": text});
        // Opened at 40 ms, then a request written at 41 ms: it went on.
        let went_on = t(vec![
            chunk(1, "stdin", open),
            chunk(40, "stdout", &answer[..10]),
            chunk(40, "stdout", &answer[10..]),
            chunk(
                41,
                "stdin",
                "{\"id\":8,\"jsonrpc\":\"2.0\",\"method\":\"ping\"}\n",
            ),
        ]);
        assert_eq!(proceeded_after_opening(&went_on), Some(true));
        // The answer came after the runner's last write (it gave up first).
        let late = t(vec![chunk(1, "stdin", open), chunk(4000, "stdout", answer)]);
        assert_eq!(proceeded_after_opening(&late), Some(false));
        // A write in the same millisecond as the answer decides nothing.
        let same = t(vec![
            chunk(1, "stdin", open),
            chunk(40, "stdout", answer),
            chunk(40, "stdin", "{}\n"),
        ]);
        assert_eq!(proceeded_after_opening(&same), Some(false));
        // An error is no opening.
        let refused = t(vec![
            chunk(1, "stdin", open),
            chunk(
                40,
                "stdout",
                "{\"id\":7,\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32602,\"message\":\"no\"}}\n",
            ),
            chunk(41, "stdin", "{}\n"),
        ]);
        assert_eq!(proceeded_after_opening(&refused), Some(false));
        // No opening sent, or bytes not stored: nothing is read.
        assert_eq!(
            proceeded_after_opening(&t(vec![chunk(1, "stdin", "{}\n")])),
            None
        );
        let elided = t(vec![
            chunk(1, "stdin", open),
            json!({"atMs": 40, "stream": "stdout", "bytes": 30, "sha256": "00"}),
        ]);
        assert_eq!(proceeded_after_opening(&elided), None);
        // What was sent: an opening, none, or unknown after a failed write.
        assert_eq!(opening_sent(&late), Some(true));
        let none = t(vec![chunk(1, "stdin", "{}\n")]);
        assert_eq!(opening_sent(&none), Some(false));
        let mut failed = none.clone();
        failed["events"] = json!([{"atMs": 2, "event": "write-failed"}]);
        assert_eq!(opening_sent(&failed), None);
        assert_eq!(opening_sent(&json!({"startError": "no such file"})), None);
    }

    #[test]
    fn a_launch_attempt_is_read_from_what_it_stored() {
        use crate::diag::reasons::*;
        let t = |program: &str, result: &str| serde_json::json!({"launcher": {"program": program}, "observation": {"result": result}});
        let enoent = "refused: No such file or directory (os error 2)";
        assert_eq!(
            launch_reading(&t("/bin/x serve", enoent)),
            Some(LAUNCH_NOT_SHELL_SPLIT)
        );
        assert_eq!(
            launch_reading(&t("/tmp/absent", enoent)),
            Some(PROGRAM_ABSENT)
        );
        assert_eq!(
            launch_reading(&t("/bin/x serve", "the launcher started it")),
            Some(LAUNCH_SHELL_SPLIT)
        );
        assert_eq!(
            launch_reading(&t(
                "/bin/x serve",
                "refused: Permission denied (os error 13)"
            )),
            Some(LAUNCH_FAILED)
        );
        assert_eq!(launch_reading(&t("/bin/x", "something else")), None);
    }

    #[test]
    fn unasked_output_is_read_from_the_prefix_decided_on() {
        use crate::diag::reasons::*;
        let t = |stdout: &str, n: usize| {
            serde_json::json!({
                "chunks": [{"atMs": 1, "stream": "stdout", "text": stdout}],
                "observation": {"stdoutBytesUnasked": n},
            })
        };
        assert_eq!(unasked_reading(&t("", 0)), Some(SILENT_UNTIL_ASKED));
        assert_eq!(unasked_reading(&t("late\n", 0)), Some(SILENT_UNTIL_ASKED));
        assert_eq!(unasked_reading(&t("hello\n", 6)), Some(UNSOLICITED_OUTPUT));
        let parse =
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}\n";
        assert_eq!(unasked_reading(&t(parse, parse.len())), Some(SYNTAX_GUARD));
        assert_eq!(unasked_reading(&t("", 3)), None);
    }

    #[test]
    fn a_partial_line_is_read_from_the_prefix_decided_on() {
        let t = |stdout: &str, at_lf: usize| {
            serde_json::json!({
                "chunks": [{"atMs": 1, "stream": "stdout", "text": stdout}],
                "observation": {"requestId": 7, "stdoutBytesAtLf": at_lf},
            })
        };
        let answer = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n";
        assert_eq!(dispatched_before_lf(&t(answer, answer.len())), Some(true));
        // The answer came after the prefix the runner decided on.
        assert_eq!(dispatched_before_lf(&t(answer, 0)), Some(false));
        // An answer cut by the prefix is no complete line.
        assert_eq!(
            dispatched_before_lf(&t(answer, answer.len() - 1)),
            Some(false)
        );
        let parse =
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}\n";
        assert_eq!(dispatched_before_lf(&t(parse, parse.len())), Some(true));
        assert_eq!(dispatched_before_lf(&t(answer, answer.len() + 1)), None);
        assert_eq!(
            dispatched_before_lf(&serde_json::json!({"observation": {}})),
            None
        );
    }

    #[test]
    fn argv_is_read_from_the_executable_argv_and_launch() {
        let t = |exe: &str, argv: &[&str], args: &[&str]| serde_json::json!({"observation": {"exe": exe, "argv": argv}, "launch": {"args": args}});
        use crate::diag::reasons::*;
        assert_eq!(
            argv_reading(&t("/usr/bin/node", &["node", "a b", "c"], &["a b", "c"])),
            Some(ARGV_PASSED_VERBATIM)
        );
        assert_eq!(
            argv_reading(&t("/usr/bin/bash", &["bash", "-c", "x"], &["x"])),
            Some(SHELL_INTERMEDIARY)
        );
        assert_eq!(
            argv_reading(&t("/usr/bin/node", &["node", "a", "b", "c"], &["a b", "c"])),
            Some(ARGV_CHANGED)
        );
        assert_eq!(argv_reading(&serde_json::json!({"observation": {}})), None);
    }

    use super::*;
    use serde_json::json;

    #[test]
    fn the_guard_is_seen_only_in_complete_stdout_lines() {
        let t = |chunks: Value| json!({ "chunks": chunks });
        let parse_error = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#;
        let split = t(json!([
            {"stream": "stdout", "text": &parse_error[..20]},
            {"stream": "stdin", "text": "{}\n"},
            {"stream": "stdout", "text": format!("{}\n", &parse_error[20..])},
        ]));
        assert_eq!(syntax_guard_seen(&split), Some(true));
        let unterminated = t(json!([{"stream": "stdout", "text": parse_error}]));
        assert_eq!(syntax_guard_seen(&unterminated), Some(false));
        let on_stderr = t(json!([{"stream": "stderr", "text": format!("{parse_error}\n")}]));
        assert_eq!(syntax_guard_seen(&on_stderr), Some(false));
        let answered = t(
            json!([{"stream": "stdout", "text": "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n"}]),
        );
        assert_eq!(syntax_guard_seen(&answered), Some(false));
        let b64 = base64::engine::general_purpose::STANDARD.encode(format!("{parse_error}\r\n"));
        assert_eq!(
            syntax_guard_seen(&t(json!([{"stream": "stdout", "base64": b64}]))),
            Some(true)
        );
        let stopped = t(json!([
            {"stream": "stdout", "text": "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"},
            {"stream": "stdout", "text": "server stopped\n"},
        ]));
        assert_eq!(non_protocol_lines(&stopped), Some(1));
        assert_eq!(non_protocol_lines(&answered), Some(0));
        let elided = t(json!([{"stream": "stdout", "elided": {"sha256": "00"}}]));
        assert_eq!(syntax_guard_seen(&elided), None);
        assert_eq!(syntax_guard_seen(&json!({"startError": "x"})), None);
    }
}
