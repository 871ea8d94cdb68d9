//! Shared helpers for the runner's tests: where the built binaries are, and running one
//! case against a client command through the same code path as `mcp-harness run`.

#![allow(dead_code)]

pub mod census;

use std::path::{Path, PathBuf};

use mcp_harness_scenarios::model::Transport;
use mcp_harness_scenarios::{Case, load_dir};
use std::sync::OnceLock;

use mcp_harness::conformance::trial::{Bins, Harness};
use mcp_harness::conformance::verdict::Grade;
use mcp_harness::conformance::{self, Evaluation};

/// The checkout (the parent of the runner's directory): the tree's cases and snapshots.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The tree's case files.
pub fn scenarios_dir() -> PathBuf {
    workspace_root().join("scenarios")
}

/// The target directory holding `mcp-harness` and, after `cargo test` of the workspace, the
/// fake and the driver as programs of their own.
pub fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_mcp-harness"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The harness binaries; fails clearly when the workspace was not built as a whole.
pub fn bins() -> Bins {
    let dir = bin_dir();
    let bins = Bins::separate(dir.join("mcp-fake-stdio"), dir.join("mcp-harness-driver"));
    for bin in [&bins.fake_stdio, &bins.driver] {
        assert!(
            bin.exists(),
            "{} is missing: run the tests of the whole workspace (`cargo test`), which builds it",
            bin.display()
        );
    }
    bins
}

/// Every case in the tree.
pub fn cases() -> Vec<Case> {
    load_dir(&scenarios_dir()).unwrap_or_else(|errors| {
        panic!(
            "{}",
            errors
                .iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        )
    })
}

/// Every trial: each case on each of its transports (and revisions).
pub fn trials() -> Vec<(Case, Transport)> {
    mcp_harness_scenarios::trials(&cases())
}

/// One case by id.
pub fn case(id: &str) -> Case {
    cases()
        .into_iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no case {id}"))
}

/// The reference driver's command line, with extra arguments.
pub fn driver_cmd(extra: &str) -> String {
    format!("{} {extra}", conformance::shell_quote(&bins().driver))
}

/// The harness shared by a test binary's trials (one HTTP environment per test binary).
pub fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| Harness::new(bins()))
}

/// Runs `case` over stdio against `client`.
pub fn evaluate(case: &Case, client: &str) -> Evaluation {
    evaluate_on(case, Transport::Stdio, client)
}

/// Runs `case` over `transport` against `client`.
pub fn evaluate_on(case: &Case, transport: Transport, client: &str) -> Evaluation {
    conformance::evaluate(case, transport, client, harness(), Default::default())
}

/// The checks `eval` failed, each as `name: actual`, for failure messages.
pub fn failed_checks(eval: &Evaluation) -> Vec<String> {
    eval.checks
        .iter()
        .filter(|c| !c.passed)
        .map(|c| format!("{}: {}", c.name, c.actual))
        .collect()
}

/// The trials `client` gets a grade for which `keep` holds, each described in a line with
/// the checks it failed.
pub fn graded_where(client: &str, keep: impl Fn(Grade) -> bool + Sync) -> Vec<String> {
    in_parallel(trials(), |(case, transport)| {
        let eval = evaluate_on(&case, transport, client);
        keep(eval.grade).then(|| {
            let failed = failed_checks(&eval);
            format!(
                "{} graded {}: {failed:?}",
                case.trial_name(transport),
                eval.grade.as_str()
            )
        })
    })
    .into_iter()
    .flatten()
    .collect()
}

/// Runs `jobs` on a few threads at once; trials mostly wait on processes.
pub fn in_parallel<T: Send, R: Send>(jobs: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    in_parallel_on(6, jobs, f)
}

/// Runs `jobs` on `threads` threads, each taking the next job as it finishes one (so a job
/// that waits out a deadline holds up one thread, not a fixed share of the others); the
/// results come back in the order of `jobs`.
pub fn in_parallel_on<T: Send, R: Send>(
    threads: usize,
    jobs: Vec<T>,
    f: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    let count = jobs.len();
    let queue = std::sync::Mutex::new(jobs.into_iter().enumerate());
    let next = || queue.lock().unwrap_or_else(|p| p.into_inner()).next();
    let (next, f) = (&next, &f);
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.clamp(1, count.max(1)))
            .map(|_| {
                s.spawn(move || {
                    let mut out = Vec::new();
                    while let Some((i, job)) = next() {
                        out.push((i, f(job)));
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    assert_eq!(done.len(), count, "a job was lost");
    done.into_iter().map(|(_, r)| r).collect()
}
