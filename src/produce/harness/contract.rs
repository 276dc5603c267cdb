//! Tool contracts (spec/harness.md, "Tool contracts"): from a tool's
//! declared `inputSchema`, one valid `arguments` object and the invalid ones
//! whose single defect names the reason a server must refuse them.
//!
//! The valid input is small and deterministic: each required member (and no
//! optional one), a string `"mcpres"` fitted to its length bounds, the lower
//! bound of a number (else 1), `false`, the first value of an `enum` or the
//! `const`, an array of its minimum length, a date, time, e-mail address,
//! URI, UUID or address for the formats that name them. A trial after the
//! first may ask for fresh values ([`Values::Fresh`]): free strings (no
//! format, enum or pattern that fixes them) then vary within the same
//! bounds; numbers keep their small value. The invalid inputs change exactly one
//! thing of the valid one:
//!
//! - a required member removed (`missing-required`);
//! - a member given a value of a JSON type its schema does not allow
//!   (`wrong-type`), for every member that declares `type`;
//! - an unknown member added where the schema says
//!   `additionalProperties: false` (`unknown-member`).
//!
//! Every generated input is checked against the declared schema by the
//! `jsonschema` crate (offline, formats validated): the valid one must be
//! valid, each invalid one invalid. One that is not (an `anyOf` that also
//! admits the wrong type, a `pattern` no candidate matches) is left out and
//! said so, never sent as what it is not. A schema the generator cannot
//! satisfy at all (a `$ref` outside the schema, `not`, a `pattern` no
//! candidate meets) makes the tool's contract unconstructible, with the
//! reason.
//!
//! Why not a random-instance crate: the issue asks for the smallest valid
//! value per type and for invalid inputs that differ from it by one member,
//! which random generation does not give; the `jsonschema` crate (already
//! the validator's) is the judge of every input instead.

use serde_json::{Map, Value, json};

/// The name of the unknown member an `unknown-member` input adds (a fresh
/// suffix follows when values are fresh).
pub const UNKNOWN_MEMBER: &str = "mcpres_unknown_member";

/// How deep the generator follows nested schemas.
const DEPTH: usize = 16;

/// Which defect an invalid input carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Violation {
    /// A required member removed.
    MissingRequired,
    /// A member of a JSON type its schema does not allow.
    WrongType,
    /// A member the schema does not declare, where it admits none.
    UnknownMember,
}

impl Violation {
    /// The name used in operation ids and artifacts.
    pub fn id(self) -> &'static str {
        match self {
            Violation::MissingRequired => "missing-required",
            Violation::WrongType => "wrong-type",
            Violation::UnknownMember => "unknown-member",
        }
    }
}

/// One invalid input: the valid one with one defect.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    pub violation: Violation,
    /// The member the defect is in.
    pub member: String,
    pub arguments: Value,
}

/// A tool's contract as generated from its schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Contract {
    /// The valid `arguments`.
    pub valid: Value,
    /// The invalid ones, in the order: missing required members, wrong
    /// types, the unknown member.
    pub invalid: Vec<Invalid>,
    /// The invalid inputs that could not be made, each with why (for
    /// example a member whose schema admits every JSON type).
    pub left_out: Vec<String>,
    /// The members whose values look secret (their name, `format:
    /// password` or `writeOnly`): their generated values are redacted in
    /// the evidence.
    pub secret_like: Vec<String>,
}

/// Why no contract could be made for a schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no valid input can be generated from the tool's inputSchema: {0}")]
pub struct Unconstructible(pub String);

/// The values the valid input is made of.
pub enum Values<'a> {
    /// The small deterministic ones.
    Small,
    /// Fresh ones within the same bounds, drawn from the source.
    Fresh(&'a mut dyn FnMut() -> u64),
}

/// The compiled schema (offline: a `$ref` outside it does not compile).
fn compile(schema: &Value) -> Result<jsonschema::Validator, Unconstructible> {
    if schema.get("type").is_some_and(|t| t != "object") {
        return Err(Unconstructible(
            "its type is not \"object\" (MCP asks for an object schema)".into(),
        ));
    }
    jsonschema::options()
        .offline()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| Unconstructible(format!("the schema does not compile: {e}")))
}

/// The contract of a tool whose `inputSchema` is `schema`.
pub fn contract(schema: &Value, mut values: Values<'_>) -> Result<Contract, Unconstructible> {
    let validator = compile(schema)?;
    let mut made = Gen {
        root: schema,
        values: &mut values,
    };
    let valid = made.value(schema, 0).map_err(Unconstructible)?;
    if !valid.is_object() {
        return Err(Unconstructible("it does not describe an object".into()));
    }
    if !validator.is_valid(&valid) {
        return Err(Unconstructible(format!(
            "the generated input {valid} is not valid against it"
        )));
    }
    let fresh = match &mut made.values {
        Values::Fresh(next) => Some(format!("{:08x}", next() as u32)),
        Values::Small => None,
    };
    Ok(defects(schema, &validator, valid, fresh))
}

/// The contract of a tool whose valid input the operator gave (`--tool
/// NAME --tool-args JSON`): the invalid inputs are made from `given`, which
/// must itself be valid against the schema.
pub fn contract_from(schema: &Value, given: &Value) -> Result<Contract, Unconstructible> {
    let validator = compile(schema)?;
    if !given.is_object() || !validator.is_valid(given) {
        return Err(Unconstructible(format!(
            "the arguments given with --tool-args, {given}, are not valid against it"
        )));
    }
    Ok(defects(schema, &validator, given.clone(), None))
}

/// The invalid inputs made from `valid` (see the module's documentation).
fn defects(
    schema: &Value,
    validator: &jsonschema::Validator,
    valid: Value,
    fresh: Option<String>,
) -> Contract {
    let props = object_of(schema, "properties");
    let required = required_of(schema);
    let mut candidates: Vec<(Violation, String, Value)> = Vec::new();
    let mut left_out = Vec::new();
    for name in &required {
        let mut args = valid.clone();
        args.as_object_mut().expect("an object").remove(name);
        candidates.push((Violation::MissingRequired, name.clone(), args));
    }
    for (name, prop) in props.iter() {
        let Some(types) = declared_types(prop) else {
            continue;
        };
        let Some(wrong) = wrong_value(&types) else {
            left_out.push(format!("wrong-type of `{name}`: it admits every JSON type"));
            continue;
        };
        let mut args = valid.clone();
        args.as_object_mut()
            .expect("an object")
            .insert(name.clone(), wrong);
        candidates.push((Violation::WrongType, name.clone(), args));
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false))
        || schema.get("unevaluatedProperties") == Some(&Value::Bool(false))
    {
        let name = match &fresh {
            Some(s) => format!("{UNKNOWN_MEMBER}_{s}"),
            None => UNKNOWN_MEMBER.to_string(),
        };
        if props.contains_key(&name) {
            left_out.push(format!("unknown-member: `{name}` is declared"));
        } else {
            let mut args = valid.clone();
            args.as_object_mut()
                .expect("an object")
                .insert(name.clone(), json!("mcpres"));
            candidates.push((Violation::UnknownMember, name, args));
        }
    }
    let mut invalid = Vec::new();
    for (violation, member, arguments) in candidates {
        if validator.is_valid(&arguments) {
            left_out.push(format!(
                "{} of `{member}`: {arguments} is valid against the schema",
                violation.id()
            ));
        } else {
            invalid.push(Invalid {
                violation,
                member,
                arguments,
            });
        }
    }
    let secret_like = props
        .iter()
        .filter(|(name, p)| {
            secret_name(name) || p["format"] == "password" || p["writeOnly"] == true
        })
        .map(|(name, _)| name.clone())
        .collect();
    Contract {
        valid,
        invalid,
        left_out,
        secret_like,
    }
}

/// The violation a scenario's tool-input template control stands for
/// (`tool-input-missing-required`, `tool-input-wrong-type`,
/// `tool-input-unknown-member`).
pub fn template_violation(fault: &str) -> Option<Violation> {
    match fault {
        "tool-input-missing-required" => Some(Violation::MissingRequired),
        "tool-input-wrong-type" => Some(Violation::WrongType),
        "tool-input-unknown-member" => Some(Violation::UnknownMember),
        _ => None,
    }
}

/// Which listed tools a tool-contracts run may call, in list order, and why
/// each other one is left alone. Without names: those whose annotations
/// say `readOnlyHint: true` and not `destructiveHint: true`. With names (the
/// operator's `--tool`s): those tools only, whatever their annotations.
pub fn safe_tools<'t>(
    tools: &'t [Value],
    named: &[&str],
) -> (Vec<&'t Value>, Vec<(String, String)>) {
    let mut chosen = Vec::new();
    let mut left = Vec::new();
    for t in tools {
        let name = t["name"].as_str().unwrap_or_default().to_string();
        let a = &t["annotations"];
        let why = if !named.is_empty() {
            (!named.contains(&name.as_str())).then(|| {
                format!(
                    "not among the tools named with --tool ({})",
                    named.join(", ")
                )
            })
        } else if a["destructiveHint"] == true {
            Some("annotated destructiveHint: true (name it with --tool to call it)".into())
        } else if a["readOnlyHint"] != true {
            Some(
                "not annotated readOnlyHint: true: its effects are unknown (name it with --tool to call it)"
                    .into(),
            )
        } else {
            None
        };
        match why {
            None if !name.is_empty() => chosen.push(t),
            None => left.push((name, "it has no name".into())),
            Some(w) => left.push((name, w)),
        }
    }
    (chosen, left)
}

/// A name for an operation or directory made of `text`: lower-case ASCII
/// letters, digits and `-`, starting with a letter, at most `max` bytes.
pub fn slug(text: &str, max: usize) -> String {
    let mut out = String::new();
    for c in text.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let mut out = out.trim_end_matches('-').to_string();
    if !out.starts_with(|c: char| c.is_ascii_lowercase()) {
        out.insert_str(0, "t-");
    }
    out.truncate(max);
    out.trim_end_matches('-').to_string()
}

/// The scenario of one tool: `base` (a tool-contracts scenario) with the
/// tool named for the clean control's call (its valid input) and each
/// tool-input template control replaced by one control per invalid input of
/// the contract for that violation. The scenario document records the
/// expanded controls and the contract (tool, the schema's digest, the
/// inputs, what was left out), so the scenario fingerprint binds them.
pub fn for_tool(
    base: &super::vocab::Scenario,
    tool: &Value,
    contract: &Contract,
) -> super::vocab::Scenario {
    use super::vocab::{Injector, NamedTool, ToolInput};
    let name = tool["name"].as_str().unwrap_or_default().to_string();
    let mut scenario = base.clone();
    scenario.named_tool = Some(NamedTool {
        name: name.clone(),
        arguments: contract.valid.clone(),
    });
    let mut negatives = Vec::new();
    let mut entries = Vec::new();
    let templates: Vec<&Value> = base.document["negativeControls"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let mut used = std::collections::BTreeSet::new();
    for control in &base.negatives {
        let template = templates
            .iter()
            .find(|t| t["name"] == control.name.as_str())
            .cloned()
            .cloned()
            .unwrap_or(Value::Null);
        let Some(violation) = (control.injector == Injector::RequestInvalidInput)
            .then(|| template_violation(&control.fault))
            .flatten()
        else {
            used.insert(control.name.clone());
            negatives.push(control.clone());
            entries.push(template);
            continue;
        };
        for (k, invalid) in contract
            .invalid
            .iter()
            .filter(|i| i.violation == violation)
            .enumerate()
        {
            let mut cname = format!("{}-{}", control.name, slug(&invalid.member, 40));
            if !used.insert(cname.clone()) {
                cname = format!("{}-{}-{k}", control.name, slug(&invalid.member, 36));
                used.insert(cname.clone());
            }
            let mut c = control.clone();
            c.name = cname.clone();
            // The evidence keeps a property in at most 128 characters.
            c.property = format!(
                "{} (tool {name}, member {})",
                control.property, invalid.member
            )
            .chars()
            .take(128)
            .collect();
            c.input = Some(ToolInput {
                tool: name.clone(),
                violation: violation.id(),
                member: invalid.member.clone(),
                valid: contract.valid.clone(),
                invalid: invalid.arguments.clone(),
                schema: tool.get("inputSchema").cloned().unwrap_or(Value::Null),
            });
            let mut entry = template.clone();
            if entry.is_object() {
                entry["name"] = json!(cname);
                entry["property"] = json!(c.property);
            }
            negatives.push(c);
            entries.push(entry);
        }
    }
    scenario.negatives = negatives;
    let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
    scenario.document["negativeControls"] = Value::Array(entries);
    scenario.document["toolContract"] = json!({
        "tool": name,
        "annotations": tool.get("annotations").cloned().unwrap_or(json!({})),
        "inputSchemaSha256": crate::json::canonical::digest(&schema).unwrap_or_default(),
        "valid": contract.valid,
        "invalid": contract.invalid.iter().map(|i| json!({
            "violation": i.violation.id(), "member": i.member, "arguments": i.arguments,
        })).collect::<Vec<_>>(),
        "leftOut": contract.left_out,
        "secretLike": contract.secret_like,
    });
    scenario
}

/// Fresh inputs for a trial after the first: the valid input and the
/// invalid one with the same defect (the same violation of the same member;
/// for an unknown member, a fresh name), drawn from the schema with a
/// generator seeded by `seed` (the trial's seed and the control), so a
/// trial is reproducible from the bundle's deterministic seed. `None` when
/// the schema gives no such pair with fresh values (the recorded inputs are
/// then sent again).
pub fn fresh_inputs(input: &super::vocab::ToolInput, seed: u64) -> Option<(Value, Value)> {
    let mut state = seed ^ 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        // SplitMix64.
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let c = contract(&input.schema, Values::Fresh(&mut next)).ok()?;
    let invalid = c.invalid.into_iter().find(|i| {
        i.violation.id() == input.violation
            && (i.member == input.member || i.violation == Violation::UnknownMember)
    })?;
    Some((c.valid, invalid.arguments))
}

/// Every string in `value` (member names and string values, at any depth):
/// what a trial with fresh values must replace before its answers are
/// compared with another trial's.
pub fn volatile_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|v| volatile_strings(v, out)),
        Value::Object(o) => {
            for (k, v) in o {
                out.push(k.clone());
                volatile_strings(v, out);
            }
        }
        _ => {}
    }
}

/// Does a member's name say it holds a secret?
pub fn secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace(['-', '_'], "");
    [
        "password",
        "passwd",
        "secret",
        "token",
        "apikey",
        "credential",
        "privatekey",
    ]
    .iter()
    .any(|s| n.contains(s))
}

fn object_of(schema: &Value, key: &str) -> Map<String, Value> {
    schema
        .get(key)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn required_of(schema: &Value) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect()
}

/// The JSON types a member's schema declares with `type`, if it does.
fn declared_types(schema: &Value) -> Option<Vec<String>> {
    match schema.get("type")? {
        Value::String(t) => Some(vec![t.clone()]),
        Value::Array(ts) => Some(
            ts.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect(),
        ),
        _ => None,
    }
}

/// A value of a JSON type none of `types` admits: an object first (the
/// hardest to coerce), then a string, an array, a boolean. `null` is never
/// used (servers may read it as the member absent).
fn wrong_value(types: &[String]) -> Option<Value> {
    let admits = |t: &str| {
        types.iter().any(|d| {
            d == t || (t == "integer" && d == "number") || (t == "number" && d == "integer")
        })
    };
    [
        ("object", json!({"mcpres": "wrong-type"})),
        ("string", json!("mcpres-wrong-type")),
        ("array", json!(["mcpres-wrong-type"])),
        ("boolean", json!(true)),
    ]
    .into_iter()
    .find(|(t, _)| !admits(t))
    .map(|(_, v)| v)
}

struct Gen<'r, 'v, 'a> {
    root: &'r Value,
    values: &'v mut Values<'a>,
}

impl Gen<'_, '_, '_> {
    fn draw(&mut self) -> Option<u64> {
        match self.values {
            Values::Fresh(next) => Some(next()),
            Values::Small => None,
        }
    }

    fn value(&mut self, schema: &Value, depth: usize) -> Result<Value, String> {
        if depth > DEPTH {
            return Err(format!("it nests deeper than {DEPTH} levels"));
        }
        let s = match schema {
            Value::Bool(true) => return Ok(json!("mcpres")),
            Value::Bool(false) => return Err("a member's schema is `false`".into()),
            Value::Object(s) => s,
            _ => return Err(format!("a subschema is not a schema: {schema}")),
        };
        if let Some(c) = s.get("const") {
            return Ok(c.clone());
        }
        if let Some(first) = s
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            return Ok(first.clone());
        }
        if let Some(r) = s.get("$ref").and_then(Value::as_str) {
            let target = r
                .strip_prefix('#')
                .and_then(|p| self.root.pointer(p))
                .ok_or_else(|| format!("`$ref` {r} does not point into the schema"))?;
            return self.value(target, depth + 1);
        }
        if s.contains_key("not") {
            return Err("`not` is not generated".into());
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = s.get(key).and_then(Value::as_array) {
                let mut why = String::new();
                for b in branches {
                    match self.value(b, depth + 1) {
                        Ok(v) => return Ok(v),
                        Err(e) => why = e,
                    }
                }
                return Err(format!("no branch of `{key}` could be generated: {why}"));
            }
        }
        if let Some(all) = s.get("allOf").and_then(Value::as_array) {
            if let [one] = all.as_slice() {
                return self.value(one, depth + 1);
            }
            return Err("`allOf` of several schemas is not generated".into());
        }
        let types = declared_types(schema).unwrap_or_default();
        let kind = types
            .iter()
            .find(|t| t.as_str() != "null")
            .map(String::as_str)
            .or_else(|| types.first().map(String::as_str))
            .unwrap_or(
                if s.contains_key("properties") || s.contains_key("required") {
                    "object"
                } else if s.contains_key("items") {
                    "array"
                } else {
                    "string"
                },
            );
        match kind {
            "null" => Ok(Value::Null),
            "boolean" => Ok(Value::Bool(false)),
            "integer" => self.integer(s),
            "number" => self.number(s),
            "string" => self.string(s),
            "array" => self.array(s, depth),
            "object" => self.object(s, depth),
            other => Err(format!("unknown type {other:?}")),
        }
    }

    fn integer(&mut self, s: &Map<String, Value>) -> Result<Value, String> {
        let f = |k: &str| s.get(k).and_then(Value::as_f64);
        let lo = match (f("minimum"), f("exclusiveMinimum")) {
            (Some(m), _) => m.ceil(),
            (None, Some(e)) => e.floor() + 1.0,
            (None, None) => 1.0,
        };
        let hi = match (f("maximum"), f("exclusiveMaximum")) {
            (Some(m), _) => m.floor(),
            (None, Some(e)) => e.ceil() - 1.0,
            (None, None) => f64::MAX,
        };
        // Numbers stay at their small value in every trial: only strings
        // are fresh, so that an answer quoting the input can be compared
        // across trials with the strings replaced (`volatile_strings`).
        let mut n = lo;
        if let Some(m) = f("multipleOf").filter(|m| *m > 0.0) {
            n = (n / m).ceil() * m;
        }
        if n > hi || !n.is_finite() || n.abs() > 9_007_199_254_740_991.0 {
            return Err("no integer within its bounds".into());
        }
        Ok(json!(n as i64))
    }

    fn number(&mut self, s: &Map<String, Value>) -> Result<Value, String> {
        let f = |k: &str| s.get(k).and_then(Value::as_f64);
        if s.contains_key("multipleOf") {
            return self.integer(s);
        }
        // The bounds, and whether each is itself admitted.
        let (lo, lo_in) = match (f("minimum"), f("exclusiveMinimum")) {
            (Some(m), _) => (Some(m), true),
            (None, Some(e)) => (Some(e), false),
            (None, None) => (None, true),
        };
        let (hi, hi_in) = match (f("maximum"), f("exclusiveMaximum")) {
            (Some(m), _) => (Some(m), true),
            (None, Some(e)) => (Some(e), false),
            (None, None) => (None, true),
        };
        let within = |n: f64| {
            lo.is_none_or(|l| if lo_in { n >= l } else { n > l })
                && hi.is_none_or(|h| if hi_in { n <= h } else { n < h })
        };
        let n = match (lo, hi) {
            (Some(l), _) if lo_in => l,
            (Some(l), Some(h)) => l + (h - l) / 2.0,
            (Some(l), None) => l + 1.0,
            (None, Some(h)) if h >= 1.0 => 1.0,
            (None, Some(h)) => h - 1.0,
            (None, None) => 1.0,
        };
        if !within(n) || !n.is_finite() {
            return Err("no number within its bounds".into());
        }
        if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_991.0 {
            return Ok(json!(n as i64));
        }
        serde_json::Number::from_f64(n)
            .map(Value::Number)
            .ok_or_else(|| "no number within its bounds".into())
    }

    fn string(&mut self, s: &Map<String, Value>) -> Result<Value, String> {
        let format = s.get("format").and_then(Value::as_str).unwrap_or("");
        let by_format = match format {
            "date-time" => Some("2000-01-01T00:00:00Z"),
            "date" => Some("2000-01-01"),
            "time" => Some("00:00:00Z"),
            "duration" => Some("P1D"),
            "email" | "idn-email" => Some("mcpres@example.com"),
            "hostname" | "idn-hostname" => Some("localhost"),
            "ipv4" => Some("127.0.0.1"),
            "ipv6" => Some("::1"),
            "uri" | "iri" => Some("urn:mcpres:probe"),
            "uri-reference" | "iri-reference" | "uri-template" => Some("mcpres"),
            "uuid" => Some("00000000-0000-4000-8000-000000000000"),
            "json-pointer" => Some("/mcpres"),
            "regex" => Some("mcpres"),
            _ => None,
        };
        if let Some(v) = by_format {
            return Ok(json!(v));
        }
        let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = s
            .get("maxLength")
            .and_then(Value::as_u64)
            .map_or(usize::MAX, |m| m as usize);
        let base = match self.draw() {
            Some(r) => format!("mcpres-{:08x}", r as u32),
            None => "mcpres".to_string(),
        };
        let fit = |text: &str| -> Option<String> {
            let mut t: String = text.chars().take(max).collect();
            while t.chars().count() < min {
                t.push('a');
            }
            (t.chars().count() <= max).then_some(t)
        };
        let Some(pattern) = s.get("pattern").and_then(Value::as_str) else {
            return fit(&base)
                .map(Value::String)
                .ok_or_else(|| "no string within its length bounds".into());
        };
        let re = regex::Regex::new(pattern)
            .map_err(|e| format!("its pattern {pattern:?} is not read: {e}"))?;
        [
            base.as_str(),
            "mcpres",
            "a",
            "A",
            "0",
            "1",
            "a1",
            "mcpres1",
            "MCPRES",
            "x-1",
        ]
        .iter()
        .filter_map(|c| fit(c))
        .find(|c| re.is_match(c))
        .map(Value::String)
        .ok_or_else(|| format!("no generated string matches its pattern {pattern:?}"))
    }

    fn array(&mut self, s: &Map<String, Value>, depth: usize) -> Result<Value, String> {
        let min = s.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
        let mut out = Vec::new();
        let prefix = s.get("prefixItems").and_then(Value::as_array);
        for i in 0..min {
            let item = prefix
                .and_then(|p| p.get(i))
                .or_else(|| s.get("items"))
                .cloned()
                .unwrap_or(Value::Bool(true));
            out.push(self.value(&item, depth + 1)?);
        }
        if s.get("uniqueItems") == Some(&Value::Bool(true))
            && out.iter().enumerate().any(|(i, v)| out[..i].contains(v))
        {
            return Err("no distinct items could be generated".into());
        }
        Ok(Value::Array(out))
    }

    fn object(&mut self, s: &Map<String, Value>, depth: usize) -> Result<Value, String> {
        let schema = Value::Object(s.clone());
        let props = object_of(&schema, "properties");
        let mut out = Map::new();
        for name in required_of(&schema) {
            let member = props
                .get(&name)
                .cloned()
                .or_else(|| {
                    s.get("additionalProperties")
                        .filter(|a| a.is_object())
                        .cloned()
                })
                .unwrap_or(Value::Bool(true));
            out.insert(name.clone(), self.value(&member, depth + 1)?);
        }
        let min = s.get("minProperties").and_then(Value::as_u64).unwrap_or(0) as usize;
        for (name, member) in props.iter() {
            if out.len() >= min {
                break;
            }
            if !out.contains_key(name) {
                out.insert(name.clone(), self.value(member, depth + 1)?);
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn small(schema: &Value) -> Contract {
        contract(schema, Values::Small).expect("constructible")
    }

    #[test]
    fn the_valid_input_holds_each_required_member_and_no_optional_one() {
        let schema = json!({
            "type": "object",
            "properties": {
                "message": {"type": "string", "minLength": 10},
                "count": {"type": "integer", "minimum": 3, "maximum": 9},
                "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 0.5},
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "when": {"type": "string", "format": "date-time"},
                "flag": {"type": ["boolean", "string"]},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                "optional": {"type": "string"}
            },
            "required": ["message", "count", "ratio", "mode", "when", "flag", "tags"],
            "additionalProperties": false
        });
        let c = small(&schema);
        assert_eq!(c.valid["message"], "mcpresaaaa");
        assert_eq!(c.valid["count"], 3);
        assert_eq!(c.valid["mode"], "fast");
        assert_eq!(c.valid["when"], "2000-01-01T00:00:00Z");
        assert_eq!(c.valid["flag"], false);
        assert_eq!(c.valid["tags"], json!(["mcpres", "mcpres"]));
        assert!(c.valid.get("optional").is_none());
        let ratio = c.valid["ratio"].as_f64().unwrap();
        assert!(ratio > 0.0 && ratio <= 0.5, "{ratio}");
        // One missing-required per required member, one wrong type per
        // typed member, and the unknown member.
        let count = |v: Violation| c.invalid.iter().filter(|i| i.violation == v).count();
        assert_eq!(count(Violation::MissingRequired), 7);
        assert_eq!(count(Violation::WrongType), 8);
        assert_eq!(count(Violation::UnknownMember), 1);
        let flag = c
            .invalid
            .iter()
            .find(|i| i.violation == Violation::WrongType && i.member == "flag")
            .unwrap();
        assert_eq!(flag.arguments["flag"], json!({"mcpres": "wrong-type"}));
        assert!(c.left_out.is_empty(), "{:?}", c.left_out);
    }

    #[test]
    fn an_invalid_input_the_schema_admits_is_left_out_and_said() {
        // `any` accepts every JSON type; `either` admits the object through
        // its anyOf, so its wrong type is no wrong type.
        let schema = json!({
            "type": "object",
            "properties": {
                "any": {},
                "either": {"type": "string", "anyOf": [{"type": "string"}]},
                "open": {"type": ["object", "string", "array", "boolean"]}
            }
        });
        let c = small(&schema);
        assert_eq!(c.valid, json!({}));
        assert!(c.invalid.iter().any(|i| i.member == "either"));
        assert!(
            c.left_out
                .iter()
                .any(|l| l.contains("`open`") && l.contains("every JSON type")),
            "{:?}",
            c.left_out
        );
        // No unknown member where additional members are allowed.
        assert!(
            c.invalid
                .iter()
                .all(|i| i.violation != Violation::UnknownMember)
        );
    }

    #[test]
    fn schemas_nothing_can_satisfy_are_said_unconstructible() {
        for (schema, why) in [
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "maxLength": 2, "minLength": 3}}, "required": ["a"]}),
                "length",
            ),
            (
                json!({"type": "object", "properties": {"a": {"not": {}}}, "required": ["a"]}),
                "`not`",
            ),
            (
                json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s"}}, "required": ["a"]}),
                "does not compile",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^[0-9]{12}$"}}, "required": ["a"]}),
                "pattern",
            ),
            (json!({"type": "array"}), "object"),
        ] {
            let e = contract(&schema, Values::Small).expect_err(why);
            assert!(e.0.contains(why), "{e} / {why}");
        }
    }

    #[test]
    fn local_references_and_branches_are_followed() {
        let schema = json!({
            "type": "object",
            "$defs": {"id": {"type": "string", "pattern": "^[a-z]+$"}},
            "properties": {
                "id": {"$ref": "#/$defs/id"},
                "n": {"oneOf": [{"type": "integer", "minimum": 5}, {"type": "string"}]}
            },
            "required": ["id", "n"]
        });
        let c = small(&schema);
        assert_eq!(c.valid, json!({"id": "mcpres", "n": 5}));
    }

    #[test]
    fn secret_like_members_are_named() {
        let schema = json!({
            "type": "object",
            "properties": {
                "api_key": {"type": "string"},
                "pin": {"type": "string", "format": "password"},
                "note": {"type": "string", "writeOnly": true},
                "query": {"type": "string"}
            }
        });
        let mut s = small(&schema).secret_like;
        s.sort();
        assert_eq!(s, ["api_key", "note", "pin"]);
    }

    #[test]
    fn only_read_only_tools_are_chosen_unless_one_is_named() {
        let tools = vec![
            json!({"name": "read", "annotations": {"readOnlyHint": true}}),
            json!({"name": "both", "annotations": {"readOnlyHint": true, "destructiveHint": true}}),
            json!({"name": "plain"}),
            json!({"name": "wipe", "annotations": {"destructiveHint": true}}),
        ];
        let (chosen, left) = safe_tools(&tools, &[]);
        let names: Vec<&str> = chosen.iter().filter_map(|t| t["name"].as_str()).collect();
        assert_eq!(names, ["read"]);
        assert_eq!(left.len(), 3);
        assert!(
            left.iter()
                .any(|(n, why)| n == "plain" && why.contains("readOnlyHint"))
        );
        let (chosen, left) = safe_tools(&tools, &["wipe"]);
        assert_eq!(chosen.len(), 1);
        assert_eq!(chosen[0]["name"], "wipe");
        assert_eq!(left.len(), 3);
        let (chosen, left) = safe_tools(&tools, &["wipe", "plain"]);
        let names: Vec<&str> = chosen.iter().filter_map(|t| t["name"].as_str()).collect();
        assert_eq!(names, ["plain", "wipe"]);
        assert!(left.iter().all(|(_, why)| why.contains("wipe, plain")));
    }

    #[test]
    fn names_become_operation_names() {
        assert_eq!(slug("get-sum", 60), "get-sum");
        assert_eq!(slug("Read_Record!!", 60), "read-record");
        assert_eq!(slug("9lives", 60), "t-9lives");
        assert_eq!(slug("___", 60), "t");
        assert!(slug(&"a".repeat(100), 40).len() <= 40);
    }

    #[test]
    fn a_tool_scenario_expands_each_template_per_member_and_records_the_contract() {
        let base = crate::produce::harness::scenario_file::builtin("tool-contracts").unwrap();
        let tool = json!({
            "name": "lookup",
            "annotations": {"readOnlyHint": true},
            "inputSchema": {
                "type": "object",
                "properties": {"key": {"type": "string"}, "limit": {"type": "integer"}},
                "required": ["key"],
                "additionalProperties": false
            }
        });
        let c = small(&tool["inputSchema"]);
        let s = for_tool(&base, &tool, &c);
        let names: Vec<&str> = s.negatives.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "missing-key",
                "wrong-type-key",
                "wrong-type-limit",
                "unknown-member-mcpres-unknown-member",
                "unknown-tool",
                "wire-schema"
            ]
        );
        let input = s.negatives[0].input.as_ref().unwrap();
        assert_eq!(
            (input.tool.as_str(), input.member.as_str()),
            ("lookup", "key")
        );
        assert_eq!(input.invalid, json!({}));
        assert_eq!(
            s.named_tool.as_ref().unwrap().arguments,
            json!({"key": "mcpres"})
        );
        assert_eq!(s.document["negativeControls"].as_array().unwrap().len(), 6);
        assert_eq!(s.document["toolContract"]["tool"], "lookup");
        assert_eq!(
            s.document["toolContract"]["invalid"]
                .as_array()
                .unwrap()
                .len(),
            4
        );
        assert!(
            s.negatives
                .iter()
                .all(|n| n.property.chars().count() <= 128)
        );
    }

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            (0u64..5, 5u64..20)
                .prop_map(|(a, b)| json!({"type": "string", "minLength": a, "maxLength": b})),
            (-50i64..50, 0i64..100).prop_map(
                |(lo, span)| json!({"type": "integer", "minimum": lo, "maximum": lo + span})
            ),
            (0i64..10).prop_map(|lo| json!({"type": "number", "exclusiveMinimum": lo})),
            Just(json!({"type": "boolean"})),
            Just(json!({"type": "string", "enum": ["a", "b"]})),
            Just(json!({"type": "string", "format": "email"})),
            Just(json!({"type": "array", "items": {"type": "integer"}, "minItems": 1})),
            Just(json!({"type": ["integer", "null"]})),
        ]
    }

    proptest! {
        /// For any object schema of typed members, the valid input is valid
        /// and every invalid one is invalid, small or fresh, as the
        /// `jsonschema` crate reads them.
        #[test]
        fn every_generated_input_is_what_it_says(
            members in proptest::collection::btree_map("[a-z]{1,6}", leaf(), 0..6),
            required_mask in any::<u8>(),
            closed in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let names: Vec<&String> = members.keys().collect();
            let required: Vec<&String> = names.iter().enumerate()
                .filter(|(i, _)| required_mask & (1 << i) != 0).map(|(_, n)| *n).collect();
            let schema = json!({
                "type": "object", "properties": members, "required": required,
                "additionalProperties": !closed,
            });
            let validator = jsonschema::validator_for(&schema).unwrap();
            let mut state = seed;
            let mut next = move || { state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); state >> 11 };
            for c in [contract(&schema, Values::Small).unwrap(), contract(&schema, Values::Fresh(&mut next)).unwrap()] {
                prop_assert!(validator.is_valid(&c.valid), "{}", c.valid);
                for i in &c.invalid {
                    prop_assert!(!validator.is_valid(&i.arguments), "{:?}", i);
                }
                prop_assert_eq!(
                    c.invalid.iter().filter(|i| i.violation == Violation::MissingRequired).count(),
                    required.len()
                );
                prop_assert_eq!(
                    c.invalid.iter().any(|i| i.violation == Violation::UnknownMember),
                    closed
                );
            }
        }
    }
}
