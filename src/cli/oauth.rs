//! `mcpres oauth ...`: the loopback OAuth authorization fixture (and, later,
//! the OAuth-boundary evaluation runner beside it).

use std::net::IpAddr;

use clap::{Args, Subcommand};

use mcpres::server::oauth::{FixtureConfig, run_until_signal};

use super::{CliError, CliResult, Exit};

/// `mcpres oauth <action>`.
#[derive(Debug, Subcommand)]
pub enum OauthAction {
    /// Serve the loopback OAuth 2.1 authorization server fixture until SIGTERM or SIGINT.
    ///
    /// Synthetic credentials only, random per run and held in memory; none is ever printed.
    Fixture(FixtureArgs),
}

/// Arguments of `mcpres oauth fixture`.
#[derive(Debug, Clone, Args)]
pub struct FixtureArgs {
    /// TCP port; 0 picks an ephemeral port. The issuer is printed on stderr.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Address to bind; must be a loopback address.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Access token lifetime in seconds.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub token_lifetime_secs: u64,
    /// Scopes clients may request (repeatable or comma-separated).
    #[arg(long = "scope", value_delimiter = ',', default_values_t = ["mcp".to_string()])]
    pub scopes: Vec<String>,
}

pub fn main(action: OauthAction) -> CliResult {
    match action {
        OauthAction::Fixture(a) => {
            let config = FixtureConfig {
                bind: a.bind,
                port: a.port,
                token_lifetime: std::time::Duration::from_secs(a.token_lifetime_secs),
                allowed_scopes: a.scopes,
                ..FixtureConfig::default()
            };
            run_until_signal(config, |f| eprintln!("issuer: {}", f.issuer()))
                .map(|()| Exit::Valid)
                .map_err(|e| CliError::Unusable(format!("mcpres oauth fixture: {e}")))
        }
    }
}
