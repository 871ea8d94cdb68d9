//! The failures of a run grouped by cause, most trials first, so that a first run against a
//! new adapter says what to fix first instead of listing hundreds of trials alphabetically.
//!
//! Only trials that fail the run are grouped, and each goes into exactly one group, so a
//! group's count is the trials that fixing its cause would turn (unless they also fail for
//! another reason). The groups come from what a run records, by these rules, in order:
//!
//! 1. **An era never offered**: no trial asked to speak `modern` (or `dual`) reported an
//!    `era` on a successful `connect` line, so the adapter ignores `MCP_HARNESS_ERA`; every
//!    failing trial of that era is one cause.
//! 2. **An op answered `unsupported_op`**: by op, and, for an op the adapter implements
//!    elsewhere in the run, by its message; when the message is an adapter kit's for a feature
//!    not declared (`... does not declare the feature elicitation, roots (...)`), by feature.
//! 3. **A declared limit**: a trial `unimplemented` because the case needs what the adapter
//!    declared its library lacks (`limits`), by the limits; never filed under the checks it
//!    failed, which only show the limit's consequence.
//! 4. **A failed requirement**: the trial's failing checks that fail it (`must`, `profile`
//!    with the profile on; any failing check when none of those does) and no baseline entry
//!    excuses, by requirement id.
//!
//! A trial with several features (rule 2) or requirements (rule 4) goes to the one most of the
//! remaining trials share (greedy, largest first).
//! 5. What is not about the client's checks: a trial not run here that `--require-ssrf`
//!    asked for, a transcript that differs from its snapshot, a stale baseline entry, a flaky
//!    trial.

use std::collections::{BTreeMap, BTreeSet};

use super::{RunResults, TrialResult};
use crate::conformance::baseline::write::fold;
use crate::conformance::verdict::{Grade, Verdict};
use mcp_harness_scenarios::model::{ErrorKind, Level};

/// One cause shared by some failing trials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// What is wrong, in one line.
    pub title: String,
    /// The one thing to fix.
    pub fix: String,
    /// The trials it explains, sorted.
    pub trials: Vec<String>,
}

/// A trial's key under rules 1 to 4, before the greedy choice among requirements.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Era(String),
    Op { op: String, message: Option<String> },
    Feature { op: String, name: String },
    Limit(String),
    NotRun(String),
    Requirement(String),
    Snapshot,
    Stale,
    Flaky,
}

/// The causes of the trials that fail `run`, the cause of most trials first.
pub fn causes(run: &RunResults) -> Vec<Cause> {
    let failing: Vec<&TrialResult> = run
        .trials
        .iter()
        .filter(|t| t.verdict.fails_run())
        .collect();
    let unoffered = unoffered_eras(run);
    let implemented = implemented_ops(run);
    let mut keyed: BTreeMap<Key, Vec<&TrialResult>> = BTreeMap::new();
    let mut by_requirements: Vec<(&TrialResult, BTreeSet<Key>)> = Vec::new();
    for t in failing {
        match fixed_key(t, &unoffered, &implemented) {
            Some(key) => keyed.entry(key).or_default().push(t),
            None => {
                let features = undeclared_features(t);
                let candidates = match features.is_empty() {
                    false => features,
                    true => failing_requirements(t, run.profile)
                        .into_iter()
                        .map(Key::Requirement)
                        .collect(),
                };
                by_requirements.push((t, candidates));
            }
        }
    }
    // Greedy: the cause most of the remaining trials share takes them all.
    while !by_requirements.is_empty() {
        let mut counts: BTreeMap<&Key, usize> = BTreeMap::new();
        for (_, keys) in &by_requirements {
            for key in keys {
                *counts.entry(key).or_default() += 1;
            }
        }
        let Some((best, _)) = counts
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
            .map(|(key, n)| ((*key).clone(), *n))
        else {
            // Failing trials with no failing check left (a harness panic): one group.
            for (t, _) in by_requirements.drain(..) {
                keyed
                    .entry(Key::Requirement(String::new()))
                    .or_default()
                    .push(t);
            }
            break;
        };
        let (taken, left): (Vec<_>, Vec<_>) = by_requirements
            .into_iter()
            .partition(|(_, keys)| keys.contains(&best));
        keyed
            .entry(best)
            .or_default()
            .extend(taken.into_iter().map(|(t, _)| t));
        by_requirements = left;
    }
    let mut out: Vec<Cause> = keyed
        .into_iter()
        .map(|(key, trials)| describe(&key, &trials))
        .collect();
    out.sort_by(|a, b| {
        b.trials
            .len()
            .cmp(&a.trials.len())
            .then(a.title.cmp(&b.title))
    });
    out
}

/// The eras (`modern`, `dual`) some trial asked for and no trial's `connect` answered with an
/// `era`: the adapter never read `MCP_HARNESS_ERA`.
fn unoffered_eras(run: &RunResults) -> BTreeSet<String> {
    let asked: BTreeSet<&str> = run
        .trials
        .iter()
        .filter_map(|t| t.era.as_deref())
        .filter(|e| *e != "legacy")
        .collect();
    asked
        .into_iter()
        .filter(|era| {
            !run.trials
                .iter()
                .filter(|t| t.era.as_deref() == Some(era))
                .flat_map(|t| &t.outcomes)
                .any(|o| {
                    o.op == "connect" && o.ok.as_ref().is_some_and(|ok| ok.get("era").is_some())
                })
        })
        .map(str::to_owned)
        .collect()
}

/// The ops that some step of the run answered other than with `unsupported_op`.
fn implemented_ops(run: &RunResults) -> BTreeSet<&str> {
    run.trials
        .iter()
        .flat_map(|t| &t.outcomes)
        .filter(|o| {
            o.ok.is_some()
                || o.error
                    .as_ref()
                    .is_some_and(|e| e.kind != ErrorKind::UnsupportedOp)
        })
        .map(|o| o.op.as_str())
        .collect()
}

/// Rules 1, 2, 3 and 5 for one trial; `None` leaves it to features or requirements (rule 4).
fn fixed_key(
    t: &TrialResult,
    unoffered: &BTreeSet<String>,
    implemented: &BTreeSet<&str>,
) -> Option<Key> {
    match t.verdict {
        Verdict::Stale => return Some(Key::Stale),
        Verdict::Flaky => return Some(Key::Flaky),
        // Failed only because `--require-ssrf` asked for trials this machine cannot run.
        _ if t.grade == Grade::NotRun => {
            return Some(Key::NotRun(t.not_run.clone().unwrap_or_default()));
        }
        _ if t.grade.is_acceptable() => return Some(Key::Snapshot),
        _ => {}
    }
    let unsupported = t.outcomes.iter().find(|o| {
        o.error
            .as_ref()
            .is_some_and(|e| e.kind == ErrorKind::UnsupportedOp)
    });
    if let Some(era) = t.era.as_ref().filter(|e| unoffered.contains(*e))
        && unsupported.is_none_or(|o| o.op != "connect")
    {
        return Some(Key::Era(era.clone()));
    }
    if unsupported.is_some() && !undeclared_features(t).is_empty() {
        return None;
    }
    if unsupported.is_none() && t.grade == Grade::Unimplemented && !t.limited.is_empty() {
        return Some(Key::Limit(t.limited.join(", ")));
    }
    unsupported.map(|o| Key::Op {
        op: o.op.clone(),
        message: implemented.contains(o.op.as_str()).then(|| {
            o.error
                .as_ref()
                .and_then(|e| e.message.clone())
                .unwrap_or_default()
        }),
    })
}

/// The features an adapter kit said the trial's first `unsupported_op` step needs and the
/// adapter does not declare (the kits' message: `... does not declare the feature a, b (...)`).
fn undeclared_features(t: &TrialResult) -> BTreeSet<Key> {
    let Some((op, message)) = t.outcomes.iter().find_map(|o| {
        let e = o.error.as_ref()?;
        if e.kind != ErrorKind::UnsupportedOp {
            return None;
        }
        Some((&o.op, e.message.as_deref()?))
    }) else {
        return BTreeSet::new();
    };
    let Some((_, rest)) = message.split_once("does not declare the feature ") else {
        return BTreeSet::new();
    };
    let list = rest.split(" (").next().unwrap_or(rest);
    list.split(", ")
        .filter(|name| !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase()))
        .map(|name| Key::Feature {
            op: op.clone(),
            name: name.to_owned(),
        })
        .collect()
}

/// The requirement ids of the checks that fail `t` and no baseline entry excuses.
fn failing_requirements(t: &TrialResult, profile: bool) -> BTreeSet<String> {
    let open: Vec<_> = t
        .checks
        .iter()
        .filter(|c| !c.passed && c.unjudged.is_none() && c.baseline.is_none())
        .collect();
    let strict = |l: Level| l == Level::Must || (profile && l == Level::Profile);
    let failing: Vec<_> = match open.iter().any(|c| strict(c.level)) {
        true => open.into_iter().filter(|c| strict(c.level)).collect(),
        false => open,
    };
    failing.iter().map(|c| c.requirement_id.clone()).collect()
}

fn describe(key: &Key, trials: &[&TrialResult]) -> Cause {
    let names: Vec<String> = trials.iter().map(|t| t.name.clone()).collect();
    let (title, fix) = match key {
        Key::Era(era) => (
            format!("era `{era}` never offered: no connect line reported an `era`"),
            format!(
                "read MCP_HARNESS_ERA: when it is `{era}`, connect as CLIENTS.md § Protocol eras says and report `\"era\"` on the connect line; if the library cannot, answer `connect` with `unsupported_op` there (the trials then grade unimplemented)"
            ),
        ),
        Key::Op { op, message: None } => (
            format!("op `{op}` never implemented: every `{op}` step answered unsupported_op"),
            format!(
                "implement `{op}` (CLIENTS.md § Plan steps), or, if the library cannot, baseline these trials with `[unimplemented]`"
            ),
        ),
        Key::Op {
            op,
            message: Some(message),
        } => (
            format!(
                "`{op}` answered unsupported_op here: {}",
                short(message, 160)
            ),
            "if the library has what these trials ask for, implement it in the adapter (a kit-based adapter declares a feature in one line: `features`, CLIENTS.md § Adapter kits); otherwise baseline them with `[unimplemented]`".to_owned(),
        ),
        Key::Feature { op, name } => (
            format!("feature `{name}` not declared: `{op}` answered unsupported_op"),
            format!(
                "if the library has {name}, declare it in the adapter kit's features (one line, CLIENTS.md § Adapter kits) and these trials are judged; if not, baseline them with `[unimplemented]`"
            ),
        ),
        Key::Limit(names) => (
            format!("limit `{names}` declared: these trials need what the adapter says its library cannot do"),
            format!(
                "nothing to fix if the library truly lacks it: baseline these trials with `[unimplemented]`; if it can, drop `{names}` from the connect line's `limits` (CLIENTS.md § Plan steps)"
            ),
        ),
        Key::NotRun(why) => (
            format!("not run here, and --require-ssrf asked for them: {why}"),
            "run where a network namespace can be made (root, passwordless `sudo -n`, or unprivileged user namespaces), or drop --require-ssrf".to_owned(),
        ),
        Key::Requirement(id) if id.is_empty() => (
            "the harness could not judge these trials".to_owned(),
            "read each trial's report below".to_owned(),
        ),
        Key::Requirement(id) => requirement_cause(id, trials),
        Key::Snapshot => (
            "the transcript differs from its snapshot".to_owned(),
            "review each diff; if the change is intended, re-run with --bless".to_owned(),
        ),
        Key::Stale => (
            "baseline entries that no longer fail".to_owned(),
            "remove them (or rewrite the file with --baseline F --write-baseline F)".to_owned(),
        ),
        Key::Flaky => (
            "flaky: the grade changed between attempts".to_owned(),
            "find what the grade depends on, or mark the trial `flaky: <why>` in the baseline"
                .to_owned(),
        ),
    };
    Cause {
        title,
        fix,
        trials: names,
    }
}

/// A failed requirement: its id, level and sentence, and one failing check of it as seen.
fn requirement_cause(id: &str, trials: &[&TrialResult]) -> (String, String) {
    let check = trials
        .iter()
        .flat_map(|t| &t.checks)
        .find(|c| !c.passed && c.unjudged.is_none() && c.requirement_id == id);
    match check {
        None => (
            format!("{id} failed"),
            "read the trials' reports".to_owned(),
        ),
        Some(c) => (
            format!("{id} [{}] {}", c.level.as_str(), short(&c.requirement, 200)),
            format!(
                "meet it ({}); e.g. {}: expected {}, got {}",
                c.source,
                short(&c.name, 120),
                short(&c.expected, 160),
                short(&c.actual, 160)
            ),
        ),
    }
}

/// `text` on one line, cut to `max` characters with `…`.
fn short(text: &str, max: usize) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &one[..at]),
        None => one,
    }
}

/// A cause's trials folded into `case@*` patterns where they cover whole cases, transports
/// or revisions of `run`.
pub fn folded(cause: &Cause, run: &RunResults) -> Vec<String> {
    let known: Vec<String> = run.trials.iter().map(|t| t.name.clone()).collect();
    let mine: BTreeSet<String> = cause.trials.iter().cloned().collect();
    fold(&mine, &known)
}

/// The console's block: each cause with its count, what to fix and its trials (folded, the
/// first few). Empty when nothing fails the run.
pub fn render_text(run: &RunResults) -> String {
    let causes = causes(run);
    if causes.is_empty() {
        return String::new();
    }
    let failing: usize = causes.iter().map(|c| c.trials.len()).sum();
    let mut out = format!(
        "what to fix first: {failing} trial{} fail{} the run, {} cause{} (each trial counted once, under the cause most trials share):\n",
        if failing == 1 { "" } else { "s" },
        if failing == 1 { "s" } else { "" },
        causes.len(),
        if causes.len() == 1 { "" } else { "s" },
    );
    for (i, cause) in causes.iter().enumerate() {
        let n = cause.trials.len();
        out.push_str(&format!(
            "\n{:>3}. {n} trial{}: {}\n     fix: {}\n",
            i + 1,
            if n == 1 { "" } else { "s" },
            cause.title,
            cause.fix
        ));
        let folded = folded(cause, run);
        let shown: Vec<&str> = folded.iter().take(6).map(String::as_str).collect();
        let more = match folded.len().saturating_sub(shown.len()) {
            0 => String::new(),
            k => format!(" and {k} more"),
        };
        out.push_str(&format!("     trials: {}{more}\n", shown.join(" ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::verdict::Grade;
    use crate::report::{CheckRecord, ErrorRecord, OutcomeRecord};
    use serde_json::json;

    fn failing(name: &str, ids: &[&str]) -> TrialResult {
        TrialResult {
            checks: ids
                .iter()
                .map(|id| CheckRecord {
                    requirement_id: (*id).into(),
                    ..CheckRecord::bare(&format!("check of {id}"), Level::Must, false)
                })
                .collect(),
            ..TrialResult::bare(name, Grade::Fail, Verdict::Failed)
        }
    }

    fn connect(ok: Option<serde_json::Value>, kind: Option<ErrorKind>) -> OutcomeRecord {
        OutcomeRecord {
            step: 0,
            op: "connect".into(),
            ok,
            error: kind.map(|kind| ErrorRecord {
                kind,
                code: None,
                status: None,
                message: Some("no elicitation".into()),
            }),
            missing: false,
        }
    }

    fn run(trials: Vec<TrialResult>) -> RunResults {
        RunResults {
            client: "c".into(),
            profile: true,
            time_scale: 1.0,
            seconds: 1.0,
            netns: None,
            trials,
        }
    }

    #[test]
    fn a_shared_requirement_takes_the_trials_that_fail_it_and_the_largest_comes_first() {
        let r = run(vec![
            failing("a@stdio", &["X-1", "Y-1"]),
            failing("b@stdio", &["X-1"]),
            failing("c@stdio", &["Y-1"]),
            failing("d@stdio", &["X-1"]),
            TrialResult::bare("e@stdio", Grade::Pass, Verdict::Passed),
        ]);
        let got = causes(&r);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].trials, ["a@stdio", "b@stdio", "d@stdio"]);
        assert!(got[0].title.starts_with("X-1 [must]"));
        assert_eq!(got[1].trials, ["c@stdio"]);
    }

    #[test]
    fn an_era_no_connect_ever_reported_is_one_cause() {
        let modern = |name: &str, ok| TrialResult {
            era: Some("modern".into()),
            outcomes: vec![connect(ok, None)],
            ..failing(name, &["ERA-1", "ERA-2"])
        };
        let r = run(vec![
            modern("m1@stdio", None),
            modern("m2@stdio", Some(json!({"protocolVersion": "x"}))),
            failing("l@stdio", &["ERA-1"]),
        ]);
        let got = causes(&r);
        assert!(
            got[0].title.starts_with("era `modern` never offered"),
            "{got:?}"
        );
        assert_eq!(got[0].trials, ["m1@stdio", "m2@stdio"]);
        // Once one connect reports the era, the trials are judged by their requirements.
        let offered = run(vec![
            modern("m1@stdio", Some(json!({"era": "modern"}))),
            modern("m2@stdio", None),
        ]);
        assert!(causes(&offered)[0].title.starts_with("ERA-1"));
    }

    #[test]
    fn an_unsupported_op_groups_by_op_and_by_message_where_the_op_works_elsewhere() {
        let refused = |name: &str| TrialResult {
            grade: Grade::Unimplemented,
            outcomes: vec![connect(None, Some(ErrorKind::UnsupportedOp))],
            ..failing(name, &["ELIC-1"])
        };
        let never = run(vec![refused("a@stdio"), refused("b@stdio")]);
        assert!(
            causes(&never)[0]
                .title
                .starts_with("op `connect` never implemented")
        );
        let elsewhere = TrialResult {
            outcomes: vec![connect(Some(json!({})), None)],
            ..TrialResult::bare("c@stdio", Grade::Pass, Verdict::Passed)
        };
        let some = run(vec![refused("a@stdio"), refused("b@stdio"), elsewhere]);
        let got = causes(&some);
        assert_eq!(got.len(), 1);
        assert!(got[0].title.contains("no elicitation"), "{got:?}");
    }

    #[test]
    fn undeclared_features_group_by_the_feature_most_trials_lack() {
        let refused = |name: &str, features: &str| {
            let mut t = TrialResult {
                grade: Grade::Unimplemented,
                outcomes: vec![connect(None, Some(ErrorKind::UnsupportedOp))],
                ..failing(name, &["ELIC-1"])
            };
            t.outcomes[0].error.as_mut().unwrap().message = Some(format!(
                "this adapter does not declare the feature {features} (the kit's features)"
            ));
            t
        };
        let r = run(vec![
            refused("a@stdio", "elicitation"),
            refused("b@stdio", "roots, elicitation"),
            refused("c@stdio", "roots"),
            refused("d@stdio", "elicitation, sampling"),
        ]);
        let got = causes(&r);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(
            got[0]
                .title
                .starts_with("feature `elicitation` not declared")
        );
        assert_eq!(got[0].trials, ["a@stdio", "b@stdio", "d@stdio"]);
        assert_eq!(got[1].trials, ["c@stdio"]);
    }

    #[test]
    fn a_declared_limit_is_its_own_cause_not_the_checks_it_fails() {
        let limited = |name: &str| {
            let mut t = failing(name, &["ADV-HS-1"]);
            t.grade = Grade::Unimplemented;
            t.limited = vec!["choose_version".into()];
            t
        };
        let r = run(vec![
            limited("v@stdio"),
            limited("v@https"),
            failing("x@stdio", &["ADV-HS-1"]),
        ]);
        let got = causes(&r);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(
            got[0].title.starts_with("limit `choose_version` declared"),
            "{got:?}"
        );
        assert_eq!(got[0].trials, ["v@stdio", "v@https"]);
        assert!(got[1].title.starts_with("ADV-HS-1"));
    }

    #[test]
    fn a_trial_failed_by_require_ssrf_is_not_run_here_not_a_snapshot() {
        let t = TrialResult {
            not_run: Some("no way".into()),
            ..TrialResult::bare("ssrf/x@https", Grade::NotRun, Verdict::Failed)
        };
        let got = causes(&run(vec![t]));
        assert_eq!(got.len(), 1);
        assert!(got[0].title.starts_with("not run here"), "{got:?}");
        assert!(got[0].title.contains("no way"), "{got:?}");
    }

    #[test]
    fn baselined_checks_and_passing_trials_are_not_causes() {
        let mut excused = failing("a@stdio", &["X-1", "Y-1"]);
        excused.checks[0].baseline = Some("known".into());
        let r = run(vec![
            excused,
            TrialResult::bare("b@stdio", Grade::Fail, Verdict::ExpectedFailure),
        ]);
        let got = causes(&r);
        assert_eq!(got.len(), 1);
        assert!(got[0].title.starts_with("Y-1"));
        assert!(render_text(&run(vec![])).is_empty());
    }
}
