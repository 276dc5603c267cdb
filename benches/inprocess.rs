//! In-process benchmarks (criterion): parse + validate, canonicalization and
//! DSSE sign/verify, without process start-up. Opt-in, so normal builds never
//! compile criterion:
//!
//!   cargo bench --no-default-features --features bench --bench inprocess
//!
//! Whole-process figures (start-up included) come from `bench/validate.sh`.

use std::hint::black_box;
use std::path::Path;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mcpres::attest::dsse::{decode_base64, pae};
use mcpres::attest::keys::{KeyPair, PublicKey};
use mcpres::json::{canonical, parse_default};
use mcpres::produce::builder::{synthetic_bundle, to_file_bytes};
use mcpres::produce::sign::{SignOptions, attest, create_statement, sign_statement};
use mcpres::validate::{Options, validate_document};
use serde_json::Value;

fn reference_vector() -> Vec<u8> {
    // A copy of the reference kit's valid/reason-bound-negative.json.
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/hostile/valid-bundle.json"))
        .expect("testdata/hostile/valid-bundle.json")
}

fn parse_and_validate(bytes: &[u8]) -> bool {
    let doc = parse_default(bytes).expect("readable");
    validate_document(&doc, &Options::default()).valid
}

fn bench_validate(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse+validate");
    let reference = reference_vector();
    assert!(parse_and_validate(&reference));
    group.throughput(Throughput::Bytes(reference.len() as u64));
    group.bench_function("reference-vector", |b| {
        b.iter(|| parse_and_validate(black_box(&reference)))
    });
    for n in [16usize, 64, 254] {
        let bytes = to_file_bytes(&synthetic_bundle(n).expect("synthetic")).expect("bytes");
        assert!(parse_and_validate(&bytes));
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(BenchmarkId::new("synthetic", n), &bytes, |b, bytes| {
            b.iter(|| parse_and_validate(black_box(bytes)))
        });
    }
    group.finish();
}

fn bench_canonical(c: &mut Criterion) {
    let mut group = c.benchmark_group("canonicalize");
    for n in [16usize, 254] {
        let doc = synthetic_bundle(n).expect("synthetic");
        let len = canonical::to_vec(&doc).expect("canonical").len();
        group.throughput(Throughput::Bytes(len as u64));
        group.bench_with_input(BenchmarkId::new("synthetic", n), &doc, |b, doc| {
            b.iter(|| canonical::to_vec(black_box(doc)).expect("canonical"))
        });
    }
    let doc = synthetic_bundle(254).expect("synthetic");
    let bytes = to_file_bytes(&doc).expect("bytes");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("parse-only/254", |b| {
        b.iter(|| parse_default(black_box(&bytes)).expect("readable"))
    });
    group.finish();
}

fn bench_dsse(c: &mut Criterion) {
    let key = KeyPair::from_seed(&[7u8; 32]);
    let options = SignOptions {
        signer_identity: "bench@example.invalid".into(),
        trust_policy_id: "bench-policy".into(),
        signing_time: "2026-01-01T00:00:00Z".into(),
        transparency: None,
        claim: None,
    };
    let bundle = synthetic_bundle(16).expect("synthetic");
    let statement = create_statement(&bundle, &options, &key.public().fingerprint());
    let envelope = sign_statement(&statement, &key, "bench@example.invalid").expect("sign");
    let wrapper = attest(&bundle, &key, &options).expect("attest");

    let mut group = c.benchmark_group("dsse");
    group.throughput(Throughput::Elements(1));
    group.bench_function("sign-envelope", |b| {
        b.iter(|| {
            sign_statement(black_box(&statement), &key, "bench@example.invalid").expect("sign")
        })
    });
    group.bench_function("verify-envelope", |b| {
        b.iter(|| verify_envelope(black_box(&envelope)))
    });
    group.bench_function("validate-attested-bundle/16", |b| {
        b.iter(|| validate_document(black_box(&wrapper), &Options::default()).valid)
    });
    group.finish();
}

/// What a verifier does per envelope: decode, rebuild the PAE, check the
/// Ed25519 signature against the embedded key.
fn verify_envelope(envelope: &Value) -> bool {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let payload = decode_base64(&text(&envelope["payload"])).expect("payload");
    let signature = &envelope["signatures"][0];
    let sig = decode_base64(&text(&signature["sig"])).expect("sig");
    let der = decode_base64(&text(&signature["publicKeySpkiBase64"])).expect("key");
    let key = PublicKey::from_spki_der(&der).expect("key");
    let ok = key.verify_strict(&pae(&text(&envelope["payloadType"]), &payload), &sig);
    assert!(ok);
    ok
}

criterion_group!(benches, bench_validate, bench_canonical, bench_dsse);
criterion_main!(benches);
