//! `--retries N`: after the parallel pass, trials that fail the run on their grade are run
//! again one at a time, and a trial whose grade changes between attempts is reported flaky
//! (it fails the run unless the baseline marks it known-flaky).

use std::collections::BTreeSet;

use super::baseline::judge::counts;
use super::runner::{self, Finished};
use super::verdict::{Grade, Strictness, Verdict};
use super::{RunContext, evaluate};
use crate::report::{CheckRecord, TrialResult};

impl RunContext {
    /// Re-runs, one at a time, every finished trial that fails the run on its checks (not on
    /// a snapshot, not a harness panic), up to `--retries` more times, each attempt the trial
    /// as its first attempt prepared it (scaled alike), and records what each attempt graded. A trial whose failing checks
    /// change is flaky: it fails the run unless the baseline marks it, or every check that
    /// changed, known-flaky. One that fails the same way every time keeps its verdict.
    pub(super) fn retry_all(&self, finished: &mut [Finished], terse: bool) {
        let retries = self.opts.retries;
        let strictness = self.strictness();
        let due: Vec<usize> = (0..finished.len())
            .filter(|&i| retries > 0 && fails_on_checks(&finished[i].result, strictness))
            .filter(|&i| finished[i].prepared.is_some())
            .collect();
        if due.is_empty() {
            return;
        }
        runner::print_retrying(due.len(), retries);
        for (n, i) in due.into_iter().enumerate() {
            let f = &mut finished[i];
            let Some(prepared) = f.prepared.clone() else {
                continue;
            };
            let first = failing(&f.result.checks, f.result.grade, strictness);
            let mut attempts = vec![f.result.grade];
            let mut changed: BTreeSet<(String, String)> = BTreeSet::new();
            for _ in 0..retries {
                let eval = evaluate(
                    &prepared.case,
                    prepared.transport,
                    &self.client_cmd,
                    &self.harness,
                    strictness,
                );
                attempts.push(eval.grade);
                let records: Vec<CheckRecord> =
                    eval.checks.iter().map(super::check_record).collect();
                let now = failing(&records, eval.grade, strictness);
                if now != first || eval.grade != f.result.grade {
                    changed = first.symmetric_difference(&now).cloned().collect();
                    break;
                }
            }
            let marks = self.baseline.flaky(&f.result.name);
            let whole = marks.iter().any(|m| m.checks.is_none());
            let unmarked: Vec<String> = changed
                .iter()
                .filter(|(name, id)| {
                    !marks
                        .iter()
                        .flat_map(|m| m.checks.iter().flatten())
                        .any(|k| k.names(name, id))
                })
                .map(|(name, id)| match id.is_empty() {
                    true => name.clone(),
                    false => id.clone(),
                })
                .collect();
            let known = whole || (!changed.is_empty() && unmarked.is_empty());
            let flaky = attempts.iter().any(|g| *g != attempts[0]) || !changed.is_empty();
            settle(f, attempts, flaky, known, &unmarked);
            runner::print_retried(&f.result, terse, n + 1);
        }
    }
}

/// The checks that fail a trial, as (name, requirement id).
fn failing(
    checks: &[CheckRecord],
    grade: Grade,
    strictness: Strictness,
) -> BTreeSet<(String, String)> {
    checks
        .iter()
        .filter(|c| counts(c, grade, strictness))
        .map(|c| (c.name.clone(), c.requirement_id.clone()))
        .collect()
}

/// Whether a trial fails the run on its checks (a failing check its baseline does not
/// expect, or a baselined check that now holds): the trials `--retries` re-runs.
fn fails_on_checks(t: &TrialResult, strictness: Strictness) -> bool {
    match t.verdict {
        Verdict::Stale => true,
        Verdict::Failed => t
            .checks
            .iter()
            .any(|c| c.baseline.is_none() && counts(c, t.grade, strictness)),
        _ => false,
    }
}

/// Records a retried trial's attempts and what they make of it.
fn settle(f: &mut Finished, attempts: Vec<Grade>, flaky: bool, known: bool, unmarked: &[String]) {
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
    } else if let Some(why) = t.known_flaky.as_ref().filter(|_| known) {
        t.verdict = Verdict::KnownFlaky;
        format!(
            "flaky: its attempts graded {shown}; the baseline marks it known-flaky ({why}), so it does not fail the run"
        )
    } else {
        t.verdict = Verdict::Flaky;
        let which = match (t.known_flaky.is_some(), unmarked.is_empty()) {
            (true, false) => format!(
                " (checks that changed and no mark names: {})",
                unmarked.join(", ")
            ),
            _ => String::new(),
        };
        format!(
            "flaky: its attempts graded {shown}; a trial whose failing checks change between attempts fails the run unless the baseline marks it, or each check that changed, known-flaky: `{} [<check>]: flaky: <reason>`{which}",
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
