//! `--retries N`: after the parallel pass, trials that fail the run on their grade are run
//! again one at a time, and a trial whose grade changes between attempts is reported flaky
//! (it fails the run unless the baseline marks it known-flaky).

use super::runner::{self, Finished};
use super::verdict::{Grade, Verdict};
use super::{Case, RunContext, Transport, evaluate};
use crate::report::TrialResult;

impl RunContext {
    /// Re-runs, one at a time, every finished trial that fails the run on its grade (not on
    /// a snapshot, not a harness panic), up to `--retries` more times, and records what each
    /// attempt graded. A trial whose grade changes is flaky: it fails the run unless the
    /// baseline marks it known-flaky. One that grades the same every time keeps its verdict.
    pub(super) fn retry_all(
        &self,
        finished: &mut [Finished],
        jobs: &std::collections::HashMap<String, (Case, Transport)>,
        terse: bool,
    ) {
        let retries = self.opts.retries;
        let due: Vec<usize> = (0..finished.len())
            .filter(|&i| retries > 0 && fails_on_grade(&finished[i].result))
            .filter(|&i| jobs.contains_key(&finished[i].result.name))
            .collect();
        if due.is_empty() {
            return;
        }
        runner::print_retrying(due.len(), retries);
        for (n, i) in due.into_iter().enumerate() {
            let f = &mut finished[i];
            let (case, transport) = &jobs[&f.result.name];
            let first = f.result.grade;
            let mut attempts = vec![first];
            for _ in 0..retries {
                let eval = evaluate(
                    case,
                    *transport,
                    &self.client_cmd,
                    &self.harness,
                    self.strictness(),
                );
                attempts.push(eval.grade);
                if eval.grade != first {
                    break;
                }
            }
            settle(f, attempts);
            runner::print_retried(&f.result, terse, n + 1);
        }
    }
}

/// Whether a trial fails the run because its grade is not what its baseline expects (a
/// failure not baselined, or a baselined trial that now passes): the trials `--retries`
/// re-runs.
fn fails_on_grade(t: &TrialResult) -> bool {
    match t.verdict {
        Verdict::Stale => true,
        Verdict::Failed => !t.grade.is_acceptable() && !t.checks.is_empty(),
        _ => false,
    }
}

/// Records a retried trial's attempts and what they make of it.
fn settle(f: &mut Finished, attempts: Vec<Grade>) {
    let flaky = attempts.iter().any(|g| *g != attempts[0]);
    let t = &mut f.result;
    t.flaky = flaky;
    t.attempts = attempts;
    let shown = t.attempts_shown();
    let note = if !flaky {
        format!(
            "graded {} on all {} attempts: the same every time, not flaky",
            t.grade.as_str(),
            t.attempts.len()
        )
    } else if let Some(why) = &t.known_flaky {
        t.verdict = Verdict::KnownFlaky;
        format!(
            "flaky: its attempts graded {shown}; the baseline marks it known-flaky ({why}), so it does not fail the run"
        )
    } else {
        t.verdict = Verdict::Flaky;
        format!(
            "flaky: its attempts graded {shown}; a trial that changes grade between attempts fails the run unless the baseline marks it `{}: flaky: <reason>`",
            t.name
        )
    };
    t.details = format!("{note}\n\n{}", t.details).trim_end().to_owned();
    f.message = match t.verdict.fails_run() {
        true => Some(match f.message.take() {
            Some(m) => format!("{note}\n\n{m}"),
            None => note,
        }),
        false => None,
    };
}
