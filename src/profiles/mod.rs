//! The registry of MCP-RES v0.2 reliability profiles.
//!
//! The standard registers twelve profile manifests (`mcp-res.reliability-profile-manifest/0.2.0`).
//! Each one names a profile id and version, a status (`PROVISIONAL` or `EXPERIMENTAL`), the
//! protocol revisions it covers, and three lists of check ids: required checks, conditional
//! checks (each applicable to named revisions only) and experimental checks (registered but never
//! counted towards a full claim). Profile and OAuth-boundary evaluations bind a manifest by id,
//! version and the SHA-256 of its canonical JSON.
//!
//! mcpres carries its own copy of the manifests (`profiles/*.json`, standard data) and builds the
//! registry from them at first use. A registry can also be loaded from a directory, which is how
//! tests exercise the "registry unusable" diagnostics.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use crate::json::canonical::{self, cmp_utf16, sha256_hex};
use crate::schema::{self, SchemaKind};

/// The id of the OAuth authorization-boundary profile.
pub const OAUTH_BOUNDARY_ID: &str = "mcp-res/oauth-boundary/v1";

/// The protocol revisions v0.2 knows; they are never treated as equivalent.
pub const PROTOCOL_REVISIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];

/// The manifests mcpres ships, by file name (sorted, as a directory listing would be).
const BUILTIN: [(&str, &str); 12] = [
    (
        "async-operation-v1.json",
        include_str!("../../profiles/async-operation-v1.json"),
    ),
    (
        "cache-behavior-v1.json",
        include_str!("../../profiles/cache-behavior-v1.json"),
    ),
    ("dpop-v1.json", include_str!("../../profiles/dpop-v1.json")),
    (
        "enterprise-managed-authorization-v1.json",
        include_str!("../../profiles/enterprise-managed-authorization-v1.json"),
    ),
    (
        "extension-boundary-v1.json",
        include_str!("../../profiles/extension-boundary-v1.json"),
    ),
    (
        "oauth-boundary-v1.json",
        include_str!("../../profiles/oauth-boundary-v1.json"),
    ),
    (
        "oauth-client-credentials-v1.json",
        include_str!("../../profiles/oauth-client-credentials-v1.json"),
    ),
    (
        "operational-resilience-v1.json",
        include_str!("../../profiles/operational-resilience-v1.json"),
    ),
    (
        "protocol-revision-v1.json",
        include_str!("../../profiles/protocol-revision-v1.json"),
    ),
    (
        "stdio-transport-v1.json",
        include_str!("../../profiles/stdio-transport-v1.json"),
    ),
    (
        "streamable-http-v1.json",
        include_str!("../../profiles/streamable-http-v1.json"),
    ),
    (
        "token-exchange-v1.json",
        include_str!("../../profiles/token-exchange-v1.json"),
    ),
];

/// The standing of a registered profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileStatus {
    /// A draft profile describing released MCP behaviour.
    Provisional,
    /// Describes proposals or non-MCP standards; its results never count as released behaviour.
    Experimental,
}

impl ProfileStatus {
    /// The status as the manifest spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ProfileStatus::Provisional => "PROVISIONAL",
            ProfileStatus::Experimental => "EXPERIMENTAL",
        }
    }
}

/// How a check id is registered in a profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckKind {
    /// Required for a full-profile claim at every supported revision.
    Required,
    /// Required for a full-profile claim only at the listed revisions.
    Conditional(Vec<String>),
    /// Registered, but never part of a full-profile claim.
    Experimental,
}

impl CheckKind {
    /// A short label for listings.
    pub fn label(&self) -> &'static str {
        match self {
            CheckKind::Required => "required",
            CheckKind::Conditional(_) => "conditional",
            CheckKind::Experimental => "experimental",
        }
    }
}

/// A conditional check and the revisions it applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionalCheck {
    pub id: String,
    pub protocol_revisions: Vec<String>,
}

/// One registered profile.
#[derive(Debug, Clone)]
pub struct Profile {
    /// The file the manifest came from.
    pub file_name: String,
    pub id: String,
    pub version: String,
    pub status: ProfileStatus,
    pub protocol_revisions: Vec<String>,
    pub required_checks: Vec<String>,
    pub conditional_checks: Vec<ConditionalCheck>,
    pub experimental_checks: Vec<String>,
    pub source_refs: Vec<String>,
    pub remote_policy: String,
    pub composition_boundary: String,
    /// `experimentalProvenance`, present exactly for EXPERIMENTAL profiles.
    pub experimental_provenance: Option<Value>,
    /// The manifest as parsed.
    pub manifest: Value,
    /// SHA-256 of the canonical manifest: what evaluations bind as `manifestSha256`.
    pub manifest_sha256: String,
    /// SHA-256 of the manifest file's bytes: what the profile registry document lists.
    pub file_sha256: String,
}

impl Profile {
    /// Every registered check id (required, conditional, experimental), sorted.
    pub fn registered_check_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .required_checks
            .iter()
            .cloned()
            .chain(self.conditional_checks.iter().map(|c| c.id.clone()))
            .chain(self.experimental_checks.iter().cloned())
            .collect();
        ids.sort_by(|a, b| cmp_utf16(a, b));
        ids
    }

    /// The checks a FULL_PROFILE claim at `revision` must cover: every required check and
    /// every conditional check applicable to that revision, sorted. Experimental checks never.
    pub fn applicable_check_ids(&self, revision: &str) -> Vec<String> {
        let mut ids: Vec<String> = self
            .required_checks
            .iter()
            .cloned()
            .chain(
                self.conditional_checks
                    .iter()
                    .filter(|c| c.protocol_revisions.iter().any(|r| r == revision))
                    .map(|c| c.id.clone()),
            )
            .collect();
        ids.sort_by(|a, b| cmp_utf16(a, b));
        ids
    }

    /// How `check_id` is registered, if it is.
    pub fn check_kind(&self, check_id: &str) -> Option<CheckKind> {
        if self.required_checks.iter().any(|c| c == check_id) {
            return Some(CheckKind::Required);
        }
        if let Some(c) = self.conditional_checks.iter().find(|c| c.id == check_id) {
            return Some(CheckKind::Conditional(c.protocol_revisions.clone()));
        }
        if self.experimental_checks.iter().any(|c| c == check_id) {
            return Some(CheckKind::Experimental);
        }
        None
    }

    /// Whether the profile covers `revision`.
    pub fn supports_revision(&self, revision: &str) -> bool {
        self.protocol_revisions.iter().any(|r| r == revision)
    }

    /// Whether results under this profile may count as released MCP behaviour.
    pub fn scored_as_released(&self) -> bool {
        self.status == ProfileStatus::Provisional
    }
}

/// Why a set of manifests is not a usable registry.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("cannot read the profile directory {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("profile manifest {name} is not valid JSON: {message}")]
    Parse { name: String, message: String },
    #[error("profile manifest {name} does not match the manifest schema: {details}")]
    Schema { name: String, details: String },
    #[error(
        "profile manifest {name}: status EXPERIMENTAL and experimentalProvenance must go together"
    )]
    Provenance { name: String },
    #[error("profile manifest {name} repeats a check id or an already registered profile id")]
    Duplicate { name: String },
    #[error("profile manifest {name} has no canonical form: {message}")]
    Canonical { name: String, message: String },
}

/// The registered profiles, in manifest file-name order.
#[derive(Debug, Clone)]
pub struct Registry {
    profiles: Vec<Profile>,
}

impl Registry {
    /// The registry built from the manifests mcpres ships (built once, then shared).
    pub fn builtin() -> Result<&'static Registry, &'static RegistryError> {
        static BUILT: OnceLock<Result<Registry, RegistryError>> = OnceLock::new();
        BUILT
            .get_or_init(|| {
                Registry::from_sources(BUILTIN.iter().map(|(n, s)| (n.to_string(), s.as_bytes())))
            })
            .as_ref()
    }

    /// The shipped manifests' file names and bytes.
    pub fn builtin_sources() -> impl Iterator<Item = (&'static str, &'static [u8])> {
        BUILTIN.iter().map(|(n, s)| (*n, s.as_bytes()))
    }

    /// Load every `*.json` manifest of a directory (sorted by file name).
    pub fn load_dir(dir: &Path) -> Result<Registry, RegistryError> {
        let read_err = |source| RegistryError::Read {
            path: dir.to_path_buf(),
            source,
        };
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map_err(read_err)?
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.ends_with(".json"))
            .collect();
        names.sort_by(|a, b| cmp_utf16(a, b));
        let mut sources = Vec::with_capacity(names.len());
        for name in names {
            let bytes = std::fs::read(dir.join(&name)).map_err(|source| RegistryError::Read {
                path: dir.join(&name),
                source,
            })?;
            sources.push((name, bytes));
        }
        Registry::from_sources(sources.iter().map(|(n, b)| (n.clone(), b.as_slice())))
    }

    /// Build a registry from manifest files given as (file name, bytes), in order.
    pub fn from_sources<'a>(
        sources: impl IntoIterator<Item = (String, &'a [u8])>,
    ) -> Result<Registry, RegistryError> {
        let mut profiles: Vec<Profile> = Vec::new();
        for (name, bytes) in sources {
            let profile = parse_manifest(&name, bytes)?;
            if profiles.iter().any(|p| p.id == profile.id) {
                return Err(RegistryError::Duplicate { name });
            }
            profiles.push(profile);
        }
        Ok(Registry { profiles })
    }

    /// Every registered profile.
    pub fn profiles(&self) -> &[Profile] {
        &self.profiles
    }

    /// The profile registered under `id`.
    pub fn get(&self, id: &str) -> Option<&Profile> {
        self.profiles.iter().find(|p| p.id == id)
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn parse_manifest(name: &str, bytes: &[u8]) -> Result<Profile, RegistryError> {
    let manifest = crate::json::reader::parse_default(bytes).map_err(|e| RegistryError::Parse {
        name: name.to_owned(),
        message: e.to_string(),
    })?;
    let errors = schema::validate(SchemaKind::ReliabilityProfileManifest, &manifest);
    if !errors.is_empty() {
        return Err(RegistryError::Schema {
            name: name.to_owned(),
            details: errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; "),
        });
    }
    let status = if text(&manifest, "status") == "EXPERIMENTAL" {
        ProfileStatus::Experimental
    } else {
        ProfileStatus::Provisional
    };
    // "Present" means present and truthy, as the reference kit reads it.
    let provenance = manifest
        .get("experimentalProvenance")
        .filter(|v| !v.is_null())
        .cloned();
    if (status == ProfileStatus::Experimental) != provenance.is_some() {
        return Err(RegistryError::Provenance {
            name: name.to_owned(),
        });
    }
    let conditional_checks = manifest["conditionalChecks"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| ConditionalCheck {
                    id: text(c, "id"),
                    protocol_revisions: strings(&c["protocolRevisions"]),
                })
                .collect()
        })
        .unwrap_or_default();
    let manifest_sha256 = canonical::digest(&manifest).map_err(|e| RegistryError::Canonical {
        name: name.to_owned(),
        message: e.to_string(),
    })?;
    let profile = Profile {
        file_name: name.to_owned(),
        id: text(&manifest, "id"),
        version: text(&manifest, "version"),
        status,
        protocol_revisions: strings(&manifest["protocolRevisions"]),
        required_checks: strings(&manifest["requiredChecks"]),
        conditional_checks,
        experimental_checks: strings(&manifest["experimentalChecks"]),
        source_refs: strings(&manifest["sourceRefs"]),
        remote_policy: text(&manifest, "remotePolicy"),
        composition_boundary: text(&manifest, "compositionBoundary"),
        experimental_provenance: provenance,
        manifest_sha256,
        file_sha256: sha256_hex(bytes),
        manifest,
    };
    let registered = profile.registered_check_ids();
    if registered.windows(2).any(|w| w[0] == w[1]) {
        return Err(RegistryError::Duplicate {
            name: name.to_owned(),
        });
    }
    Ok(profile)
}

/// `ids` sorted by UTF-16 code units, as the evaluators compare check lists (repeats kept).
pub(crate) fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort_by(|a, b| cmp_utf16(a, b));
    ids
}

/// Whether a sorted list holds a repeated entry.
pub(crate) fn has_repeat(sorted_ids: &[String]) -> bool {
    sorted_ids.windows(2).any(|w| w[0] == w[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_registry_holds_the_twelve_profiles() {
        let registry = Registry::builtin().expect("built-in registry");
        assert_eq!(registry.profiles().len(), 12);
        let experimental: Vec<&str> = registry
            .profiles()
            .iter()
            .filter(|p| p.status == ProfileStatus::Experimental)
            .map(|p| p.id.as_str())
            .collect();
        assert_eq!(
            experimental,
            [
                "mcp-res/dpop/v1",
                "mcp-res/enterprise-managed-authorization/v1",
                "mcp-res/oauth-client-credentials/v1",
                "mcp-res/token-exchange/v1",
            ]
        );
        for p in registry.profiles() {
            assert_eq!(p.version, "1.0.0", "{}", p.id);
            assert_eq!(p.scored_as_released(), p.experimental_provenance.is_none());
        }
    }

    #[test]
    fn applicability_follows_the_revision() {
        let registry = Registry::builtin().unwrap();
        let revision = registry.get("mcp-res/protocol-revision/v1").unwrap();
        let old = revision.applicable_check_ids("2025-11-25");
        let new = revision.applicable_check_ids("2026-07-28");
        assert_eq!(new.len(), revision.required_checks.len() + 4);
        assert_eq!(old.len(), revision.required_checks.len());
        let cache = registry.get("mcp-res/cache-behavior/v1").unwrap();
        assert_eq!(cache.experimental_checks.len(), 1);
        let experimental = &cache.experimental_checks[0];
        assert_eq!(
            cache.check_kind(experimental),
            Some(CheckKind::Experimental)
        );
        assert!(
            !cache
                .applicable_check_ids("2026-07-28")
                .contains(experimental)
        );
        assert!(cache.registered_check_ids().contains(experimental));
        assert_eq!(cache.check_kind("no-such-check"), None);
    }

    #[test]
    fn registry_refuses_broken_manifests() {
        let (name, good) = BUILTIN[2]; // dpop: EXPERIMENTAL with provenance
        let mut m: Value = serde_json::from_str(good).unwrap();
        m.as_object_mut().unwrap().remove("experimentalProvenance");
        let bytes = serde_json::to_vec(&m).unwrap();
        assert!(matches!(
            Registry::from_sources([(name.to_string(), bytes.as_slice())]),
            Err(RegistryError::Provenance { .. })
        ));
        let twice = [
            (name.to_string(), good.as_bytes()),
            ("copy.json".to_string(), good.as_bytes()),
        ];
        assert!(matches!(
            Registry::from_sources(twice),
            Err(RegistryError::Duplicate { .. })
        ));
        let mut m: Value = serde_json::from_str(good).unwrap();
        m["conditionalChecks"] = serde_json::json!([
            {"id": "capability-explicit", "protocolRevisions": ["2026-07-28"]}
        ]);
        let bytes = serde_json::to_vec(&m).unwrap();
        assert!(matches!(
            Registry::from_sources([(name.to_string(), bytes.as_slice())]),
            Err(RegistryError::Duplicate { .. })
        ));
        m["status"] = Value::String("RELEASED".into());
        let bytes = serde_json::to_vec(&m).unwrap();
        assert!(matches!(
            Registry::from_sources([(name.to_string(), bytes.as_slice())]),
            Err(RegistryError::Schema { .. })
        ));
        assert!(matches!(
            Registry::from_sources([(name.to_string(), b"{".as_slice())]),
            Err(RegistryError::Parse { .. })
        ));
    }
}
