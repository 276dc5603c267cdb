//! In-process throughput of the library API (issue 21): small valid bundles
//! (the 6-observation synthetic bundle, as `bench/batch.sh` uses) judged by
//! `mcpres::validate` over bytes and over paths, on one thread and on every
//! core (rayon), in bundles per second. A plain benchmark (no criterion):
//!
//!   cargo run --release --no-default-features --example bench_api [N]
//!
//! N (default 100,000) bundles per measurement; each figure is the best of
//! three runs. The files for the path measurement go into a temporary
//! directory (removed afterwards).

use std::path::PathBuf;
use std::time::Instant;

use mcpres::api::{Input, ValidateOptions};
use mcpres::produce::builder::{synthetic_bundle, to_file_bytes};
use rayon::prelude::*;

/// The allocator the `mcpres` binary and the Python package use: the library
/// leaves the choice to the program, and this is the one we recommend.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn best_of_three(n: usize, mut run: impl FnMut() -> usize) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let start = Instant::now();
        let valid = run();
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(valid, n, "every bundle is valid");
        best = best.min(secs);
    }
    n as f64 / best
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map_or(Ok(100_000), |a| a.parse())?;
    let bytes = to_file_bytes(&synthetic_bundle(6)?)?;
    let options = ValidateOptions::default();
    let threads = rayon::current_num_threads();
    let one = |_: usize| mcpres::validate(Input::bytes("b.json", &bytes), &options).valid();
    let serial = best_of_three(n, || (0..n).map(one).filter(|v| *v).count());
    let parallel = best_of_three(n, || (0..n).into_par_iter().map(one).filter(|v| *v).count());

    let dir = tempfile::tempdir()?;
    // As many distinct files as make the page cache matter little: 10,000
    // files, each validated n / 10,000 times.
    let files = n.min(10_000);
    let paths: Vec<PathBuf> = (0..files)
        .map(|i| {
            let p = dir.path().join(format!("{i:05}.json"));
            std::fs::write(&p, &bytes).map(|()| p)
        })
        .collect::<Result<_, _>>()?;
    let from_path = |i: usize| mcpres::validate(&paths[i % files], &options).valid();
    let paths_serial = best_of_three(n, || (0..n).map(from_path).filter(|v| *v).count());
    let paths_parallel = best_of_three(n, || {
        (0..n).into_par_iter().map(from_path).filter(|v| *v).count()
    });

    println!(
        "{n} bundles of {} bytes, {threads} threads; load {}",
        bytes.len(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    println!("bytes, 1 thread:        {serial:>9.0} bundles/s");
    println!("bytes, {threads} threads:       {parallel:>9.0} bundles/s");
    println!("paths, 1 thread:        {paths_serial:>9.0} bundles/s");
    println!("paths, {threads} threads:       {paths_parallel:>9.0} bundles/s");
    Ok(())
}
