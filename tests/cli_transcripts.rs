//! CLI transcripts: every `cli-tests/*.md` and `cli-tests/*.toml` case runs the
//! real binary from the crate root with `NO_COLOR=1` (see `cli-tests/README.md`).
//! `TRYCMD=overwrite cargo test --test cli_transcripts` regenerates them.
//!
//! The offline verifier build (`--no-default-features`) has no `serve`, `run`,
//! `profile run`, `field run` or `oauth` commands: there, the transcripts that
//! drive them are skipped (the default build runs every transcript).

/// Transcripts that use commands of the `server` feature.
#[cfg(not(feature = "server"))]
const SERVER_ONLY: &[&str] = &[
    "cli-tests/field.md",
    "cli-tests/oauth-run.md",
    "cli-tests/oauth.md",
    "cli-tests/profile-run.md",
    "cli-tests/scenarios.md",
];

#[test]
fn cli_transcripts() {
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("mcpres", std::path::Path::new(env!("CARGO_BIN_EXE_mcpres")))
        .env("NO_COLOR", "1")
        .case("cli-tests/*.md")
        .case("cli-tests/*.toml");
    #[cfg(not(feature = "server"))]
    for path in SERVER_ONLY {
        cases.skip(path);
    }
}
