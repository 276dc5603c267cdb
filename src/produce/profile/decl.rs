//! Checks as data: every check a runner knows is a [`CheckDecl`], a declaration of
//! what it is about and what it stands on, run by one engine ([`super::run`] for the
//! protocol profiles, `produce::oauth::run` for `mcp-res/oauth-boundary/v1`).
//!
//! A declaration names the check, the profile it belongs to, its normative basis (each
//! requirement with its document, section, requirement level and the revisions it applies
//! to), the reason code its positive records when the property holds (`held`) and the one
//! its negative control records when the subject refuses for the property's own reason
//! (`refused`), what it needs to be exercised, how a server that does only what the
//! specification allows is judged, and its runner. The runner makes the observations;
//! the engine holds them to the declaration ([`conform`]): an observation whose expected
//! reason is not the declared one is a programming error, recorded as not observed (never
//! a verdict), and the tests read every committed evaluation against the declarations.
//!
//! `spec/profiles.md` shows the declarations as a generated table ([`spec_table`]).

use crate::model::mcp::Revision;

/// How strong the requirement a check stands on is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// No requirement: the behaviour is left open (the check records it; see `judged`).
    None,
    /// An optional behaviour (RFC 2119 MAY, or a status the HTTP RFCs define without
    /// requiring it).
    May,
    /// A recommendation (RFC 2119 SHOULD).
    Should,
    /// The MCP-RES profile's own stated requirement, not the MCP specification's.
    Profile,
    /// An absolute requirement (RFC 2119 MUST, MUST NOT, REQUIRED).
    Must,
}

impl Level {
    pub const fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::Should => "SHOULD",
            Level::May => "MAY",
            Level::Profile => "PROFILE",
            Level::None => "NONE",
        }
    }
}

/// The revisions a requirement (or a check) applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revisions {
    Both,
    Only(Revision),
}

impl Revisions {
    pub fn contains(self, rev: Revision) -> bool {
        match self {
            Revisions::Both => true,
            Revisions::Only(r) => r == rev,
        }
    }
}

/// `MCP 2025-11-25` (its requirements apply at that revision only).
pub const MCP_2025: &str = "MCP 2025-11-25";
/// `MCP 2026-07-28` (its requirements apply at that revision only).
pub const MCP_2026: &str = "MCP 2026-07-28";
pub const JSONRPC: &str = "JSON-RPC 2.0";
pub const RFC9110: &str = "RFC 9110";
pub const RFC9112: &str = "RFC 9112";
pub const RFC8259: &str = "RFC 8259";
/// The MCP-RES profile manifest itself (a check it registers, or its stated boundary).
pub const PROFILE: &str = "MCP-RES profile";

/// Which observation of a check a requirement speaks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The positive: the property holds on a normal exchange.
    Positive,
    /// The negative control: the subject refuses (or stops, or leaves alone) for the
    /// property's own reason.
    Negative,
    Both,
}

impl Side {
    fn covers(self, other: Side) -> bool {
        self == Side::Both || self == other
    }
}

/// One requirement a check stands on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Basis {
    /// The document: [`MCP_2025`], [`MCP_2026`], [`JSONRPC`], an RFC, [`PROFILE`].
    pub source: &'static str,
    /// Where in it: `Basic › Transports › stdio`, `§5`, `§15.5.6`.
    pub section: &'static str,
    pub level: Level,
    /// The observation it speaks for.
    pub side: Side,
    /// What it requires, in our words.
    pub says: &'static str,
}

impl Basis {
    pub const fn new(
        source: &'static str,
        section: &'static str,
        level: Level,
        side: Side,
        says: &'static str,
    ) -> Self {
        Basis {
            source,
            section,
            level,
            side,
            says,
        }
    }

    /// A requirement the positive stands on.
    pub const fn pos(
        source: &'static str,
        section: &'static str,
        level: Level,
        says: &'static str,
    ) -> Self {
        Basis::new(source, section, level, Side::Positive, says)
    }

    /// A requirement the negative control stands on.
    pub const fn neg(
        source: &'static str,
        section: &'static str,
        level: Level,
        says: &'static str,
    ) -> Self {
        Basis::new(source, section, level, Side::Negative, says)
    }

    /// A requirement both observations stand on.
    pub const fn both(
        source: &'static str,
        section: &'static str,
        level: Level,
        says: &'static str,
    ) -> Self {
        Basis::new(source, section, level, Side::Both, says)
    }

    /// The revisions this requirement speaks for: an MCP revision's own text only for
    /// that revision; JSON-RPC, the RFCs and the profile for both.
    pub fn revisions(&self) -> Revisions {
        match self.source {
            MCP_2025 => Revisions::Only(Revision::V2025_11_25),
            MCP_2026 => Revisions::Only(Revision::V2026_07_28),
            _ => Revisions::Both,
        }
    }
}

/// A reason code a declaration expects: the same at every revision, or one per revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    Same(&'static str),
    PerRevision {
        v2025_11_25: &'static str,
        v2026_07_28: &'static str,
    },
}

impl Code {
    pub fn at(self, rev: Revision) -> &'static str {
        match (self, rev) {
            (Code::Same(c), _) => c,
            (Code::PerRevision { v2025_11_25, .. }, Revision::V2025_11_25) => v2025_11_25,
            (Code::PerRevision { v2026_07_28, .. }, Revision::V2026_07_28) => v2026_07_28,
        }
    }

    /// Every code it can be.
    pub fn all(self) -> Vec<&'static str> {
        match self {
            Code::Same(c) => vec![c],
            Code::PerRevision {
                v2025_11_25,
                v2026_07_28,
            } => vec![v2025_11_25, v2026_07_28],
        }
    }
}

/// A tool (or other offer) the subject must list for the check to be exercised; without
/// it the check is NOT_OBSERVED.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// A tool whose calls emit `notifications/progress` (Streamable HTTP).
    StreamingTool,
    /// A tool named `echo` with one required string argument (Streamable HTTP).
    EchoTool,
    /// A tool with a required argument of a plain JSON type.
    TypedArgumentTool,
    /// A capability with a list method the subject does not declare.
    UndeclaredCapability,
    /// A child process started by the subject.
    ChildProcess,
}

impl Offer {
    pub const fn as_str(self) -> &'static str {
        match self {
            Offer::StreamingTool => "a streaming tool",
            Offer::EchoTool => "an echo tool",
            Offer::TypedArgumentTool => "a tool with a typed required argument",
            Offer::UndeclaredCapability => "an undeclared capability with a list method",
            Offer::ChildProcess => "a child process of the subject",
        }
    }
}

/// What a check needs to be exercised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needs {
    /// The revisions it applies to (the profile manifest's required or conditional
    /// checks; a test holds the two equal).
    pub revisions: Revisions,
    /// It must run alone: it watches this process's adopted orphans, which a concurrent
    /// probe's cleanup would also sweep.
    pub alone: bool,
    /// mcpres must start the subject (it stops or inspects the process).
    pub launch: bool,
    /// The run must have a synthetic credential (`--bearer-env`).
    pub credential: bool,
    /// Something the subject must offer; without it the check is NOT_OBSERVED.
    pub offer: Option<Offer>,
    /// The evidence is the behaviour of mcpres's own fixture and runner, not the
    /// subject's (an OAuth `TEST_FIXTURE` check).
    pub fixture: bool,
    /// An operational check mcpres also drives over Streamable HTTP (the others of
    /// that profile are NOT_OBSERVED in an HTTP run).
    pub http: bool,
}

impl Needs {
    pub const NOTHING: Needs = Needs {
        revisions: Revisions::Both,
        alone: false,
        launch: false,
        credential: false,
        offer: None,
        fixture: false,
        http: false,
    };

    /// The needs in words, for the spec table (empty when there are none).
    pub fn words(&self) -> String {
        let mut w = Vec::new();
        if let Revisions::Only(r) = self.revisions {
            w.push(format!("{} only", r.as_str()));
        }
        if self.alone {
            w.push("runs alone".into());
        }
        if self.launch {
            w.push("a subject mcpres starts".into());
        }
        if self.credential {
            w.push("a credential (`--bearer-env`)".into());
        }
        if let Some(o) = self.offer {
            w.push(o.as_str().into());
        }
        if self.fixture {
            w.push("mcpres's fixture (the evidence is TEST_FIXTURE)".into());
        }
        if self.http {
            w.push("also over Streamable HTTP".into());
        }
        w.join("; ")
    }
}

/// One check, as data. `R` is the runner's type (a protocol profile's
/// [`super::check::Runner`], or the OAuth runner's).
#[derive(Debug, Clone, Copy)]
pub struct CheckDecl<R: 'static = super::check::Runner> {
    pub id: &'static str,
    /// The profile id (`mcp-res/stdio-transport/v1`).
    pub profile: &'static str,
    /// What the check stands on, strongest first.
    pub basis: &'static [Basis],
    /// The positive's expected reason: the property holds.
    pub held: Code,
    /// The negative control's expected reason: refused for the property's own reason.
    pub refused: Code,
    pub needs: Needs,
    /// What a server that does only what the specification allows gets, and how the check
    /// is judged where it has no MUST to stand on.
    pub judged: &'static str,
    pub run: R,
}

impl CheckDecl {
    /// A protocol profile's declaration with no basis yet, needing nothing but the
    /// subject.
    pub const fn new(
        profile: &'static str,
        id: &'static str,
        run: super::check::Runner,
        held: &'static str,
        refused: &'static str,
    ) -> Self {
        CheckDecl::declare(profile, id, run, held, refused)
    }
}

impl<R: Copy> CheckDecl<R> {
    /// A declaration with no basis yet, needing nothing but the subject.
    pub const fn declare(
        profile: &'static str,
        id: &'static str,
        run: R,
        held: &'static str,
        refused: &'static str,
    ) -> Self {
        CheckDecl {
            id,
            profile,
            basis: &[],
            held: Code::Same(held),
            refused: Code::Same(refused),
            needs: Needs::NOTHING,
            judged: "",
            run,
        }
    }

    pub const fn basis(mut self, basis: &'static [Basis]) -> Self {
        self.basis = basis;
        self
    }

    pub const fn judged(mut self, judged: &'static str) -> Self {
        self.judged = judged;
        self
    }

    pub const fn only(mut self, rev: Revision) -> Self {
        self.needs.revisions = Revisions::Only(rev);
        self
    }

    pub const fn alone(mut self) -> Self {
        self.needs.alone = true;
        self
    }

    pub const fn launch(mut self) -> Self {
        self.needs.launch = true;
        self
    }

    /// An operational check mcpres also drives over Streamable HTTP.
    pub const fn http(mut self) -> Self {
        self.needs.http = true;
        self
    }

    pub const fn credential(mut self) -> Self {
        self.needs.credential = true;
        self
    }

    pub const fn fixture(mut self) -> Self {
        self.needs.fixture = true;
        self
    }

    pub const fn offer(mut self, offer: Offer) -> Self {
        self.needs.offer = Some(offer);
        self
    }

    pub const fn refused_per_revision(
        mut self,
        v2025_11_25: &'static str,
        v2026_07_28: &'static str,
    ) -> Self {
        self.refused = Code::PerRevision {
            v2025_11_25,
            v2026_07_28,
        };
        self
    }

    pub const fn held_per_revision(
        mut self,
        v2025_11_25: &'static str,
        v2026_07_28: &'static str,
    ) -> Self {
        self.held = Code::PerRevision {
            v2025_11_25,
            v2026_07_28,
        };
        self
    }
}

impl<R> CheckDecl<R> {
    /// The requirements that speak for `rev`.
    pub fn basis_at(&self, rev: Revision) -> impl Iterator<Item = &'static Basis> + use<R> {
        self.basis
            .iter()
            .filter(move |b| b.revisions().contains(rev))
    }

    /// The strongest requirement the observation `side` stands on at `rev`
    /// ([`Level::None`] when nothing speaks for it at that revision). A FAIL of that
    /// observation stands on this level.
    pub fn level_at(&self, rev: Revision, side: Side) -> Level {
        self.basis_at(rev)
            .filter(|b| b.side.covers(side))
            .map(|b| b.level)
            .max()
            .unwrap_or(Level::None)
    }

    /// The weaker of the positive's and the negative control's levels at `rev`: what
    /// the check as a whole can stand on.
    pub fn weakest_at(&self, rev: Revision) -> Level {
        self.level_at(rev, Side::Positive)
            .min(self.level_at(rev, Side::Negative))
    }
}

/// The two released revisions, in order.
pub const REVISIONS: [Revision; 2] = [Revision::V2025_11_25, Revision::V2026_07_28];

/// The reason a check whose observations do not match its declaration is recorded with
/// (as not observed: a runner that contradicts its declaration proves nothing).
pub const MISMATCH: &str = "the check's observations do not match its declaration";

/// Where a run's observations contradict the declaration at `rev`: the positive's expected
/// reason must be the declared `held`, the negative control's the declared `refused`. One
/// sentence per contradiction; empty when they agree (or an observation is absent).
pub fn mismatches<R>(
    decl: &CheckDecl<R>,
    rev: Revision,
    positive: Option<&str>,
    negative: Option<&str>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (role, have, want) in [
        ("positive", positive, decl.held.at(rev)),
        ("negative control", negative, decl.refused.at(rev)),
    ] {
        if let Some(have) = have
            && have != want
        {
            out.push(format!(
                "{} {role} expects {have}, the declaration {want}",
                decl.id
            ));
        }
    }
    out
}

/// The observations of a run that record a reason (or an outcome with it) their check's
/// runner is not known to give for that role (`judge::vocabulary`): the validator would
/// refuse such a label, so the engine never writes it. One sentence each.
pub fn outside_vocabulary<R>(decl: &CheckDecl<R>, run: &super::check::CheckRun) -> Vec<String> {
    use crate::judge::vocabulary;
    [
        ("positive", &run.positive),
        ("negative", &run.negative),
        ("mutant", &run.mutant),
    ]
    .into_iter()
    .filter_map(|(role, o)| {
        let o = o.as_ref()?;
        (vocabulary::admits(decl.profile, decl.id, role, o.observed, &o.observed_reason)
            == Some(false))
        .then(|| vocabulary::refusal(decl.profile, decl.id, role, o.observed, &o.observed_reason))
    })
    .collect()
}

/// The run as the engine records it: unchanged when it agrees with its declaration;
/// otherwise not observed, with every contradiction in the reason (a programming error,
/// which the tests catch; never a PASS or a FAIL).
pub fn conform<R>(
    decl: &CheckDecl<R>,
    rev: Revision,
    run: super::check::CheckRun,
) -> super::check::CheckRun {
    let mut found = mismatches(
        decl,
        rev,
        run.positive.as_ref().map(|o| o.expected_reason.as_str()),
        run.negative.as_ref().map(|o| o.expected_reason.as_str()),
    );
    found.extend(outside_vocabulary(decl, &run));
    if found.is_empty() {
        return run;
    }
    super::check::CheckRun::not_observed(decl.id, format!("{MISMATCH}: {}", found.join("; ")))
}

/// The OAuth-boundary profile, whose declarations are `produce::oauth::checks::CHECKS`.
pub const OAUTH_BOUNDARY: &str = "mcp-res/oauth-boundary/v1";

/// A Markdown cell: no line breaks, `|` escaped.
fn cell(s: &str) -> String {
    s.replace('\n', " ").replace('|', "\\|")
}

/// The positive's and the negative control's levels (`+MUST −SHOULD`), once when both
/// revisions the check applies to agree, else per revision.
fn levels<R>(d: &CheckDecl<R>) -> String {
    let revs: Vec<Revision> = REVISIONS
        .into_iter()
        .filter(|r| d.needs.revisions.contains(*r))
        .collect();
    let each: Vec<String> = revs
        .iter()
        .map(|r| {
            format!(
                "+{} −{}",
                d.level_at(*r, Side::Positive).as_str(),
                d.level_at(*r, Side::Negative).as_str()
            )
        })
        .collect();
    if each.windows(2).all(|w| w[0] == w[1]) {
        return each[0].clone();
    }
    revs.iter()
        .zip(each)
        .map(|(r, l)| format!("{}: {l}", r.as_str()))
        .collect::<Vec<_>>()
        .join("<br>")
}

/// The generated per-check table of one profile: check, what it stands on (each
/// requirement with its level), the level its FAIL stands on, the reason codes, what it
/// needs, and what a server that does only what the specification allows gets.
pub fn spec_table<R>(checks: &[CheckDecl<R>]) -> String {
    use std::fmt::Write as _;
    let mut s = String::from(
        "| check | basis | level | held / refused | needs | a server that does what the specification allows |\n\
         | --- | --- | --- | --- | --- | --- |\n",
    );
    for d in checks {
        let basis: Vec<String> = d
            .basis
            .iter()
            .map(|b| {
                let side = match b.side {
                    Side::Positive => "+",
                    Side::Negative => "−",
                    Side::Both => "±",
                };
                format!(
                    "{side} {}, {} ({}): {}",
                    b.source,
                    b.section,
                    b.level.as_str(),
                    b.says
                )
            })
            .collect();
        let codes = |c: Code| match c {
            Code::Same(c) => format!("`{c}`"),
            Code::PerRevision {
                v2025_11_25,
                v2026_07_28,
            } => format!("2025-11-25 `{v2025_11_25}`, 2026-07-28 `{v2026_07_28}`"),
        };
        let needs = d.needs.words();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} / {} | {} | {} |",
            d.id,
            cell(&basis.join("<br>")),
            levels(d),
            codes(d.held),
            codes(d.refused),
            if needs.is_empty() {
                "-".into()
            } else {
                cell(&needs)
            },
            cell(d.judged),
        );
    }
    s
}

/// One declaration as `mcpres explain CHECK-ID` prints it (the catalogue,
/// `produce::catalogue::describe`, prints every declaration of an id).
pub fn describe_one<R>(s: &mut String, d: &CheckDecl<R>) {
    use std::fmt::Write as _;
    let code = |c: Code| c.all().join(" / ");
    let needs = d.needs.words();
    let _ = writeln!(s, "{} ({})", d.id, d.profile);
    let _ = writeln!(s, "  held:    {}", code(d.held));
    let _ = writeln!(s, "  refused: {}", code(d.refused));
    let _ = writeln!(
        s,
        "  needs:   {}",
        if needs.is_empty() { "-" } else { &needs }
    );
    let _ = writeln!(s, "  level:   {}", levels(d).replace("<br>", "; "));
    let _ = writeln!(s, "  basis (+ positive, − negative control, ± both):");
    for b in d.basis {
        let side = match b.side {
            Side::Positive => "+",
            Side::Negative => "−",
            Side::Both => "±",
        };
        let _ = writeln!(
            s,
            "    {side} {}, {} ({}): {}",
            b.source,
            b.section,
            b.level.as_str(),
            b.says
        );
    }
    let _ = writeln!(s, "  judged:  {}", d.judged);
}

/// The marker lines around the generated section of `spec/profiles.md`.
pub const SPEC_BEGIN: &str = "<!-- BEGIN GENERATED from the check declarations (src/produce/profile/decl.rs); do not edit by hand: run `MCPRES_WRITE_SPEC=1 cargo test --lib produce::profile::decl` -->";
pub const SPEC_END: &str = "<!-- END GENERATED from the check declarations -->";

#[cfg(test)]
mod tests;
