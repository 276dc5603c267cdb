//! `mcpres keygen`, `sign` and `trust-policy`: the producing side of
//! authenticity. Verification is `validate`/`verify` in the parent module.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::output::{escaped, shown};
use super::{CliError, CliResult, Exit, check_new_file, expect_file};

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

/// The longest signer identity the statement and policy schemas accept, in characters.
pub const MAX_IDENTITY_CHARS: usize = 256;
/// The longest trust policy id the statement and policy schemas accept, in characters.
pub const MAX_POLICY_ID_CHARS: usize = 128;

/// A text flag whose length the schemas bound (in characters, as JSON
/// Schema counts them): refused before any work, naming the flag.
fn bounded_text(who: &str, flag: &str, value: &str, max: usize) -> Result<(), CliError> {
    let chars = value.chars().count();
    if chars == 0 || chars > max {
        let got = if chars == 0 {
            "it is empty".to_owned()
        } else {
            format!("it has {chars}")
        };
        return Err(CliError::Unusable(format!(
            "{who}: {flag} must be 1 to {max} characters; {got}"
        )));
    }
    if value.chars().any(char::is_control) {
        return Err(CliError::Unusable(format!(
            "{who}: {flag} {:?} holds a control character",
            escaped(value)
        )));
    }
    Ok(())
}

/// `keygen --out NAME`: a base name, not a directory.
pub struct Keygen {
    out: PathBuf,
}

impl KeygenArgs {
    pub fn into_checked(self) -> Result<Keygen, CliError> {
        let who = "mcpres keygen: --out";
        let text = self.out.as_os_str().to_string_lossy();
        if text.is_empty() {
            return Err(CliError::Unusable(format!(
                "{who}: the name is empty; give a base name such as keys/release (writes keys/release.key and keys/release.pub)"
            )));
        }
        let names_a_directory = text.ends_with('/')
            || text.ends_with(std::path::MAIN_SEPARATOR)
            || self.out.file_name().is_none()
            || std::fs::symlink_metadata(&self.out).is_ok_and(|m| m.is_dir());
        if names_a_directory {
            return Err(CliError::Unusable(format!(
                "{who} {}: expected a base name, not a directory (for example keys/release writes keys/release.key and keys/release.pub)",
                shown(&self.out)
            )));
        }
        let mut key = self.out.as_os_str().to_owned();
        key.push(".key");
        check_new_file(Path::new(&key), who)?;
        Ok(Keygen { out: self.out })
    }
}

pub fn run_keygen(args: Keygen) -> CliResult {
    let pair =
        KeyPair::generate().map_err(|e| CliError::Unusable(format!("mcpres keygen: {e}")))?;
    let (key_path, pub_path) = pair
        .write_pair(&args.out)
        .map_err(|e| CliError::Unusable(format!("mcpres keygen: {e}")))?;
    errln!(
        "mcpres keygen: wrote {} (private, mode 0600) and {}",
        shown(&key_path),
        shown(&pub_path)
    );
    outln!("{}", pair.public().fingerprint())?;
    Ok(Exit::Valid)
}

impl SignArgs {
    /// Refuse arguments the signed statement's schema cannot hold, before
    /// any file is read.
    pub fn into_checked(self) -> Result<SignArgs, CliError> {
        let who = "mcpres sign";
        bounded_text(who, "--identity", &self.identity, MAX_IDENTITY_CHARS)?;
        bounded_text(
            who,
            "--trust-policy-id",
            &self.trust_policy_id,
            MAX_POLICY_ID_CHARS,
        )?;
        if let Some(t) = &self.signing_time
            && time::rfc3339_millis(t).is_none()
        {
            return Err(CliError::Unusable(format!(
                "{who}: --signing-time {:?} is not an RFC 3339 date-time (for example 2026-11-30T12:00:00Z)",
                escaped(t)
            )));
        }
        expect_file(
            &self.key,
            "mcpres sign: --key",
            "a private key file (PKCS#8 PEM)",
        )?;
        check_new_file(&self.output, "mcpres sign: --output")?;
        Ok(self)
    }
}

pub fn run_sign(args: SignArgs) -> CliResult {
    let who = |m: String| CliError::Unusable(format!("mcpres sign: {m}"));
    let key = KeyPair::read_pem(&args.key).map_err(|e| who(format!("--key: {e}")))?;
    #[cfg(unix)]
    if mcpres::attest::keys::is_group_or_world_readable(&args.key) {
        errln!(
            "mcpres sign: warning: {} can be read by other users; keep private keys at mode 0600",
            shown(&args.key)
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
                .map_err(|e| {
                    who(format!(
                        "--inclusion-proof: cannot read {}: {e}",
                        shown(proof)
                    ))
                })?,
        }),
        _ => None,
    };
    args.timeout.start_for("sign", &args.bundle);
    let loaded = bundle::load(&args.bundle, &Limits::default())
        .map_err(|e| who(format!("{}: {}", shown(&args.bundle), e)))?;
    if let Some(first) = loaded.storage_findings.first() {
        return Err(CliError::Failing(format!(
            "mcpres sign: refusing to sign {}: {} ({})",
            shown(&args.bundle),
            first.code,
            first.message
        )));
    }
    let Some(doc) = loaded.doc else {
        return Err(who(format!(
            "{}: no bundle document could be read",
            shown(&args.bundle)
        )));
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
            return Err(CliError::Failing(format!(
                "mcpres sign: refusing to sign {}: it is not valid ({}); run `mcpres validate` for every finding",
                shown(&args.bundle),
                report.diagnostics.join(", ")
            )));
        }
        Err(e) => return Err(who(e.to_string())),
    };
    let bytes = to_file_bytes(&wrapper).map_err(|e| who(e.to_string()))?;
    bundle::dir::write_new(&args.output, &bytes)
        .map_err(|e| who(format!("cannot create {}: {e}", shown(&args.output))))?;
    let envelopes = wrapper["authenticity"]["envelopes"]
        .as_array()
        .map_or(0, Vec::len);
    errln!(
        "mcpres sign: wrote {} ({} envelope{}, claims {}), signed by key {} as {:?}",
        shown(&args.output),
        envelopes,
        if envelopes == 1 { "" } else { "s" },
        wrapper["authenticity"]["claimedClassification"]
            .as_str()
            .unwrap_or("?"),
        key.public().fingerprint(),
        args.identity
    );
    Ok(Exit::Valid)
}

impl TrustPolicyCommand {
    /// Refuse ids and identities the policy schema cannot hold, and a
    /// policy file the user cannot write, before any work.
    pub fn into_checked(self) -> Result<TrustPolicyCommand, CliError> {
        let who = "mcpres trust-policy";
        match &self {
            TrustPolicyCommand::Init { id, output, .. } => {
                bounded_text(who, "--id", id, MAX_POLICY_ID_CHARS)?;
                check_new_file(output, "mcpres trust-policy: --output")?;
            }
            TrustPolicyCommand::AddSigner {
                policy, identity, ..
            } => {
                bounded_text(who, "--identity", identity, MAX_IDENTITY_CHARS)?;
                editable(policy)?;
            }
            TrustPolicyCommand::Revoke { policy, .. } => editable(policy)?,
        }
        Ok(self)
    }
}

/// A policy file `trust-policy` may replace: a regular file the user can
/// write. A read-only policy is refused rather than replaced.
fn editable(path: &Path) -> Result<(), CliError> {
    expect_file(
        path,
        "mcpres trust-policy:",
        "a trust policy file (mcp-res.trust-policy/0.2.0)",
    )?;
    let read_only = || {
        CliError::Unusable(format!(
            "mcpres trust-policy: {} is read-only; it is not replaced (make it writable first, or copy it)",
            shown(path)
        ))
    };
    // A file without any write permission bit is read-only even for a user
    // (root) whom the system would let write it.
    if std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly()) {
        return Err(read_only());
    }
    // Opening for writing changes nothing (no truncation) and asks the
    // operating system itself whether this user may write the file.
    match std::fs::OpenOptions::new().write(true).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Err(read_only()),
        // A missing file and other problems are reported when it is read.
        Err(_) => Ok(()),
    }
}

pub fn run_trust_policy(command: TrustPolicyCommand) -> CliResult {
    let result = match &command {
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
                    .map_err(|e| format!("cannot create {}: {e}", shown(output)))?;
                Ok(format!("wrote trust policy {id:?} to {}", shown(output)))
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
            errln!("mcpres trust-policy: {message}");
            Ok(Exit::Valid)
        }
        Err(message) => Err(CliError::Unusable(format!(
            "mcpres trust-policy: {message}"
        ))),
    }
}

/// Read a policy, apply `change`, and replace the file atomically (a new
/// sibling file renamed over it), keeping the file's permission bits.
/// Symlinks are refused. Returns the new version.
fn edit(
    path: &Path,
    change: impl FnOnce(&mut Value) -> Result<(), policy::PolicyError>,
) -> Result<String, String> {
    let (mut value, _) =
        bundle::read_json(path, &Limits::default()).map_err(|e| format!("{}: {e}", shown(path)))?;
    let permissions = std::fs::metadata(path)
        .map_err(|e| format!("{}: {e}", shown(path)))?
        .permissions();
    change(&mut value).map_err(|e| e.to_string())?;
    let bytes = to_file_bytes(&value).map_err(|e| e.to_string())?;
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(format!(".mcpres-{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp_name);
    bundle::dir::write_new(&tmp, &bytes)
        .map_err(|e| format!("cannot create {}: {e}", shown(&tmp)))?;
    let replaced = std::fs::set_permissions(&tmp, permissions)
        .map_err(|e| format!("cannot keep the mode of {}: {e}", shown(path)))
        .and_then(|()| {
            std::fs::rename(&tmp, path).map_err(|e| format!("cannot replace {}: {e}", shown(path)))
        });
    if let Err(e) = replaced {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(value["version"].as_str().unwrap_or("?").to_owned())
}
