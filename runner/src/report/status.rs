//! Where a trial sits in a report that puts failures first, and the facets a page filters
//! on (area, transport, level), read from the trial's name and case.
//!
//! The order is what a client author acts on first: a trial that fails the run (graded
//! `fail`, or `unimplemented`: the client lacks what the case needs), then one whose grade
//! changed between attempts, then a baseline entry that no longer fails (the baseline must
//! shrink), then a failure the baseline expects, then non-strict, then not run here, then
//! passes. A status named like a grade counts the trials of that grade that the baseline
//! does not expect, so the page's tiles and its grade tables agree.

use super::TrialResult;
use crate::conformance::verdict::{Grade, Verdict};

/// A trial's place in the failures-first order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    /// Fails the run: a failing grade not in the baseline, or a snapshot that differs.
    Fail,
    /// Fails the run: graded `unimplemented` (a step answered `unsupported_op`, the case
    /// needs an ability the adapter declared it lacks), and the baseline does not expect it.
    Unimplemented,
    /// Its grade changed between attempts (known to the baseline or not).
    Flaky,
    /// Baselined, but it now passes: the entry must go.
    Stale,
    /// A failing grade the baseline expects.
    Baselined,
    /// Only `should`-level checks failed.
    NonStrict,
    /// Not run here: no network namespace could be made on this machine.
    NotRun,
    /// Every check held.
    Pass,
}

impl Status {
    /// Every status, in report order.
    pub const ALL: [Status; 8] = [
        Status::Fail,
        Status::Unimplemented,
        Status::Flaky,
        Status::Stale,
        Status::Baselined,
        Status::NonStrict,
        Status::NotRun,
        Status::Pass,
    ];

    /// A trial's status.
    pub fn of(trial: &TrialResult) -> Status {
        match trial.verdict {
            Verdict::Failed if trial.grade == Grade::Unimplemented => Status::Unimplemented,
            Verdict::Failed => Status::Fail,
            Verdict::Flaky | Verdict::KnownFlaky => Status::Flaky,
            Verdict::Stale => Status::Stale,
            Verdict::ExpectedFailure => Status::Baselined,
            Verdict::Passed => match trial.grade {
                Grade::NonStrict => Status::NonStrict,
                Grade::Unimplemented => Status::Unimplemented,
                Grade::Fail => Status::Fail,
                Grade::Pass => Status::Pass,
                Grade::NotRun => Status::NotRun,
            },
        }
    }

    /// Its name on the page and in `data-status`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Fail => "fail",
            Status::Flaky => "flaky",
            Status::Stale => "stale",
            Status::Baselined => "baselined",
            Status::NonStrict => "non-strict",
            Status::Unimplemented => "unimplemented",
            Status::NotRun => "not-run",
            Status::Pass => "pass",
        }
    }

    /// What it means, for a tooltip and the legend.
    pub fn meaning(self) -> &'static str {
        match self {
            Status::Fail => "fails the run: a failing grade the baseline does not expect",
            Status::Flaky => "its grade changed between attempts",
            Status::Stale => "baselined but passing now: remove the baseline entry",
            Status::Baselined => "a failing grade the baseline expects",
            Status::NonStrict => "only should-level (or advisory) checks failed",
            Status::Unimplemented => {
                "fails the run: the client lacks what the case needs (an op it answers unsupported_op, an ability it declared it lacks)"
            }
            Status::NotRun => {
                "not run here: the case needs a network namespace and none could be made on this machine"
            }
            Status::Pass => "every check held",
        }
    }
}

/// Grades in report order, worst first.
pub const GRADES: [Grade; 5] = [
    Grade::Fail,
    Grade::Unimplemented,
    Grade::NonStrict,
    Grade::NotRun,
    Grade::Pass,
];

/// A trial's area: its case id's first path segment.
pub fn area(name: &str) -> &str {
    name.split(['/', '@']).next().unwrap_or(name)
}

/// A trial's transport: the word after the first `@` of its name.
pub fn transport(name: &str) -> &str {
    name.split('@').nth(1).unwrap_or("")
}

/// The program a re-run command starts, as its label says it: `cargo xtask`,
/// `mcp-harness`, or the command's first word.
pub fn rerun_label(rerun: &str) -> &str {
    if rerun.starts_with("cargo xtask ") {
        "cargo xtask"
    } else {
        rerun.split(' ').next().unwrap_or(rerun)
    }
}

/// The `mcp-harness run` form of a `cargo xtask conformance` re-run command, or `None` when
/// the command is not one.
pub fn installed_rerun(rerun: &str) -> Option<String> {
    rerun
        .strip_prefix("cargo xtask conformance ")
        .map(|rest| format!("mcp-harness run {rest}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_puts_what_fails_the_run_first() {
        let t = |grade, verdict| Status::of(&TrialResult::bare("a/b@stdio", grade, verdict));
        let mut seen = vec![
            t(Grade::Pass, Verdict::Passed),
            t(Grade::Unimplemented, Verdict::Failed),
            t(Grade::NonStrict, Verdict::Passed),
            t(Grade::NotRun, Verdict::Passed),
            t(Grade::Fail, Verdict::ExpectedFailure),
            t(Grade::Pass, Verdict::Stale),
            t(Grade::Pass, Verdict::Flaky),
            t(Grade::Fail, Verdict::Failed),
        ];
        seen.sort();
        assert_eq!(seen, Status::ALL);
    }

    #[test]
    fn names_give_area_and_transport() {
        assert_eq!(area("lists/tools-paged@https@2025-11-25"), "lists");
        assert_eq!(transport("lists/tools-paged@https@2025-11-25"), "https");
        assert_eq!(transport("lists/tools-paged@stdio"), "stdio");
        assert_eq!(
            installed_rerun("cargo xtask conformance --exact 'a b'").as_deref(),
            Some("mcp-harness run --exact 'a b'")
        );
    }
}
