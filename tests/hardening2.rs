//! Hardening, round 2 (issue 40): each attack tried through the binary.
//! Items tested elsewhere: 1 (the README's Streamable HTTP command as
//! written) in `tests/profile_http.rs`,
//! `the_reference_server_passes_every_check_on_both_revisions`; 2 (an
//! endless `--files-from` line) in `tests/validate_stream.rs`,
//! `an_endless_list_line_is_refused_by_its_number` and
//! `a_list_without_line_feeds_ends`.

mod support;

use support::*;

/// Item 15: a zero bound can only produce verdicts about mcpres's own
/// impatience; it is refused as unusable input (exit 2) before any subject
/// starts, for every producer that takes one.
#[test]
fn zero_time_bounds_are_refused_before_anything_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let exe = exe();
    let exe = exe.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec![
            "profile",
            "run",
            "stdio-transport",
            "--startup-timeout-ms",
            "0",
        ],
        vec![
            "profile",
            "run",
            "stdio-transport",
            "--answer-timeout-ms",
            "0",
        ],
        vec![
            "profile",
            "run",
            "streamable-http",
            "--http",
            "http://127.0.0.1:0/mcp",
            "--idle-timeout-ms",
            "0",
        ],
        vec!["oauth", "run", "--startup-timeout-ms", "0"],
        vec!["oauth", "run", "--answer-timeout-ms", "0"],
    ];
    for case in cases {
        let mut args = case.clone();
        args.extend(["-o", out.to_str().unwrap(), "--", exe, "serve"]);
        let o = mcpres(&args);
        assert_eq!(o.status.code(), Some(2), "{case:?}: {}", output_text(&o));
        let err = text(&o.stderr);
        assert!(err.contains("'0'"), "{case:?}: {err}");
        assert!(!out.exists(), "{case:?} wrote {}", out.display());
    }
}

/// Item 16: the report's help no longer says "no script": the page carries
/// one, pinned by its hash in the Content-Security-Policy.
#[test]
fn the_help_names_the_report_script() {
    let o = mcpres(&["--help"]);
    let help = text(&o.stdout);
    let line = help
        .lines()
        .find(|l| l.trim_start().starts_with("report "))
        .expect(&help);
    assert!(!line.contains("no script"), "{line}");
    assert!(line.contains("one inline script, hash-pinned"), "{line}");
}

/// Item 6: a program that exists but cannot be executed is unusable input
/// (exit 2, said in words, nothing written), not a subject whose every check
/// fails; `run` refuses it the same way. (A field leg with it is NOT_RUN:
/// `tests/field_matrix.rs`.)
#[test]
fn a_program_that_cannot_be_executed_is_unusable_input() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("server.sh");
    std::fs::write(&script, "#!/bin/sh\nexec cat\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let program = script.to_str().unwrap();
    let out = tmp.path().join("out");
    let o_flag = out.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec![
            "profile",
            "run",
            "stdio-transport",
            "-o",
            o_flag,
            "--",
            program,
        ],
        vec!["oauth", "run", "-o", o_flag, "--", program],
        vec!["run", "-o", o_flag, "--", program],
    ];
    for case in cases {
        let o = mcpres(&case);
        assert_eq!(o.status.code(), Some(2), "{case:?}: {}", output_text(&o));
        let err = text(&o.stderr);
        assert!(
            err.contains("server.sh")
                && (err.contains("cannot be executed") || err.contains("Permission denied")),
            "{case:?}: {err}"
        );
        assert!(!err.contains("FAIL"), "{case:?}: {err}");
        assert!(!out.exists(), "{case:?} wrote {}", out.display());
    }
}

fn python() -> String {
    std::env::var("MCPRES_TEST_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn subject(name: &str) -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/subjects/floods")
        .join(name)
        .display()
        .to_string()
}

/// Every file below `dir`.
fn files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The evaluation's exit agrees with `validate`'s, and no artifact is
/// larger than `max` bytes.
fn bounded_and_consistent(out: &std::path::Path, o: &std::process::Output, max: u64) {
    let code = o.status.code();
    assert!(matches!(code, Some(0 | 1)), "{}", output_text(o));
    let v = mcpres(&[std::path::Path::new("validate"), out]);
    assert_eq!(v.status.code(), code, "{}", output_text(&v));
    for f in files(out) {
        let len = std::fs::metadata(&f).unwrap().len();
        assert!(len <= max, "{} is {len} bytes", f.display());
    }
}

/// Item 3: a stdio subject that opens, then floods its stdout one byte (or
/// one empty line) per write, never answering again. The run ends, its
/// evaluation is consistent, and the record stays bounded: at most
/// `CHUNK_RECORDS` (1024) chunk records per stream and probe, plus one fold.
#[test]
fn a_stdout_flood_keeps_the_record_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    for mode in ["bytes", "lines"] {
        let out = tmp.path().join(mode);
        let script = subject("open_then_flood.py");
        let python = python();
        let o = mcpres(&[
            "profile",
            "run",
            "stdio-transport",
            "--checks",
            "released-message-framing",
            "--answer-timeout-ms",
            "1000",
            "-o",
            out.to_str().unwrap(),
            "--",
            &python,
            &script,
            "--mode",
            mode,
        ]);
        bounded_and_consistent(&out, &o, 4 << 20);
        let mut transcripts = 0;
        for f in files(&out.join("artifacts")) {
            let Ok(t) = serde_json::from_slice::<serde_json::Value>(&std::fs::read(&f).unwrap())
            else {
                continue;
            };
            let Some(chunks) = t["chunks"].as_array() else {
                continue;
            };
            transcripts += 1;
            for stream in ["stdin", "stdout", "stderr"] {
                let records: Vec<_> = chunks.iter().filter(|c| c["stream"] == stream).collect();
                assert!(records.len() <= 1025, "{mode} {}: {stream}", f.display());
                let folds = records.iter().filter(|c| c.get("chunks").is_some()).count();
                assert!(folds <= 1, "{mode} {}", f.display());
                if folds == 1 {
                    assert_eq!(records.len(), 1025, "{mode} {}", f.display());
                }
            }
            // What the runner kept and dropped adds up to what it read.
            assert!(
                t["stdoutBytes"].as_u64().unwrap() >= t["stdoutDroppedBytes"].as_u64().unwrap()
            );
        }
        assert!(
            transcripts > 0,
            "{mode}: no transcript in {}",
            out.display()
        );
    }
}

/// Item 4: a Streamable HTTP subject whose every response is an endless
/// body (no length, never closed) or an endless chunked event stream. Each
/// response is read up to 4 MiB (`response-limit` on the record), the run
/// ends, and its evaluation is consistent.
#[test]
fn an_endless_http_response_is_cut_at_the_response_limit() {
    let tmp = tempfile::tempdir().unwrap();
    for mode in ["body", "chunked-events"] {
        let out = tmp.path().join(mode);
        let script = subject("http_flood.py");
        let python = python();
        let o = mcpres(&[
            "profile",
            "run",
            "streamable-http",
            "--checks",
            "keepalive",
            "--http",
            "http://127.0.0.1:0/mcp",
            "-o",
            out.to_str().unwrap(),
            "--",
            &python,
            &script,
            "{port}",
            mode,
        ]);
        // The endless event stream carries notifications but never the
        // opening's answer: an answer not given within the bound is no
        // observation (MCP_RES_OPEN_FAILED, never a FAIL), so with its one
        // check unobserved the run says so and writes nothing.
        if mode == "chunked-events" && !out.exists() {
            assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
            let err = text(&o.stderr);
            assert!(
                err.contains("MCP_RES_OPEN_FAILED") && err.contains("nothing to evaluate"),
                "{err}"
            );
            continue;
        }
        bounded_and_consistent(&out, &o, 4 << 20);
        let limited = files(&out.join("artifacts"))
            .iter()
            .any(|f| std::fs::read_to_string(f).is_ok_and(|t| t.contains("\"response-limit\"")));
        // The body flood writes 64 KiB blocks as fast as loopback takes them:
        // its first response reaches the limit long before the answer bound.
        if mode == "body" {
            assert!(limited, "{mode}: no response-limit in {}", out.display());
        }
    }
}

/// Item 8: `oauth run` against a subject that never listens. The summary
/// counts only the checks observed and says how many were not; the privacy
/// flag it could not establish is explained (no refusal seen), and the
/// validator's wording no longer asserts an unsanitized error it never saw.
#[test]
fn an_oauth_subject_that_never_listens_is_not_accused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let o = mcpres(&[
        "oauth",
        "run",
        "--startup-timeout-ms",
        "1500",
        "-o",
        out.to_str().unwrap(),
        "--",
        "/bin/sleep",
        "300",
        "{port}",
    ]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    assert!(
        err.contains("no refusal of the subject was observed"),
        "{err}"
    );
    let summary = err
        .lines()
        .find(|l| l.contains("check(s) observed"))
        .expect(&err);
    let numbers = |t: &str| -> Vec<usize> {
        t.split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect()
    };
    let (before, after) = summary.split_once(" check(s) observed").unwrap();
    let before = before.rsplit_once(": ").unwrap().1;
    let after = after.split(';').next().unwrap();
    let counts: Vec<usize> = [numbers(before), numbers(after)].concat();
    // "N of M check(s) observed, K not observed": N + K = M, K > 0.
    assert!(summary.contains(" not observed"), "{summary}");
    assert_eq!(counts[0] + counts[2], counts[1], "{summary}");
    assert!(counts[2] > 0, "{summary}");
    let evaluation = read_json(&out.join("evaluation.json"));
    assert_eq!(evaluation["privacy"]["authorizationErrorsSanitized"], false);
    let v = mcpres(&[std::path::Path::new("validate"), &out]);
    let shown = output_text(&v);
    assert!(!shown.contains("were not sanitized"), "{shown}");
    assert!(shown.contains("not shown to be sanitized"), "{shown}");
}

/// Item 12: raw ESC and BEL from a matrix (a leg's command, a TOML error
/// snippet) never reach the terminal from `field run`: they are shown
/// escaped, as `validate` shows file names; a long leg id keeps the table's
/// columns aligned.
#[test]
fn field_run_escapes_control_characters_from_the_matrix() {
    let tmp = tempfile::tempdir().unwrap();
    let id = "a-leg-id-longer-than-twenty-characters";
    let matrix = tmp.path().join("matrix.toml");
    std::fs::write(
        &matrix,
        format!(
            "[[leg]]\nid = \"{id}\"\nprofile = \"stdio-transport\"\nrevision = \"2025-11-25\"\ntransport = \"stdio\"\ncommand = [\"./no-such-\\u001b[31mserver\\u0007\"]\n"
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = mcpres(&[
        "field",
        "run",
        matrix.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", output_text(&o));
    for stream in [&o.stdout, &o.stderr] {
        assert!(
            !stream.contains(&0x1b) && !stream.contains(&0x07),
            "{}",
            output_text(&o)
        );
    }
    let all = output_text(&o);
    assert!(all.contains("no-such-\\u{1b}[31mserver\\u{7}"), "{all}");
    // The table: header and row start their second column at the same place.
    let stdout = text(&o.stdout);
    let header = stdout
        .lines()
        .find(|l| l.starts_with("LEG "))
        .expect(&stdout);
    let row = stdout.lines().find(|l| l.starts_with(id)).expect(&stdout);
    assert_eq!(header.find("TRANSPORT"), row.find("stdio"), "{stdout}");

    // A TOML error whose snippet holds a raw ESC.
    let bad = tmp.path().join("bad.toml");
    std::fs::write(&bad, "[[leg]]\nid = \"x\u{1b}]0;owned\u{7}\n").unwrap();
    let o = mcpres(&[
        "field",
        "run",
        bad.to_str().unwrap(),
        "-o",
        tmp.path().join("out2").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", output_text(&o));
    for stream in [&o.stdout, &o.stderr] {
        assert!(
            !stream.contains(&0x1b) && !stream.contains(&0x07),
            "{}",
            output_text(&o)
        );
    }
}

/// Item 12 (the report): a file name with a right-to-left override and
/// control characters is neutralised in the page (shown as escapes), not
/// only HTML-escaped.
#[test]
fn the_report_neutralises_direction_overrides_in_names() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("cli-tests/inputs/valid-bundle.json");
    let named = tmp.path().join("pass\u{202e}nosj.LIAF\u{1b}[2J.json");
    std::fs::copy(&corpus, &named).unwrap();
    let page = tmp.path().join("page.html");
    let o = mcpres(&[
        std::path::Path::new("report"),
        &named,
        std::path::Path::new("-o"),
        &page,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains('\u{202e}') && !html.contains('\u{1b}'));
    assert!(html.contains("pass\\u{202e}nosj.LIAF\\u{1b}[2J.json"));
}

/// Item 13: a value a field matrix takes from mcpres's environment into a
/// leg's command (`${NAME}`) is redacted in every file the run writes, as
/// the leg's own `env` values are.
#[test]
fn an_environment_value_expanded_into_a_command_is_never_stored() {
    let tmp = tempfile::tempdir().unwrap();
    let matrix = tmp.path().join("matrix.toml");
    std::fs::write(
        &matrix,
        r#"[[leg]]
id = "ref"
profile = "stdio-transport"
revision = "2025-11-25"
transport = "stdio"
command = ["/bin/sh", "-c", "exec \"$0\" serve", "{mcpres}", "${MCPRES_HARDENING_EXPANDED}"]
checks = ["released-message-framing"]
"#,
    )
    .unwrap();
    let secret = "opensesame-7731-expanded";
    let out = tmp.path().join("out");
    let o = command()
        .args(["field", "run"])
        .arg(&matrix)
        .arg("-o")
        .arg(&out)
        .env("MCPRES_HARDENING_EXPANDED", secret)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    assert!(!output_text(&o).contains(secret));
    let mut seen = 0;
    for f in files(&out) {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} holds the expanded value",
            f.display()
        );
        seen +=
            usize::from(String::from_utf8_lossy(&bytes).contains("[REDACTED:environment-value]"));
    }
    assert!(seen > 0, "the expanded argument is recorded nowhere");
}

/// Also found in the audit: `profile run` said INCOMPLETE where `validate`
/// says "result PASS" for the same evaluation. Both words are now named for
/// what they cover: the run (every check asked for) and the evaluation (the
/// checks it claims).
#[test]
fn profile_run_names_the_run_and_the_evaluation_result() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let exe = exe();
    let o = mcpres(&[
        "profile",
        "run",
        "protocol-revision",
        // The reference server declares every capability with a list
        // method: capability-declaration is left NOT_OBSERVED.
        "--checks",
        "capability-declaration,explicit-protocol-revision",
        "-o",
        out.to_str().unwrap(),
        "--",
        exe.to_str().unwrap(),
        "serve",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", output_text(&o));
    let stdout = text(&o.stdout);
    assert!(stdout.contains(": INCOMPLETE (2 check(s)"), "{stdout}");
    assert!(
        stdout.contains(
            "evaluation.json: result PASS over the 1 check(s) it claims (run: INCOMPLETE)"
        ),
        "{stdout}"
    );
    let v = mcpres(&[std::path::Path::new("validate"), &out]);
    assert!(
        text(&v.stdout).contains("result PASS"),
        "{}",
        output_text(&v)
    );
}

/// Item 14: on a terminal, `profile run` shows its bar from the start (no
/// check finished yet: `0/N`, no invented ETA) and counts the true elapsed
/// time from when the command began. The terminal is a pseudo-terminal made
/// by `script` (util-linux).
#[test]
fn profile_run_shows_progress_from_the_start_on_a_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let exe = exe();
    let inner = format!(
        "{} profile run stdio-transport --checks released-message-framing,startup-timeout -o {} -- {} serve",
        exe.display(),
        out.display(),
        exe.display()
    );
    let o = std::process::Command::new("script")
        .args(["-qec", &inner, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script (util-linux) runs");
    let shown = String::from_utf8_lossy(&o.stdout).replace('\r', "\n");
    assert_eq!(o.status.code(), Some(0), "{shown}");
    let bars: Vec<&str> = shown
        .lines()
        .filter(|l| l.contains("mcpres profile run: check "))
        .collect();
    assert!(
        bars.first()
            .is_some_and(|b| b.contains("check 0/2 [") && b.contains("ETA -")),
        "{shown}"
    );
    assert!(bars.iter().any(|b| b.contains("check 2/2 [")), "{shown}");
    assert!(!bars.iter().any(|b| b.contains("0/0")), "{shown}");
}

/// Items 3 and 4 (memory): a producer runs with mimalloc's purge delay at 0,
/// so memory it freed goes back to the system at once; it executes itself
/// again with the option when started without it (same process id). The
/// validator keeps the allocator's defaults, and an operator's own setting
/// is kept. Read from `/proc/PID/environ` of the running processes.
#[test]
fn producers_return_freed_memory_at_once_and_the_validator_keeps_its_defaults() {
    use std::io::Write as _;
    use std::process::Stdio;
    let environ = |pid: u32| -> Option<String> {
        let bytes = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        bytes
            .split(|b| *b == 0)
            .filter_map(|kv| std::str::from_utf8(kv).ok())
            .find_map(|kv| kv.strip_prefix("MIMALLOC_PURGE_DELAY=").map(str::to_owned))
    };
    // Wait (a watchdog, not a timing) until the process shows `want`.
    let shows = |pid: u32, want: Option<&str>| {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let now = environ(pid);
            if now.as_deref() == want || std::time::Instant::now() > until {
                return now;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    };
    let tmp = tempfile::tempdir().unwrap();
    // A producer: a profile run against a subject that takes 3 s to start.
    for (given, want) in [(None, "0"), (Some("7"), "7")] {
        let mut cmd = command();
        cmd.args([
            "profile",
            "run",
            "stdio-transport",
            "--checks",
            "startup-timeout",
            "-o",
        ])
        .arg(tmp.path().join(format!("out-{want}")))
        .arg("--")
        .arg(python())
        .arg(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/subjects/profile_subject.py"),
        )
        .args(["--break", "slow-start"])
        .env_remove("MIMALLOC_PURGE_DELAY")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        if let Some(v) = given {
            cmd.env("MIMALLOC_PURGE_DELAY", v);
        }
        let mut child = cmd.spawn().unwrap();
        let seen = shows(child.id(), Some(want));
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(seen.as_deref(), Some(want), "given {given:?}");
    }
    // The validator, held open on its input list: no such option.
    let mut child = command()
        .args(["validate", "--files-from", "-"])
        .env_remove("MIMALLOC_PURGE_DELAY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Once it has answered for its first input it runs as it will.
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        "{}/cli-tests/inputs/valid-bundle.json",
        env!("CARGO_MANIFEST_DIR")
    )
    .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert!(line.contains("valid"), "{line}");
    let seen = environ(child.id());
    drop(stdin);
    let _ = child.wait();
    assert_eq!(seen, None);
}
