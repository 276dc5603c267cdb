//! `mcpres keygen`, `sign` and `trust-policy`: the producing side of
//! authenticity. Verification is `validate`/`verify` in the parent module.

use std::path::{Path, PathBuf};

use serde_json::Value;

use mcpres::attest::keys::{KeyPair, PublicKey};
use mcpres::attest::policy;
use mcpres::bundle;
use mcpres::json::Limits;
use mcpres::produce::builder::to_file_bytes;
use mcpres::produce::sign::{self, SignError, SignOptions, Transparency};
use mcpres::validate::time;

#[derive(Debug, clap::Args)]
pub struct KeygenArgs {
    /// Base name: writes NAME.key (PKCS#8 PEM, mode 0600) and NAME.pub (SPKI PEM).
    #[arg(long, value_name = "NAME")]
    out: PathBuf,
}

#[derive(Debug, clap::Args)]
pub struct SignArgs {
    /// The private key (PKCS#8 PEM, as `mcpres keygen` writes it).
    #[arg(long, value_name = "KEY.pem")]
    key: PathBuf,
    /// The signer identity bound into the statement (for example an e-mail address or URI).
    #[arg(long)]
    identity: String,
    /// The id of the trust policy the verifier is expected to use.
    #[arg(long)]
    trust_policy_id: String,
    /// Signing time, RFC 3339 (default: now).
    #[arg(long, value_name = "RFC3339")]
    signing_time: Option<String>,
    /// Transparency log id (with --transparency-entry and --inclusion-proof).
    #[arg(long, requires_all = ["transparency_entry", "inclusion_proof"])]
    transparency_log: Option<String>,
    /// Transparency log entry id.
    #[arg(long, requires = "transparency_log")]
    transparency_entry: Option<String>,
    /// File holding the inclusion proof bytes (embedded with their SHA-256).
    #[arg(long, requires = "transparency_log", value_name = "FILE")]
    inclusion_proof: Option<PathBuf>,
    /// Claimed classification (default SIGNED, or the existing claim when adding a witness).
    #[arg(long, value_name = "CLASSIFICATION")]
    claim: Option<String>,
    /// A v0.2 bundle (file or directory), or an attested bundle to add a witness to.
    bundle: PathBuf,
    /// The attested bundle to write (must not exist).
    #[arg(short, long)]
    output: PathBuf,
    #[command(flatten)]
    timeout: super::limits::TimeoutArg,
}

#[derive(Debug, clap::Subcommand)]
pub enum TrustPolicyCommand {
    /// Write a new, empty trust policy.
    Init {
        /// Policy id (what signers pass as --trust-policy-id).
        #[arg(long)]
        id: String,
        /// Start of the validity window, RFC 3339.
        #[arg(long, value_name = "RFC3339")]
        valid_from: String,
        /// End of the validity window, RFC 3339.
        #[arg(long, value_name = "RFC3339")]
        valid_until: String,
        /// Policy version (MAJOR.MINOR.PATCH); each edit bumps PATCH.
        #[arg(long, default_value = "1.0.0")]
        policy_version: String,
        /// The new policy file (must not exist).
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Trust a public key for a signer identity.
    AddSigner {
        /// The policy file to edit (replaced atomically).
        policy: PathBuf,
        /// The signer's public key (SPKI PEM, as `mcpres keygen` writes NAME.pub).
        #[arg(long, value_name = "PUB.pem")]
        key: PathBuf,
        /// The identity this key may sign as.
        #[arg(long)]
        identity: String,
    },
    /// Revoke a key: signatures by it fail with MCP_RES_ATTESTATION_KEY_REVOKED.
    Revoke {
        /// The policy file to edit (replaced atomically).
        policy: PathBuf,
        /// The public key to revoke (SPKI PEM).
        #[arg(
            long,
            value_name = "PUB.pem",
            conflicts_with = "fingerprint",
            required_unless_present = "fingerprint"
        )]
        key: Option<PathBuf>,
        /// Or the key's fingerprint (64 lowercase hex digits).
        #[arg(long)]
        fingerprint: Option<String>,
    },
}

pub fn run_keygen(args: &KeygenArgs) -> i32 {
    let pair = match KeyPair::generate() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("mcpres keygen: {e}");
            return 2;
        }
    };
    match pair.write_pair(&args.out) {
        Ok((key_path, pub_path)) => {
            eprintln!(
                "mcpres keygen: wrote {} (private, mode 0600) and {}",
                key_path.display(),
                pub_path.display()
            );
            println!("{}", pair.public().fingerprint());
            0
        }
        Err(e) => {
            eprintln!("mcpres keygen: {e}");
            2
        }
    }
}

pub fn run_sign(args: &SignArgs) -> i32 {
    match sign_inner(args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("mcpres sign: {message}");
            2
        }
    }
}

fn sign_inner(args: &SignArgs) -> Result<i32, String> {
    if std::fs::symlink_metadata(&args.output).is_ok() {
        return Err(format!(
            "{} already exists; mcpres never overwrites",
            args.output.display()
        ));
    }
    let key = KeyPair::read_pem(&args.key).map_err(|e| format!("--key: {e}"))?;
    #[cfg(unix)]
    if mcpres::attest::keys::is_group_or_world_readable(&args.key) {
        eprintln!(
            "mcpres sign: warning: {} can be read by other users; keep private keys at mode 0600",
            args.key.display()
        );
    }
    let signing_time = match &args.signing_time {
        Some(t) => t.clone(),
        None => time::format_rfc3339_millis(time::now_millis()),
    };
    let transparency = match (
        &args.transparency_log,
        &args.transparency_entry,
        &args.inclusion_proof,
    ) {
        (Some(log), Some(entry), Some(proof)) => Some(Transparency {
            log_id: log.clone(),
            entry_uuid: entry.clone(),
            inclusion_proof: mcpres::fsio::read_capped(proof, sign::MAX_INCLUSION_PROOF_BYTES)
                .map_err(|e| format!("--inclusion-proof: cannot read {}: {e}", proof.display()))?,
        }),
        _ => None,
    };
    args.timeout.start_for("sign", &args.bundle);
    let loaded = bundle::load(&args.bundle, &Limits::default())
        .map_err(|e| format!("{}: {e}", args.bundle.display()))?;
    if let Some(first) = loaded.storage_findings.first() {
        eprintln!(
            "mcpres sign: refusing to sign {}: {} ({})",
            args.bundle.display(),
            first.code,
            first.message
        );
        return Ok(1);
    }
    let Some(doc) = loaded.doc else {
        return Err(format!(
            "{}: no bundle document could be read",
            args.bundle.display()
        ));
    };
    let options = SignOptions {
        signer_identity: args.identity.clone(),
        trust_policy_id: args.trust_policy_id.clone(),
        signing_time,
        transparency,
        claim: args.claim.clone(),
    };
    let wrapper = match sign::attest(&doc, &key, &options) {
        Ok(w) => w,
        Err(SignError::InvalidInput(report)) => {
            eprintln!(
                "mcpres sign: refusing to sign {}: it is not valid ({}); run `mcpres validate` for every finding",
                args.bundle.display(),
                report.diagnostics.join(", ")
            );
            return Ok(1);
        }
        Err(e) => return Err(e.to_string()),
    };
    let bytes = to_file_bytes(&wrapper).map_err(|e| e.to_string())?;
    bundle::dir::write_new(&args.output, &bytes)
        .map_err(|e| format!("cannot create {}: {e}", args.output.display()))?;
    let envelopes = wrapper["authenticity"]["envelopes"]
        .as_array()
        .map_or(0, Vec::len);
    eprintln!(
        "mcpres sign: wrote {} ({} envelope{}, claims {}), signed by key {} as {:?}",
        args.output.display(),
        envelopes,
        if envelopes == 1 { "" } else { "s" },
        wrapper["authenticity"]["claimedClassification"]
            .as_str()
            .unwrap_or("?"),
        key.public().fingerprint(),
        args.identity
    );
    Ok(0)
}

pub fn run_trust_policy(command: &TrustPolicyCommand) -> i32 {
    let result = match command {
        TrustPolicyCommand::Init {
            id,
            valid_from,
            valid_until,
            policy_version,
            output,
        } => policy::init(id, policy_version, valid_from, valid_until)
            .map_err(|e| e.to_string())
            .and_then(|p| {
                let bytes = to_file_bytes(&p).map_err(|e| e.to_string())?;
                bundle::dir::write_new(output, &bytes)
                    .map_err(|e| format!("cannot create {}: {e}", output.display()))?;
                Ok(format!("wrote trust policy {id:?} to {}", output.display()))
            }),
        TrustPolicyCommand::AddSigner {
            policy: path,
            key,
            identity,
        } => PublicKey::read_pem(key)
            .map_err(|e| format!("--key: {e}"))
            .and_then(|public| {
                let fingerprint = public.fingerprint();
                edit(path, |p| policy::add_signer(p, &fingerprint, identity)).map(|v| {
                    format!("trusted key {fingerprint} for {identity:?} (policy version {v})")
                })
            }),
        TrustPolicyCommand::Revoke {
            policy: path,
            key,
            fingerprint,
        } => {
            let fingerprint = match (key, fingerprint) {
                (Some(key), _) => PublicKey::read_pem(key)
                    .map(|p| p.fingerprint())
                    .map_err(|e| format!("--key: {e}")),
                (None, Some(f)) => Ok(f.clone()),
                (None, None) => Err("give --key or --fingerprint".to_owned()),
            };
            fingerprint.and_then(|f| {
                edit(path, |p| policy::revoke(p, &f))
                    .map(|v| format!("revoked key {f} (policy version {v})"))
            })
        }
    };
    match result {
        Ok(message) => {
            eprintln!("mcpres trust-policy: {message}");
            0
        }
        Err(message) => {
            eprintln!("mcpres trust-policy: {message}");
            2
        }
    }
}

/// Read a policy, apply `change`, and replace the file atomically (a new
/// sibling file renamed over it). Symlinks are refused. Returns the new version.
fn edit(
    path: &Path,
    change: impl FnOnce(&mut Value) -> Result<(), policy::PolicyError>,
) -> Result<String, String> {
    let (mut value, _) = bundle::read_json(path, &Limits::default())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    change(&mut value).map_err(|e| e.to_string())?;
    let bytes = to_file_bytes(&value).map_err(|e| e.to_string())?;
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(format!(".mcpres-{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp_name);
    bundle::dir::write_new(&tmp, &bytes)
        .map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
    if let Err(e) = std::fs::rename(&tmp, path) {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("cannot replace {}: {e}", path.display()));
    }
    Ok(value["version"].as_str().unwrap_or("?").to_owned())
}
