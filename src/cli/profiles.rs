//! `mcpres profiles list|show ID`: the registered reliability profiles.

use clap::Subcommand;

use super::{CliError, CliResult, Exit};

use mcpres::json::canonical;
use mcpres::profiles::{CheckKind, PROTOCOL_REVISIONS, Profile, Registry};

#[derive(Debug, Subcommand)]
pub enum ProfilesAction {
    /// One line per registered profile: id, version, status, revisions, check counts.
    List,
    /// Everything registered for one profile: digests, boundary, every check id.
    Show {
        /// A profile id such as mcp-res/oauth-boundary/v1 (or just `oauth-boundary`).
        id: String,
        /// Print the registered manifest itself (canonical JSON).
        #[arg(long)]
        json: bool,
    },
    /// Run a profile against a stdio MCP server (the same as `mcpres profile run`).
    #[cfg(feature = "server")]
    Run(Box<super::profile_run::ProfileRunArgs>),
}

/// Run a `profiles` action.
pub fn run(action: ProfilesAction) -> CliResult {
    #[cfg(feature = "server")]
    if let ProfilesAction::Run(args) = action {
        return super::profile_run::main(*args);
    }
    let registry = Registry::builtin().map_err(|e| {
        CliError::Unusable(format!(
            "mcpres profiles: the built-in registry is unusable: {e}"
        ))
    })?;
    match &action {
        ProfilesAction::List => list(registry)?,
        ProfilesAction::Show { id, json } => {
            let full = if id.contains('/') {
                id.clone()
            } else {
                format!("mcp-res/{id}/v1")
            };
            match registry.get(&full) {
                Some(p) if *json => {
                    let bytes = canonical::to_vec(&p.manifest)
                        .map_err(|e| CliError::Unusable(format!("mcpres profiles: {e}")))?;
                    outln!("{}", String::from_utf8_lossy(&bytes))?;
                }
                Some(p) => show(p)?,
                None => {
                    // Did you mean: registered ids whose short name contains
                    // what was asked, or that it contains.
                    let asked = id
                        .trim_start_matches("mcp-res/")
                        .trim_end_matches("/v1")
                        .to_ascii_lowercase();
                    let near: Vec<String> = registry
                        .profiles()
                        .iter()
                        .map(|p| p.id.to_string())
                        .filter(|pid| {
                            let short = pid
                                .trim_start_matches("mcp-res/")
                                .trim_end_matches("/v1")
                                .to_ascii_lowercase();
                            !asked.is_empty() && (short.contains(&asked) || asked.contains(&short))
                        })
                        .collect();
                    let hint = match near.as_slice() {
                        [] => String::new(),
                        [one] => format!("; did you mean {one}?"),
                        many => format!("; did you mean one of {}?", many.join(", ")),
                    };
                    return Err(CliError::Unusable(format!(
                        "mcpres profiles: no profile {} is registered{hint}; `mcpres profiles list` prints them",
                        super::output::escaped(&full)
                    )));
                }
            }
        }
        #[cfg(feature = "server")]
        ProfilesAction::Run(_) => unreachable!("handled above"),
    }
    Ok(Exit::Valid)
}

fn list(registry: &Registry) -> Result<(), CliError> {
    outln!(
        "{:<44} {:<7} {:<12} {:<22} REQUIRED/CONDITIONAL/EXPERIMENTAL CHECKS",
        "PROFILE",
        "VERSION",
        "STATUS",
        "PROTOCOL REVISIONS"
    )?;
    for p in registry.profiles() {
        outln!(
            "{:<44} {:<7} {:<12} {:<22} {}/{}/{}",
            p.id,
            p.version,
            p.status.as_str(),
            p.protocol_revisions.join(","),
            p.required_checks.len(),
            p.conditional_checks.len(),
            p.experimental_checks.len()
        )?;
    }
    let experimental = registry
        .profiles()
        .iter()
        .filter(|p| !p.scored_as_released())
        .count();
    outln!(
        "\n{} profiles registered; the {experimental} EXPERIMENTAL ones are recognized but never scored as released MCP behaviour.",
        registry.profiles().len()
    )?;
    Ok(())
}

fn show(p: &Profile) -> Result<(), CliError> {
    outln!("{} {}", p.id, p.version)?;
    let standing = if p.scored_as_released() {
        "describes released MCP behaviour (draft registration)"
    } else {
        "recognized, never scored as released MCP behaviour"
    };
    outln!("status:             {} ({standing})", p.status.as_str())?;
    outln!("protocol revisions: {}", p.protocol_revisions.join(", "))?;
    outln!(
        "manifest sha256:    {} (canonical JSON; evaluations bind this)",
        p.manifest_sha256
    )?;
    outln!(
        "file sha256:        {} (manifest file bytes; the profile registry lists this)",
        p.file_sha256
    )?;
    outln!("remote policy:      {}", p.remote_policy)?;
    outln!("boundary:           {}", p.composition_boundary)?;
    outln!("sources:")?;
    for s in &p.source_refs {
        outln!("  {s}")?;
    }
    let full: Vec<String> = PROTOCOL_REVISIONS
        .iter()
        .filter(|r| p.supports_revision(r))
        .map(|r| format!("{} at {r}", p.applicable_check_ids(r).len()))
        .collect();
    outln!(
        "checks:             {} registered; a FULL_PROFILE claim covers {}",
        p.registered_check_ids().len(),
        full.join(", ")
    )?;
    for id in p.registered_check_ids() {
        match p.check_kind(&id) {
            Some(CheckKind::Conditional(revisions)) => {
                outln!("  conditional   {id} (only at {})", revisions.join(", "))?
            }
            Some(kind) => outln!("  {:<13} {id}", kind.label())?,
            None => {}
        }
    }
    if let Some(provenance) = &p.experimental_provenance {
        outln!("experimental provenance:")?;
        for key in [
            "proposalVersion",
            "upstreamStatus",
            "exactSource",
            "observedAt",
        ] {
            if let Some(v) = provenance.get(key).and_then(|v| v.as_str()) {
                outln!("  {key}: {v}")?;
            }
        }
        if let Some(items) = provenance["knownIncompatibilities"].as_array() {
            for item in items.iter().filter_map(|v| v.as_str()) {
                outln!("  known incompatibility: {item}")?;
            }
        }
        if let Some(v) = provenance["removalMigrationPath"].as_str() {
            outln!("  removal/migration: {v}")?;
        }
    }
    Ok(())
}
