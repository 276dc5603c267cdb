//! CLI transcripts: every `cli-tests/*.md` and `cli-tests/*.toml` case runs the
//! real binary from the crate root with `NO_COLOR=1` (see `cli-tests/README.md`).
//! `TRYCMD=overwrite cargo test --test cli_transcripts` regenerates them.

#[test]
fn cli_transcripts() {
    trycmd::TestCases::new()
        .register_bin("mcpres", std::path::Path::new(env!("CARGO_BIN_EXE_mcpres")))
        .env("NO_COLOR", "1")
        .case("cli-tests/*.md")
        .case("cli-tests/*.toml");
}
