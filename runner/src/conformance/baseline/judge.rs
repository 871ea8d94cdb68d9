//! What a baseline makes of one graded trial: which failing checks it expects, which it does
//! not (a new failure), and which of its entries name a check that holds now (stale).

use super::{Baseline, Entry, Key};
use crate::conformance::checks::CheckResult;
use crate::conformance::verdict::{Grade, Strictness, Verdict};
use crate::report::CheckRecord;

/// A baseline's word on one trial.
#[derive(Debug, Default)]
pub struct Judgement<'a> {
    /// The expected-failure entries that apply to the trial.
    pub applied: Vec<&'a Entry>,
    /// For each check, in order, the entry that expects it to fail, if one does.
    pub excused: Vec<Option<&'a Entry>>,
    /// The checks that fail the trial and no entry expects (their indices).
    pub unexcused: Vec<usize>,
    /// The entries that name a check that ran and holds, with the keys that did (none for a
    /// per-trial entry: its trial no longer fails).
    pub stale: Vec<(&'a Entry, Vec<Key>)>,
    /// The lines of the entries that named some check of this trial (for
    /// [`Baseline::unused`]).
    pub named: Vec<usize>,
}

impl Judgement<'_> {
    /// Whether the trial fails in a way the baseline expects, and only that way.
    pub fn expected(&self) -> bool {
        self.unexcused.is_empty()
            && self.stale.is_empty()
            && self.excused.iter().any(Option::is_some)
    }

    /// What the run makes of the trial, from its grade and this judgement of its checks; the
    /// message says why it fails the run, when it does. `details` is the trial's failure
    /// report; `snapshot` compares the snapshot, only for a trial nothing fails.
    pub fn verdict(
        &self,
        grade: Grade,
        checks: &[CheckResult],
        details: &str,
        snapshot: impl FnOnce() -> Result<(), String>,
    ) -> (Verdict, Option<String>) {
        if !self.unexcused.is_empty() {
            if self.applied.is_empty() {
                return (Verdict::Failed, Some(details.to_owned()));
            }
            let new: Vec<String> = self
                .unexcused
                .iter()
                .map(|&i| {
                    let c = &checks[i];
                    format!(
                        "  ✗ {} [{}] ({})",
                        c.name,
                        c.level.as_str(),
                        c.requirement_id
                    )
                })
                .collect();
            let entries: Vec<String> = self.applied.iter().map(|e| e.describe()).collect();
            return (
                Verdict::Failed,
                Some(format!(
                    "new failure in a baselined trial: the baseline ({}) does not name\n{}\n\n{details}",
                    entries.join(", "),
                    new.join("\n")
                )),
            );
        }
        if !self.stale.is_empty() {
            let stale: Vec<String> = self
                .stale
                .iter()
                .map(|(e, held)| match held.is_empty() {
                    true => format!(
                        "stale baseline entry ({}: {}): the trial now grades {}; remove the entry",
                        e.describe(),
                        e.reason,
                        grade.as_str()
                    ),
                    false => format!(
                        "stale baseline entry ({}: {}): [{}] held in this trial; remove {} from the entry (or narrow its trials)",
                        e.describe(),
                        e.reason,
                        held.iter().map(Key::written).collect::<Vec<_>>().join(", "),
                        if held.len() == 1 { "it" } else { "them" }
                    ),
                })
                .collect();
            return (Verdict::Stale, Some(stale.join("\n")));
        }
        match self.expected() {
            true => (Verdict::ExpectedFailure, None),
            false => match snapshot() {
                Ok(()) => (Verdict::Passed, None),
                Err(diff) => (Verdict::Failed, Some(diff)),
            },
        }
    }

    /// The reasons of the entries that expected a failure here or went stale, once each.
    pub fn reasons(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        let used = self.excused.iter().flatten().copied();
        for e in used.chain(self.stale.iter().map(|(e, _)| *e)) {
            if !out.contains(&e.reason.as_str()) {
                out.push(&e.reason);
            }
        }
        out
    }
}

/// Whether a check fails the trial: any failed check of an `unimplemented` trial, else a
/// failed check whose level fails trials under `strictness`.
pub fn counts(check: &CheckRecord, grade: Grade, strictness: Strictness) -> bool {
    !check.passed && (grade == Grade::Unimplemented || strictness.fails(check.level))
}

/// Judges the trial `trial`, graded `grade` with `checks`, against `baseline`.
pub fn judge<'a>(
    baseline: &'a Baseline,
    trial: &str,
    grade: Grade,
    checks: &[CheckRecord],
    strictness: Strictness,
) -> Judgement<'a> {
    let applied = baseline.expected(trial);
    let failing: Vec<bool> = checks
        .iter()
        .map(|c| counts(c, grade, strictness))
        .collect();
    let key_covers = |key: &Key, c: &CheckRecord| match key {
        Key::Unimplemented => grade == Grade::Unimplemented,
        key => key.names(&c.name, &c.requirement_id),
    };
    let covers = |e: &Entry, c: &CheckRecord| match &e.checks {
        None => true,
        Some(keys) => keys.iter().any(|k| key_covers(k, c)),
    };
    let excused: Vec<Option<&Entry>> = checks
        .iter()
        .zip(&failing)
        .map(|(c, &fails)| {
            fails
                .then(|| applied.iter().copied().find(|e| covers(e, c)))
                .flatten()
        })
        .collect();
    let unexcused = (0..checks.len())
        .filter(|&i| failing[i] && excused[i].is_none())
        .collect();
    let mut stale = Vec::new();
    let mut named = Vec::new();
    for e in &applied {
        let Some(keys) = &e.checks else {
            // A per-trial entry names every check, and is stale once none fails.
            named.push(e.line);
            if !failing.iter().any(|f| *f) {
                stale.push((*e, Vec::new()));
            }
            continue;
        };
        let mut held = Vec::new();
        for key in keys {
            let ran = *key == Key::Unimplemented || checks.iter().any(|c| key_covers(key, c));
            let fails = checks
                .iter()
                .zip(&failing)
                .any(|(c, f)| *f && key_covers(key, c));
            if ran && !named.contains(&e.line) {
                named.push(e.line);
            }
            if ran && !fails {
                held.push(key.clone());
            }
        }
        if !held.is_empty() {
            stale.push((*e, held));
        }
    }
    Judgement {
        applied,
        excused,
        unexcused,
        stale,
        named,
    }
}
