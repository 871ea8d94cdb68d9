//! Machine- and person-readable results of a run, written by `--report-dir DIR`:
//! `results.json` (everything, and the input of the cross-client matrix), `junit.xml` (for
//! CI systems) and `report.html` (a self-contained page, failures first, with filters; see [`html`]);
//! `mcp-harness matrix` and `cargo xtask sdk all` build `matrix.html` of several runs
//! ([`merge`], [`matrix`]).
//!
//! A bearer token never reaches these files: the runner redacts it from the client's output
//! before anything is kept, and transcripts only say whether the right token came.

pub mod causes;
pub mod detail;
pub mod html;
pub mod junit;
pub mod links;
pub mod matrix;
pub mod merge;
pub mod page;
pub mod spans;
pub mod status;

use std::path::Path;

use serde::{Deserialize, Serialize};

use mcp_harness_scenarios::model::Level;

use crate::conformance::verdict::{Grade, Verdict};
use mcp_harness_scenarios::model::ErrorKind;
use serde_json::Value;

/// One client's run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResults {
    /// The client's label (`reference`, an SDK name, or the command line).
    pub client: String,
    /// Whether the seed 000 boundary profile was on.
    pub profile: bool,
    /// The factor `--time-scale` fixed for every trial, or the machine's at the start of the
    /// run (each trial then records its own, `TrialResult::time_scale`).
    #[serde(default = "one")]
    pub time_scale: f64,
    /// Wall time of the run, in seconds.
    pub seconds: f64,
    /// How this run made the network namespaces of its isolated trials (`root`, `sudo`,
    /// `userns`), or why it could not (`none: …`); absent when it needed none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub netns: Option<String>,
    /// Every trial run, sorted by name.
    pub trials: Vec<TrialResult>,
}

fn one() -> f64 {
    1.0
}

/// One trial's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialResult {
    /// `<case-id>@<transport>`.
    pub name: String,
    /// The case's one-line description.
    pub description: String,
    /// The case's level.
    pub level: Level,
    /// The era the client was asked to speak (`MCP_HARNESS_ERA`), when the case sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub era: Option<String>,
    /// The abilities the case needs that the adapter declared its library lacks (`limits` on
    /// the connect line): why such a trial is `unimplemented`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limited: Vec<String>,
    /// The grade.
    pub grade: Grade,
    /// What the run made of it: `passed`, `failed`, `expected-failure` (baselined), `stale`
    /// (baselined but passing), `flaky` (its grade changed between attempts) or `known-flaky`
    /// (the same, and the baseline marks it so).
    pub verdict: Verdict,
    /// The case file.
    #[serde(default)]
    pub case_path: String,
    /// The command line that re-runs just this trial.
    #[serde(default)]
    pub rerun: String,
    /// The baseline's reason, when listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_reason: Option<String>,
    /// The baseline's known-flaky reason (`<trial>: flaky: <reason>`), when listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub known_flaky: Option<String>,
    /// Whether the trial was re-run (`--retries`) and its grade changed between attempts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flaky: bool,
    /// The grade of every attempt, first (the parallel pass) to last, when the trial was
    /// re-run; empty otherwise. `grade`, the checks and the details are the first attempt's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<Grade>,
    /// The client's wall time, in ms.
    pub elapsed_ms: u64,
    /// The factor this trial's durations were multiplied by (the machine's when it started,
    /// unless `--time-scale` fixed it).
    #[serde(default = "one")]
    pub time_scale: f64,
    /// Every check, in order.
    pub checks: Vec<CheckRecord>,
    /// What the client reported for each step of the plan, from its outcome lines.
    #[serde(default)]
    pub outcomes: Vec<OutcomeRecord>,
    /// The Expected/Actual report (empty when every check held).
    pub details: String,
    /// Why the trial was not run here (grade `not-run`): no network namespace could be made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_run: Option<String>,
    /// The normalized transcript.
    pub transcript: String,
    /// Requirements the trial did not judge, and why (`mcp-harness check`: nothing in the
    /// recording exercised them). Neither passed nor failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_judged: Vec<NotJudged>,
    /// A traces trial's spans as the client exported them (secrets already replaced by
    /// labels), shown beside the messages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spans: Vec<Value>,
}

/// A requirement a trial did not judge: not a pass, not a failure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NotJudged {
    /// The verdict word: `not observed` (`check`) or `not exercised` (`serve`).
    pub verdict: String,
    /// What would have been checked.
    pub name: String,
    /// Its level.
    pub level: Level,
    /// The id of the catalogue requirement.
    pub requirement_id: String,
    /// Why it was not judged (what the trial lacked).
    pub why: String,
}

/// One check's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckRecord {
    /// What is checked.
    pub name: String,
    /// Its level.
    pub level: Level,
    /// Whether it held.
    pub passed: bool,
    /// The id of the catalogue requirement it cites.
    #[serde(default)]
    pub requirement_id: String,
    /// The requirement it checks, in a sentence.
    #[serde(default)]
    pub requirement: String,
    /// Where its requirement is written.
    pub source: String,
    /// What was required, on failure.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub expected: String,
    /// What was seen, on failure.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub actual: String,
    /// The reason of the baseline entry that expects this check to fail, when one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
}

/// What the client reported for one step of the plan.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OutcomeRecord {
    /// The step's index in the plan.
    pub step: usize,
    /// The step's operation.
    pub op: String,
    /// The object of an `ok` line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<Value>,
    /// The `error` of an error line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorRecord>,
    /// Whether no valid line came for this step (then neither `ok` nor `error` is set).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub missing: bool,
}

/// An `error` outcome: its kind, codes and the client's own message.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorRecord {
    /// The kind, from the contract's vocabulary.
    pub kind: ErrorKind,
    /// The JSON-RPC code, if the client gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    /// The HTTP status, if the client gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The client's message (escaped, at most 500 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl TrialResult {
    /// A result with only a name, a grade and a verdict, at the case level `must`: no case,
    /// checks, outcomes, details or transcript (fill in what applies with `..`). For a trial
    /// the harness could not run, and for tests.
    pub fn bare(name: &str, grade: Grade, verdict: Verdict) -> TrialResult {
        TrialResult {
            name: name.to_owned(),
            description: String::new(),
            level: Level::Must,
            era: None,
            limited: Vec::new(),
            grade,
            verdict,
            case_path: String::new(),
            rerun: String::new(),
            baseline_reason: None,
            known_flaky: None,
            flaky: false,
            attempts: Vec::new(),
            elapsed_ms: 0,
            time_scale: 1.0,
            checks: Vec::new(),
            outcomes: Vec::new(),
            details: String::new(),
            not_run: None,
            transcript: String::new(),
            not_judged: Vec::new(),
            spans: Vec::new(),
        }
    }

    /// The grade of every attempt, first to last, as the reports show them: `fail, pass`
    /// (empty when the trial was not re-run).
    pub fn attempts_shown(&self) -> String {
        let grades: Vec<&str> = self.attempts.iter().map(|g| g.as_str()).collect();
        grades.join(", ")
    }
}

impl CheckRecord {
    /// A check with only a name, a level and whether it held (fill in the rest with `..`).
    pub fn bare(name: &str, level: Level, passed: bool) -> CheckRecord {
        CheckRecord {
            name: name.to_owned(),
            level,
            passed,
            requirement_id: String::new(),
            requirement: String::new(),
            source: String::new(),
            expected: String::new(),
            actual: String::new(),
            baseline: None,
        }
    }
}

impl RunResults {
    /// The names of the trials this run judged: all but those not run here (no network
    /// namespace), which judged no baseline entry.
    pub fn judged(&self) -> std::collections::HashSet<&str> {
        self.trials
            .iter()
            .filter(|t| t.grade != Grade::NotRun)
            .map(|t| t.name.as_str())
            .collect()
    }

    /// How many trials have each grade, in report order.
    pub fn counts(&self) -> Vec<(Grade, usize)> {
        let count = |g: Grade| self.trials.iter().filter(|t| t.grade == g).count();
        [
            Grade::Pass,
            Grade::NonStrict,
            Grade::Unimplemented,
            Grade::Fail,
            Grade::NotRun,
        ]
        .into_iter()
        .map(|g| (g, count(g)))
        // "not run here" is shown only where it happened.
        .filter(|(g, n)| *g != Grade::NotRun || *n > 0)
        .collect()
    }

    /// Reads a `results.json`.
    pub fn load(path: &Path) -> Result<RunResults, String> {
        const EXPECTED: &str = "expected the results.json that a run writes with --report-dir";
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not JSON ({e}); {EXPECTED}", path.display()))?;
        serde_path_to_error::deserialize(value).map_err(|e| {
            let at = match e.path().to_string() {
                root if root == "." => String::new(),
                field => format!(" at {field}"),
            };
            format!(
                "{}: not a results file{at}: {}; {EXPECTED}",
                path.display(),
                e.inner()
            )
        })
    }
}

/// Writes `results.json`, `junit.xml` and `report.html` into `dir`.
pub fn write_all(dir: &Path, results: &RunResults) -> Result<(), String> {
    let write = |name: &str, text: String| {
        std::fs::write(dir.join(name), text)
            .map_err(|e| format!("cannot write {}: {e}", dir.join(name).display()))
    };
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let json = serde_json::to_string_pretty(results).map_err(|e| e.to_string())?;
    write("results.json", json)?;
    write("junit.xml", junit::render(results)?)?;
    write("report.html", html::report(results))
}
