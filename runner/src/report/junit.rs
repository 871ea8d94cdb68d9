//! JUnit XML for CI systems, via quick-junit: one test case per trial, grouped in one suite
//! per area. A baselined failure is reported as skipped with its reason, so a CI dashboard
//! shows known gaps without turning red; a stale entry is a failure. A trial not run here
//! (no network namespace) is skipped with its reason, or a failure under `--require-ssrf`. A flaky trial (its grade
//! changed between `--retries` attempts) is a failure, or a success when the baseline marks it
//! known-flaky; either way it carries the properties `flaky` and `attempts` and a system-out
//! note, so a dashboard never shows it as a plain pass.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::RunResults;
use crate::conformance::verdict::{Grade, Verdict};

/// The JUnit document of one run.
pub fn render(results: &RunResults) -> Result<String, String> {
    let mut report = Report::new(format!("mcp-harness: {}", results.client));
    report.set_time(Duration::from_secs_f64(results.seconds));
    let mut areas: Vec<&str> = results.trials.iter().map(|t| area(&t.name)).collect();
    areas.dedup();
    for name in areas {
        let mut suite = TestSuite::new(name);
        for trial in results.trials.iter().filter(|t| area(&t.name) == name) {
            let status = match trial.verdict {
                Verdict::Passed if trial.grade == Grade::NotRun => {
                    let mut s = TestCaseStatus::skipped();
                    s.set_message(format!(
                        "not run here: {}",
                        trial.not_run.as_deref().unwrap_or_default()
                    ));
                    s
                }
                Verdict::Passed | Verdict::KnownFlaky => TestCaseStatus::success(),
                Verdict::ExpectedFailure => {
                    let mut s = TestCaseStatus::skipped();
                    s.set_message(format!(
                        "expected failure ({}): {}",
                        trial.grade.as_str(),
                        trial.baseline_reason.as_deref().unwrap_or_default()
                    ));
                    s
                }
                Verdict::Failed | Verdict::Stale | Verdict::Flaky => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_message(format!(
                        "{}: {}",
                        trial.verdict.as_str(),
                        trial.grade.as_str()
                    ));
                    s.set_type(trial.grade.as_str());
                    s.set_description(trial.details.clone());
                    s
                }
            };
            let mut case = TestCase::new(trial.name.clone(), status);
            case.set_classname(name);
            case.set_time(Duration::from_millis(trial.elapsed_ms));
            if !trial.attempts.is_empty() {
                let grades = trial.attempts_shown();
                case.add_property(Property::new("flaky", trial.flaky.to_string()));
                case.add_property(Property::new("attempts", grades.clone()));
                let note = match (trial.flaky, &trial.known_flaky) {
                    (false, _) => format!("graded the same on every attempt: {grades}"),
                    (true, Some(why)) => format!("flaky (known: {why}); attempts: {grades}"),
                    (true, None) => format!("flaky; attempts: {grades}"),
                };
                case.set_system_out(note);
            }
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    report
        .to_string()
        .map_err(|e| format!("cannot write JUnit XML: {e}"))
}

/// The area of a trial: the first part of its case id (`tools` of `tools/x@stdio`).
fn area(trial: &str) -> &str {
    trial.split('/').next().unwrap_or(trial)
}
