//! `mcpres profiles list|show ID`: the registered reliability profiles.

use clap::Subcommand;

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
}

/// Run a `profiles` action; returns the exit code.
pub fn run(action: &ProfilesAction) -> i32 {
    let registry = match Registry::builtin() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mcpres profiles: the built-in registry is unusable: {e}");
            return 2;
        }
    };
    match action {
        ProfilesAction::List => {
            list(registry);
            0
        }
        ProfilesAction::Show { id, json } => {
            let full = if id.contains('/') {
                id.clone()
            } else {
                format!("mcp-res/{id}/v1")
            };
            match registry.get(&full) {
                Some(p) if *json => match canonical::to_vec(&p.manifest) {
                    Ok(bytes) => {
                        println!("{}", String::from_utf8_lossy(&bytes));
                        0
                    }
                    Err(e) => {
                        eprintln!("mcpres profiles: {e}");
                        2
                    }
                },
                Some(p) => {
                    show(p);
                    0
                }
                None => {
                    eprintln!(
                        "mcpres profiles: no profile {full} is registered; `mcpres profiles list` prints them"
                    );
                    2
                }
            }
        }
    }
}

fn list(registry: &Registry) {
    println!(
        "{:<44} {:<7} {:<12} {:<22} REQUIRED/CONDITIONAL/EXPERIMENTAL CHECKS",
        "PROFILE", "VERSION", "STATUS", "PROTOCOL REVISIONS"
    );
    for p in registry.profiles() {
        println!(
            "{:<44} {:<7} {:<12} {:<22} {}/{}/{}",
            p.id,
            p.version,
            p.status.as_str(),
            p.protocol_revisions.join(","),
            p.required_checks.len(),
            p.conditional_checks.len(),
            p.experimental_checks.len()
        );
    }
    let experimental = registry
        .profiles()
        .iter()
        .filter(|p| !p.scored_as_released())
        .count();
    println!(
        "\n{} profiles registered; the {experimental} EXPERIMENTAL ones are recognized but never scored as released MCP behaviour.",
        registry.profiles().len()
    );
}

fn show(p: &Profile) {
    println!("{} {}", p.id, p.version);
    let standing = if p.scored_as_released() {
        "describes released MCP behaviour (draft registration)"
    } else {
        "recognized, never scored as released MCP behaviour"
    };
    println!("status:             {} ({standing})", p.status.as_str());
    println!("protocol revisions: {}", p.protocol_revisions.join(", "));
    println!(
        "manifest sha256:    {} (canonical JSON; evaluations bind this)",
        p.manifest_sha256
    );
    println!(
        "file sha256:        {} (manifest file bytes; the profile registry lists this)",
        p.file_sha256
    );
    println!("remote policy:      {}", p.remote_policy);
    println!("boundary:           {}", p.composition_boundary);
    println!("sources:");
    for s in &p.source_refs {
        println!("  {s}");
    }
    let full: Vec<String> = PROTOCOL_REVISIONS
        .iter()
        .filter(|r| p.supports_revision(r))
        .map(|r| format!("{} at {r}", p.applicable_check_ids(r).len()))
        .collect();
    println!(
        "checks:             {} registered; a FULL_PROFILE claim covers {}",
        p.registered_check_ids().len(),
        full.join(", ")
    );
    for id in p.registered_check_ids() {
        match p.check_kind(&id) {
            Some(CheckKind::Conditional(revisions)) => {
                println!("  conditional   {id} (only at {})", revisions.join(", "))
            }
            Some(kind) => println!("  {:<13} {id}", kind.label()),
            None => {}
        }
    }
    if let Some(provenance) = &p.experimental_provenance {
        println!("experimental provenance:");
        for key in [
            "proposalVersion",
            "upstreamStatus",
            "exactSource",
            "observedAt",
        ] {
            if let Some(v) = provenance.get(key).and_then(|v| v.as_str()) {
                println!("  {key}: {v}");
            }
        }
        if let Some(items) = provenance["knownIncompatibilities"].as_array() {
            for item in items.iter().filter_map(|v| v.as_str()) {
                println!("  known incompatibility: {item}");
            }
        }
        if let Some(v) = provenance["removalMigrationPath"].as_str() {
            println!("  removal/migration: {v}");
        }
    }
}
