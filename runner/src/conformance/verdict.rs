//! Turning check results into a grade, Autobahn style, and into the message a person
//! reads when a trial does not pass: h2spec-style Expected/Actual under each failed check,
//! with the requirement and its source, then the transcript tail and the client's stderr.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use mcp_harness_scenarios::model::{Level, Need};
use mcp_harness_scenarios::transcript::Event;

use super::checks::CheckResult;
use super::outcome::Outcomes;
use super::trial::TrialRun;

/// A trial's grade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Grade {
    /// Every check held.
    Pass,
    /// Only `should` checks failed (or `profile` ones with the boundary profile off).
    NonStrict,
    /// A step answered `unsupported_op`, and checks failed because of it.
    Unimplemented,
    /// A `must` check failed (or a `profile` one with the profile on).
    Fail,
    /// Not run here: the case needs a network namespace and none can be made on this
    /// machine. Fails the run only with `--require-ssrf`; never needs a baseline entry.
    NotRun,
}

impl Grade {
    /// The name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Grade::Pass => "pass",
            Grade::NonStrict => "non-strict",
            Grade::Unimplemented => "unimplemented",
            Grade::Fail => "fail",
            Grade::NotRun => "not-run",
        }
    }

    /// Whether the grade lets the run succeed without a baseline entry.
    pub fn is_acceptable(self) -> bool {
        matches!(self, Grade::Pass | Grade::NonStrict | Grade::NotRun)
    }
}

/// What a run made of a trial, given its grade, its baseline entry and its snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Acceptable grade, no baseline entry, snapshot (if any) equal.
    Passed,
    /// Not acceptable and not baselined, or the snapshot differs.
    Failed,
    /// Not acceptable, and the baseline expects it.
    ExpectedFailure,
    /// Baselined, but the trial now grades acceptable: the entry must go.
    Stale,
    /// Re-run with `--retries`, the trial's grade changed between attempts, and the baseline
    /// does not mark it known-flaky: it fails the run.
    Flaky,
    /// Its grade changed between attempts, and the baseline marks it known-flaky
    /// (`<trial>: flaky: <reason>`): reported, but the run does not fail for it.
    KnownFlaky,
}

impl Verdict {
    /// The name used in reports and `results.json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Passed => "passed",
            Verdict::Failed => "failed",
            Verdict::ExpectedFailure => "expected-failure",
            Verdict::Stale => "stale",
            Verdict::Flaky => "flaky",
            Verdict::KnownFlaky => "known-flaky",
        }
    }

    /// Whether this trial makes the run fail.
    pub fn fails_run(self) -> bool {
        matches!(self, Verdict::Failed | Verdict::Stale | Verdict::Flaky)
    }
}

/// A check's level as a report shows it: a `profile` check with the profile off says so.
pub fn level_label(level: Level, profile_on: bool) -> String {
    match (level, profile_on) {
        (Level::Profile, false) => "profile, off".to_owned(),
        (level, _) => level.as_str().to_owned(),
    }
}

/// Where a failure comes from and how to see it again: the case file and a command line
/// that re-runs just this trial.
#[derive(Debug, Clone, Default)]
pub struct Place {
    /// The case file, as a person would open it.
    pub case_path: String,
    /// `cargo xtask conformance --exact <trial> ...`.
    pub rerun: String,
}

/// How strictly a run grades: the boundary profile (on by default; `--spec-only` turns it
/// off) and the advisories (off by default; `--advisory-fails` turns them on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Strictness {
    /// `profile` checks fail a trial.
    pub profile: bool,
    /// `advisory` checks fail a trial.
    pub advisory: bool,
}

impl Default for Strictness {
    fn default() -> Self {
        Strictness {
            profile: true,
            advisory: false,
        }
    }
}

impl Strictness {
    /// Whether a failed check of this level fails the trial.
    pub fn fails(self, level: Level) -> bool {
        match level {
            Level::Must => true,
            Level::Profile => self.profile,
            Level::Advisory => self.advisory,
            Level::Should => false,
        }
    }
}

/// Grades a trial's checks. A trial whose client answered `unsupported_op`, or whose case
/// needs an ability the client's adapter declared it lacks (`limits`), is `unimplemented`
/// rather than failed.
pub fn grade(
    checks: &[CheckResult],
    outcomes: &Outcomes,
    needs: &[Need],
    strictness: Strictness,
) -> Grade {
    let failed: Vec<&CheckResult> = checks.iter().filter(|c| !c.passed).collect();
    if failed.is_empty() {
        return Grade::Pass;
    }
    let lacks_a_need = needs
        .iter()
        .any(|n| outcomes.limits.iter().any(|l| l == n.as_str()));
    if outcomes.has_unsupported_op() || lacks_a_need {
        return Grade::Unimplemented;
    }
    match failed.iter().any(|c| strictness.fails(c.level)) {
        true => Grade::Fail,
        false => Grade::NonStrict,
    }
}

/// The report of a trial that did not pass.
pub fn render_failure(
    grade: Grade,
    checks: &[CheckResult],
    run: &TrialRun,
    profile_on: bool,
) -> String {
    render_report(grade, checks, run, profile_on, None)
}

/// [`render_failure`], headed by the case file and the command that re-runs the trial.
pub fn render_report(
    grade: Grade,
    checks: &[CheckResult],
    run: &TrialRun,
    profile_on: bool,
    place: Option<&Place>,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "grade: {}", grade.as_str());
    if let Some(place) = place {
        let _ = writeln!(out, "case:   {}", place.case_path);
        let _ = writeln!(out, "re-run: {}", place.rerun);
    }
    for c in checks.iter().filter(|c| !c.passed) {
        let level = level_label(c.level, profile_on);
        let _ = writeln!(out, "\n✗ {} [{level}]", c.name);
        let _ = writeln!(out, "  Requirement: {} {}", c.requirement_id, c.requirement);
        let _ = writeln!(out, "  Source:      {}", c.source);
        let _ = writeln!(out, "  Expected:    {}", c.expected);
        let _ = writeln!(out, "  Actual:      {}", c.actual);
    }
    let _ = writeln!(
        out,
        "\nclient ran {} ms; stdout (outcome lines, or an official-suite client's log):",
        run.elapsed.as_millis()
    );
    for line in run.stdout_lines.iter().take(20) {
        let _ = writeln!(out, "  {line}");
    }
    let main = std::iter::once(("transcript tail:".to_owned(), &run.records));
    let others = (run.others.iter()).map(|(name, r)| (format!("transcript tail of {name}:"), r));
    for (title, records) in main.chain(others) {
        let _ = writeln!(out, "{title}");
        match records {
            Err(e) => {
                let _ = writeln!(out, "  ({e})");
            }
            Ok(records) => {
                let start = records.len().saturating_sub(12);
                for r in &records[start..] {
                    let _ = writeln!(out, "  {}", describe_event(&r.event));
                }
            }
        }
    }
    let stderr = run.stderr_tail.trim_end();
    if !stderr.is_empty() {
        let lines: Vec<&str> = stderr.lines().collect();
        let _ = writeln!(out, "client stderr tail:");
        for line in &lines[lines.len().saturating_sub(10)..] {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}

/// One transcript event as a line: `→` is what the server received, `←` what it sent.
pub fn describe_event(event: &Event) -> String {
    use mcp_harness_scenarios::matcher::short;
    match event {
        Event::Started => "started".into(),
        Event::Received { message } => format!("→ {}", short(message)),
        Event::ReceivedInvalid { line, .. } => format!("→ (not JSON) {line:?}"),
        Event::Sent { message } => format!("← {}", short(message)),
        Event::SentRaw { line } => format!("← (raw) {line:?}"),
        Event::HttpRequest {
            method,
            path,
            headers,
            status,
            origin,
            params,
            ..
        } => {
            let shown: Vec<String> = headers.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            let at = origin.as_ref().map_or(String::new(), |o| format!("({o}) "));
            // Whole: labels keep it short, and every parameter is the point.
            let params = params.as_ref().map_or(String::new(), |p| {
                format!(" {}", serde_json::Value::Object(p.clone()))
            });
            format!(
                "{at}{method} {path}{params} [{}] → {status}",
                shown.join("; ")
            )
        }
        Event::StdinEof => "stdin closed".into(),
        Event::Signal { name } => format!("got {name}"),
        Event::Truncated => "(transcript truncated)".into(),
        Event::Connected => "a connection opened".into(),
        Event::StreamClosed { id } => {
            format!("response stream of request {id} closed by the client")
        }
        Event::Fault { spec, .. } => format!("(fault applied by the recorder: {spec})"),
        Event::Exited { code } => format!("exited with {code}"),
        Event::Span { span } => format!(
            "span \"{}\" (exported by the client)",
            span.get("name").and_then(|n| n.as_str()).unwrap_or("?")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(level: Level) -> CheckResult {
        CheckResult {
            name: "x".into(),
            level,
            requirement_id: "X-1".into(),
            requirement: String::new(),
            source: String::new(),
            passed: false,
            expected: String::new(),
            actual: String::new(),
            always_on: false,
            observed: true,
        }
    }

    fn outcomes(limits: &[&str]) -> Outcomes {
        Outcomes {
            by_step: Vec::new(),
            problem: None,
            messages: Vec::new(),
            limits: limits.iter().map(|l| l.to_string()).collect(),
        }
    }

    #[test]
    fn advisories_fail_a_trial_only_when_asked() {
        let checks = [failed(Level::Advisory)];
        let none = outcomes(&[]);
        assert_eq!(
            grade(&checks, &none, &[], Strictness::default()),
            Grade::NonStrict
        );
        let strict = Strictness {
            advisory: true,
            ..Strictness::default()
        };
        assert_eq!(grade(&checks, &none, &[], strict), Grade::Fail);
    }

    #[test]
    fn a_declared_limit_makes_a_case_that_needs_it_unimplemented() {
        let checks = [failed(Level::Must)];
        let needs = [Need::ChooseVersion];
        let limited = outcomes(&["choose_version"]);
        let s = Strictness::default();
        assert_eq!(grade(&checks, &limited, &needs, s), Grade::Unimplemented);
        // The same limit does not excuse a case that does not need it, nor a client that
        // declared nothing.
        assert_eq!(grade(&checks, &limited, &[], s), Grade::Fail);
        assert_eq!(grade(&checks, &outcomes(&[]), &needs, s), Grade::Fail);
    }

    #[test]
    fn a_library_that_always_probes_is_excused_only_where_modern_only_is_needed() {
        let checks = [failed(Level::Must)];
        let probes = outcomes(&["modern_only"]);
        let s = Strictness::default();
        // The case about a legacy server that a modern-only client refuses.
        assert_eq!(
            grade(&checks, &probes, &[Need::ModernOnly], s),
            Grade::Unimplemented
        );
        // Every other modern trial is judged: a modern server cannot tell it apart.
        assert_eq!(grade(&checks, &probes, &[], s), Grade::Fail);
        assert_eq!(
            grade(&checks, &probes, &[Need::ChooseVersion], s),
            Grade::Fail
        );
    }
}
