//! The proof that `check` grades a recording as the live run graded the trial
//! (`conformance --recheck`): each trial's own transcript is written out as a recording,
//! read back and graded offline, and every always-on wire verdict is compared with the live
//! one. Compared are the checks that judged something, on either side: the same requirement
//! and check, pass or fail alike, with the same actual. A check that judged nothing (a pass
//! by default live, "not observed" offline) has no verdict to compare; AUTH-08 judges the
//! token the harness handed over, which a recording cannot know, and is left out.

use std::collections::BTreeMap;

use mcp_harness_scenarios::transcript::Record;

use crate::conformance::checks::CheckResult;
use crate::conformance::trial::TrialRun;

/// Whether `id`'s verdicts are compared: every always-on wire rule `check` grades (AUTH-08,
/// which judges the handed-over token, is not one).
fn compared(id: &str) -> bool {
    super::WIRE_RULES.iter().any(|(rule, ..)| *rule == id)
}

/// One verdict, keyed by requirement and check name.
type Verdicts = BTreeMap<(String, String), (bool, String)>;

fn judged<'a>(checks: impl Iterator<Item = &'a CheckResult>) -> Verdicts {
    checks
        .filter(|c| c.always_on && c.observed && compared(&c.requirement_id))
        .map(|c| {
            (
                (c.requirement_id.clone(), c.name.clone()),
                (c.passed, c.actual.clone()),
            )
        })
        .collect()
}

/// Re-grades `run`'s transcript offline; `Err` lists every verdict that differs from
/// `live`'s, each naming the requirement. `Ok` counts the verdicts compared.
pub fn recheck(run: &TrialRun, live: &[CheckResult]) -> Result<usize, Vec<String>> {
    let records: &[Record] = run.records.as_deref().unwrap_or_default();
    let mut text = String::new();
    for r in records {
        match serde_json::to_string(r) {
            Ok(line) => {
                text.push_str(&line);
                text.push('\n');
            }
            Err(e) => return Err(vec![format!("a record does not serialize: {e}")]),
        }
    }
    let read = super::read::parse("the trial's transcript", &text).map_err(|e| vec![e])?;
    let offline = super::grade(&read.0, None);
    let live = judged(live.iter());
    let off = judged(
        offline
            .checks
            .iter()
            .filter(|g| g.verdict != super::Verdict::NotObserved)
            .map(|g| &g.check),
    );
    let shown = |v: Option<&(bool, String)>| match v {
        None => "not judged".to_owned(),
        Some((true, _)) => "pass".to_owned(),
        Some((false, actual)) => format!("fail ({actual})"),
    };
    let mut differences = Vec::new();
    for key in live.keys().chain(off.keys()) {
        let (a, b) = (live.get(key), off.get(key));
        if a != b && !differences.iter().any(|(k, _)| k == key) {
            differences.push((key.clone(), (shown(a), shown(b))));
        }
    }
    if differences.is_empty() {
        return Ok(live.len());
    }
    Err(differences
        .into_iter()
        .map(|((id, name), (live, offline))| {
            format!("{id} ({name}): live {live}, offline {offline}")
        })
        .collect())
}

/// `--recheck`'s tally over a run, shared by its trials: trials compared, verdicts
/// compared, trials that differ.
#[derive(Debug, Default)]
pub struct Tally(std::sync::Mutex<(usize, usize, usize)>);

impl Tally {
    /// Re-grades trial `name`'s transcript offline against its live `checks`; the message
    /// that fails the trial, naming every difference, if any.
    pub fn recheck(&self, name: &str, run: &TrialRun, checks: &[CheckResult]) -> Option<String> {
        let outcome = recheck(run, checks);
        let mut tally = self.0.lock().unwrap_or_else(|e| e.into_inner());
        tally.0 += 1;
        match outcome {
            Ok(n) => {
                tally.1 += n;
                None
            }
            Err(differences) => {
                tally.2 += 1;
                Some(format!(
                    "{}{name}: the offline grading of this trial's transcript (mcp-harness check) differs from the live run:\n  {}",
                    crate::report::causes::RECHECK,
                    differences.join("\n  "),
                ))
            }
        }
    }

    /// Trials compared, verdicts compared, trials that differ.
    pub fn counts(&self) -> (usize, usize, usize) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_harness_scenarios::model::Transport;
    use mcp_harness_scenarios::transcript::Event;
    use serde_json::json;

    fn received(message: serde_json::Value) -> Record {
        Record {
            pid: 1,
            at_ms: None,
            event: Event::Received { message },
        }
    }

    #[test]
    fn a_differing_verdict_fails_naming_the_requirement() {
        let records = vec![
            received(json!({"jsonrpc":"2.0","id":1,"method":"ping"})),
            received(json!({"jsonrpc":"2.0","id":2,"method":"ping"})),
        ];
        let run = super::super::trial_run(records.clone());
        let case = super::super::synthetic_case(&records, "2025-03-26");
        let live = crate::conformance::checks::evaluate_wire_only(&case, Transport::Stdio, &run);
        assert!(matches!(recheck(&run, &live), Ok(n) if n >= 4));
        // Pass against fail.
        let mut failed = live.clone();
        let at = failed
            .iter()
            .position(|c| c.requirement_id == "JSON-01")
            .unwrap();
        failed[at].passed = false;
        failed[at].actual = "the id null".into();
        let differences = recheck(&run, &failed).unwrap_err();
        assert_eq!(
            differences,
            [
                "JSON-01 (request ids are strings or integers): live fail (the id null), offline pass"
            ]
        );
        // A check made live and not offline, and the reverse.
        let mut renamed = live.clone();
        let at = renamed
            .iter()
            .position(|c| c.requirement_id == "JSON-02")
            .unwrap();
        renamed[at].requirement_id = "JSON-03".into();
        let differences = recheck(&run, &renamed).unwrap_err();
        assert_eq!(differences.len(), 2, "{differences:?}");
        assert!(
            differences[0].starts_with("JSON-03") && differences[0].contains("offline not judged")
        );
        assert!(
            differences[1].starts_with("JSON-02") && differences[1].contains("live not judged")
        );
    }
}
