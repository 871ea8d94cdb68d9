//! Every check must be able to fail. Each check of a case names, in `broken_by`, the
//! deliberately broken clients that must fail it: the reference driver with one `--defect`,
//! or a named double (`doubles.json`). This test runs each (client, trial) pair once,
//! requires every listed check to fail there with a grade worse than pass (`fail` for a
//! `must` or `profile` requirement), and fails when a case check has no `broken_by`. The
//! always-on checks (the driver contract, the JSON-RPC base rules, the HTTP rules) are Rust,
//! so the rows that break them are Rust too: [`ALWAYS_ON`].

mod support;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use mcp_harness::conformance::verdict::Grade;
use mcp_harness_scenarios::model::{BrokenBy, CaseCheck, Level, Rule, Transport};
use mcp_harness_scenarios::{Case, trials};

/// The always-on checks' rows: (client, trial as `case-id[@transport[@revision]]`, a
/// substring of the check that must fail). The grade must be `fail` where the check cites a
/// must or a profile requirement (the profile is on), and worse than `pass` for a should or
/// an advisory (the span conventions, ADV-OTEL-*).
#[rustfmt::skip]
const ALWAYS_ON: &[(&str, &str, &str)] = &[
    ("exits-3", "handshake/happy-path", "exited with status 0"),
    ("chatty-stdout", "handshake/happy-path", "one outcome line per step"),
    ("first-line-only", "tools/pagination-three-pages", "one outcome line per step"),
    ("no-timeout", "robust/partial-line-then-silence", "within the trial deadline"),
    ("no-timeout", "jsonrpc/server-ping-mid-call@stdio@2025-11-25", "within the trial deadline"),
    ("no-sigterm", "cleanup/ignores-eof", "not left running"),
    ("no-sigkill", "cleanup/ignores-sigterm", "not left running"),
    ("no-sigterm", "servers/server-info-name-shared@stdio", "not left running"),
    ("leak-on-handshake-failure", "cleanup/after-handshake-error", "not left running"),
    ("no-sigterm", "cleanup/after-tool-error", "not left running"),
    ("no-sigterm", "cleanup/after-cancellation", "not left running"),
    ("reuse-ids", "tools/pagination-three-pages", "never reused"),
    ("float-ids", "handshake/happy-path", "strings or integers"),
    ("id-on-notifications", "handshake/happy-path", "notifications carry no id"),
    ("garbage-to-server", "handshake/happy-path", "one JSON-RPC 2.0 message"),
    // One row per schema rule family (checks/schema.rs): type, required, enum, const in an
    // anyOf, and a type in a response.
    ("arguments-as-string", "calls/text-blocks", "request and notification the client sent is valid"),
    ("initialize-no-client-info", "handshake/happy-path", "request and notification the client sent is valid"),
    ("log-level-unknown", "utilities/set-logging-level@stdio@2025-06-18", "request and notification the client sent is valid"),
    ("completion-ref-type", "completion/prompt-argument", "request and notification the client sent is valid"),
    ("roots-not-array", "roots/list-answered", "response the client sent to a server request is valid"),
    ("string-error-codes", "jsonrpc/unknown-server-request-error@stdio@2025-06-18", "response the client sent to a server request is valid"),
    ("accept-json-only", "calls/text-blocks@https", "accepts both application/json and text/event-stream"),
    ("text-plain-body", "calls/text-blocks@https", "body is sent as application/json"),
    ("prints-token", "http/bearer-token-sent@https", "never printed its bearer token"),
    ("prints-client-secret", "auth/registration-pre-registered@https", "never printed a secret of its authorization"),
    ("visits-redirect-uri", "auth/registration-dynamic@https", "never connected to its redirect URI"),
    ("malformed-traceparent", "trace/propagated", "follows W3C Trace Context"),
    ("malformed-baggage", "trace/propagated@https", "follows W3C Baggage"),
    // The span checks (checks/otel.rs), on both transports and eras.
    ("no-spans", "traces/operations@stdio@2025-11-25", "exported a span per request"),
    ("span-wrong-id", "traces/operations-modern", "exported a span per request"),
    ("span-misnamed", "traces/operations@https@2025-11-25", "named and attributed by the OpenTelemetry MCP conventions"),
    ("wire-context-not-span", "traces/operations@stdio@2025-11-25", "carries in _meta is its span's"),
    ("wire-context-not-span", "traces/caller-context@https", "carries in _meta is its span's"),
    ("span-no-error-type", "traces/errors@https@2025-11-25", "span carries error.type and the error code"),
    ("token-in-span", "traces/bearer-token-modern@https", "holds a secret of the trial"),
    ("token-in-span", "traces/oauth@https", "holds a secret of the trial"),
    ("token-in-span", "traces/elicitation-sensitive@stdio@2025-11-25", "holds a secret of the trial"),
];

/// `MCP_HARNESS_DEFECTS_CASES=<prefix>` limits the run to the cases whose id starts with it
/// (e.g. `auth/`), and the always-on rows to those on such a case: for working on one area.
fn only() -> Option<String> {
    std::env::var("MCP_HARNESS_DEFECTS_CASES")
        .ok()
        .filter(|p| !p.is_empty())
}

/// Broken clients that run until a deadline or a timeout of several seconds: only the order
/// of the runs depends on this list.
const WAITERS: &[&str] = &[
    "no-timeout",
    "ignore-cancel",
    "no-stderr-drain",
    "float-ids",
];

/// The named doubles: name → command line (`{driver}` is the reference driver, `{doubles}`
/// the directory of `doubles.json`).
fn doubles() -> HashMap<String, String> {
    let path = doubles_dir().join("doubles.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let parsed: BTreeMap<String, serde_json::Value> =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    parsed
        .into_iter()
        .map(|(name, d)| {
            let command = d["command"]
                .as_str()
                .unwrap_or_else(|| {
                    panic!("{}: {name}: expected a `command` string", path.display())
                })
                .to_owned();
            (name, command)
        })
        .collect()
}

fn doubles_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests")
}

/// The command line of a broken client: a double by name, else the driver with `--defect`.
fn client_for(name: &str, doubles: &HashMap<String, String>) -> String {
    match doubles.get(name) {
        Some(command) => command
            .replace("{driver}", &support::driver_cmd(""))
            .replace(
                "{doubles}",
                &mcp_harness::conformance::shell_quote(&doubles_dir().join("doubles")),
            ),
        None => support::driver_cmd(&format!("--defect {name}")),
    }
}

/// A trial: the case (at its revision) and the transport.
#[derive(Clone)]
struct Trial {
    case: Case,
    transport: Transport,
}

impl Trial {
    fn name(&self) -> String {
        self.case.trial_name(self.transport)
    }
}

/// Whether `check` is made at this trial (wire checks may be limited to some revisions).
fn applies(check: &CaseCheck, case: &Case) -> bool {
    match &check.rule {
        Rule::Wire(w) => {
            w.revisions.is_empty()
                || case
                    .revision
                    .as_ref()
                    .is_some_and(|r| w.revisions.contains(r))
        }
        _ => true,
    }
}

/// The trials of one case file (its variants, transports and revisions), in order.
fn file_trials(cases: &[Case]) -> Vec<Trial> {
    trials(cases)
        .into_iter()
        .map(|(case, transport)| Trial { case, transport })
        .collect()
}

/// The trials an entry names: of the file's trials where the check is made that fit the
/// entry's transport, revision and variant, the first (or with `@*`, all).
fn pick(entry: &BrokenBy, check: usize, all: &[Trial]) -> Vec<Trial> {
    let mut fitting = all.iter().filter(|t| {
        applies(&t.case.scenario.checks[check], &t.case)
            && entry.transport.is_none_or(|x| x == t.transport)
            && (entry.revision.is_none() || entry.revision == t.case.revision)
            && (entry.variant.is_none() || entry.variant == t.case.variant)
    });
    match entry.every {
        true => fitting.cloned().collect(),
        false => fitting.next().cloned().into_iter().collect(),
    }
}

/// How `client` would be written in `broken_by` to mean `trial` for check `check`.
fn entry_for(client: &str, trial: &Trial, check: usize, all: &[Trial]) -> String {
    let bare = BrokenBy {
        client: client.to_owned(),
        transport: None,
        revision: None,
        variant: None,
        every: false,
        written: client.to_owned(),
    };
    if pick(&bare, check, all)
        .first()
        .is_some_and(|t| t.name() == trial.name())
    {
        return client.to_owned();
    }
    let mut out = format!("{client}@{}", trial.transport.as_str());
    for part in [&trial.case.revision, &trial.case.variant]
        .into_iter()
        .flatten()
    {
        out.push('@');
        out.push_str(part);
    }
    out
}

/// What one run of a broken client (or of the reference client) showed.
struct Seen {
    grade: Grade,
    /// Failed checks: (always-on, name, level).
    failed: Vec<(bool, String, Level)>,
    /// The always-on checks made, passed or not.
    always_on_made: Vec<String>,
}

/// A run of the pool: a listed (client, trial) pair, or a trial of the reference run.
enum Work<'a> {
    Broken(&'a Job),
    Reference(&'a (Case, Transport)),
}

/// A listed (client, trial) pair, with the checks it must fail: (file, check index, level).
struct Job {
    client: String,
    trial: Trial,
    /// The case file's checks this run must fail: (file, name, level, as written).
    must_fail: Vec<(PathBuf, String, Level, String)>,
    /// The always-on checks (substrings) this run must fail.
    always_on: Vec<String>,
}

/// The job of `client` on `trial`, made on first use: each pair runs once, whatever asks it.
fn job<'a>(
    jobs: &'a mut BTreeMap<(String, String), Job>,
    client: &str,
    trial: &Trial,
) -> &'a mut Job {
    jobs.entry((client.to_owned(), trial.name()))
        .or_insert_with(|| Job {
            client: client.to_owned(),
            trial: trial.clone(),
            must_fail: Vec::new(),
            always_on: Vec::new(),
        })
}

#[test]
fn every_check_is_seen_to_fail_against_a_broken_client() {
    let doubles = doubles();
    let mut by_file: BTreeMap<PathBuf, Vec<Case>> = BTreeMap::new();
    let only = only();
    let wanted = |id: &str| only.as_deref().is_none_or(|p| id.starts_with(p));
    for case in support::cases().into_iter().filter(|c| wanted(&c.id)) {
        by_file.entry(case.path.clone()).or_default().push(case);
    }
    let mut jobs: BTreeMap<(String, String), Job> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut unproven: Vec<(PathBuf, usize, String)> = Vec::new();
    for (file, cases) in &by_file {
        let all = file_trials(cases);
        for (i, check) in cases[0].scenario.checks.iter().enumerate() {
            if check.broken_by.is_empty() {
                unproven.push((file.clone(), i, check.name.clone()));
            }
            for entry in &check.broken_by {
                let picked = pick(entry, i, &all);
                if picked.is_empty() {
                    problems.push(format!(
                        "{} :: {} :: broken_by {:?} names no trial where the check is made",
                        file.display(),
                        check.name,
                        entry.written
                    ));
                }
                for trial in picked {
                    job(&mut jobs, &entry.client, &trial).must_fail.push((
                        file.clone(),
                        check.name.clone(),
                        check.requirement.level,
                        entry.written.clone(),
                    ));
                }
            }
        }
    }
    for &(client, spec, check) in ALWAYS_ON.iter().filter(|row| wanted(row.1)) {
        let trial = always_on_trial(spec);
        job(&mut jobs, client, &trial)
            .always_on
            .push(check.to_owned());
    }

    let mut jobs: Vec<Job> = jobs.into_values().collect();
    // Those that wait out a deadline go first, so the others fill the time they wait.
    jobs.sort_by_key(|job| !WAITERS.contains(&job.client.as_str()));
    // The broken clients' runs and the reference run (below) share one pool. Most runs wait
    // on processes (some on a deadline of several seconds), so more of them go at once
    // than there are cores; each (client, trial) pair is still run once, in its own trial.
    let reference = support::driver_cmd("");
    let reference_trials: Vec<_> = support::trials()
        .into_iter()
        .filter(|(case, _)| wanted(&case.id))
        .collect();
    let work: Vec<Work> = jobs
        .iter()
        .map(Work::Broken)
        .chain(reference_trials.iter().map(Work::Reference))
        .collect();
    let mut seen: Vec<Seen> = support::in_parallel_on(16, work, |work| {
        let eval = match work {
            Work::Broken(job) => support::evaluate_on(
                &job.trial.case,
                job.trial.transport,
                &client_for(&job.client, &doubles),
            ),
            Work::Reference((case, transport)) => {
                support::evaluate_on(case, *transport, &reference)
            }
        };
        Seen {
            grade: eval.grade,
            failed: eval
                .checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| (c.always_on, c.name.clone(), c.level))
                .collect(),
            always_on_made: eval
                .checks
                .into_iter()
                .filter(|c| c.always_on)
                .map(|c| c.name)
                .collect(),
        }
    });
    let reference_seen = seen.split_off(jobs.len());

    for (job, seen) in jobs.iter().zip(&seen) {
        let shown = || {
            format!(
                "{} on {}: grade {}, failed {:?}",
                job.client,
                job.trial.name(),
                seen.grade.as_str(),
                seen.failed.iter().map(|f| &f.1).collect::<Vec<_>>()
            )
        };
        for (file, name, level, written) in &job.must_fail {
            let failed = seen
                .failed
                .iter()
                .any(|(always, n, _)| !always && n == name);
            let graded = match level {
                Level::Must | Level::Profile => seen.grade == Grade::Fail,
                Level::Should | Level::Advisory => seen.grade != Grade::Pass,
            };
            if !failed || !graded {
                problems.push(format!(
                    "{} :: {name} :: broken_by {written:?} did not fail it with a grade worse than pass{}: {}",
                    file.display(),
                    match level {
                        Level::Must | Level::Profile => " (`fail`, as its requirement is a must or profile)",
                        _ => "",
                    },
                    shown()
                ));
            }
        }
        for check in &job.always_on {
            let failed = seen
                .failed
                .iter()
                .find(|(always, n, _)| *always && n.contains(check));
            let graded = match failed.map(|f| f.2) {
                Some(Level::Must | Level::Profile) => seen.grade == Grade::Fail,
                Some(Level::Should | Level::Advisory) => seen.grade != Grade::Pass,
                None => false,
            };
            if !graded {
                problems.push(format!(
                    "always-on row ~{check:?}: wanted it failed (grade fail for a must or profile): {}",
                    shown()
                ));
            }
        }
    }

    // A check without `broken_by` is named with the runs of its file that failed it, which
    // are what its `broken_by` could say.
    for (file, i, name) in &unproven {
        let all = file_trials(&by_file[file]);
        let candidates: Vec<String> = jobs
            .iter()
            .zip(&seen)
            .filter(|(job, seen)| {
                &job.trial.case.path == file
                    && seen
                        .failed
                        .iter()
                        .any(|(always, n, _)| !always && n == name)
            })
            .map(|(job, _)| entry_for(&job.client, &job.trial, *i, &all))
            .collect();
        problems.push(format!(
            "{} :: {name} :: no broken_by: name a broken client that fails it (seen failing with: {candidates:?})",
            file.display()
        ));
    }

    // Every always-on check the reference run makes must be among those some row failed.
    let always_failed: BTreeSet<String> = seen
        .iter()
        .flat_map(|s| s.failed.iter().filter(|f| f.0).map(|f| f.1.clone()))
        .collect();
    let always_made: BTreeSet<String> = reference_seen
        .into_iter()
        .flat_map(|s| s.always_on_made)
        .collect();
    // (A run limited to some cases proves only their rows.)
    for name in always_made
        .difference(&always_failed)
        .filter(|_| only.is_none())
    {
        problems.push(format!(
            "(every case) :: {name} :: no row of ALWAYS_ON fails it"
        ));
    }

    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// `case-id` (the case's first transport), `case-id@https`, `case-id@stdio@2025-06-18`.
fn always_on_trial(spec: &str) -> Trial {
    let mut parts = spec.split('@');
    let case = support::case(parts.next().unwrap_or_default());
    let transport = match parts.next() {
        Some("https") => Transport::Https,
        Some("stdio") => Transport::Stdio,
        Some(other) => panic!("{spec}: unknown transport {other:?}; expected stdio or https"),
        None => case.scenario.transports[0],
    };
    let revision = parts.next().map(str::to_owned);
    let case = trials(&[case])
        .into_iter()
        .map(|(c, _)| c)
        .find(|c| c.revision == revision)
        .unwrap_or_else(|| panic!("{spec}: no such revision"));
    Trial { case, transport }
}
