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
