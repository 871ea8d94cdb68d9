//! `--write-baseline FILE`: a baseline in the per-check form from a run, one line per
//! behaviour. Each failing check keeps the reason of the entry that expected it (so writing
//! over the file a run read migrates an old per-trial baseline); the trials one reason
//! covers are folded into `case@*` patterns where they are every trial of a case, of one
//! transport or of one revision.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::judge::counts;
use super::{Baseline, Entry, Key, glob_matches};
use crate::conformance::verdict::{Grade, Strictness, level_label};
use crate::report::{CheckRecord, RunResults, TrialResult};

/// The comment block a baseline file opens with: its leading `#` lines up to the first blank
/// line, each ending in a newline (none when the file opens with an entry). A note that an
/// earlier rewrite came from a partial run is not kept: `render` writes its own.
pub fn header(text: &str) -> Option<String> {
    let block: Vec<&str> = text.lines().take_while(|l| l.starts_with('#')).collect();
    // A block an entry follows at once is that entry's comment, not a header.
    let after = text.lines().nth(block.len());
    if block.is_empty() || after.is_some_and(|l| !l.trim().is_empty()) {
        return None;
    }
    let kept = block
        .iter()
        .filter(|l| !l.starts_with("# Written from a partial run"));
    Some(kept.map(|l| format!("{l}\n")).collect())
}

/// What a rewrite starts from besides the run: the baseline it read, every trial name, and
/// how the run graded.
pub struct Rewrite<'a> {
    /// The baseline the run was judged by (its flaky marks and the entries of trials that
    /// did not run are kept).
    pub old: &'a Baseline,
    /// The name of every trial of the suite.
    pub known: &'a [String],
    /// The filters or shard the run was limited to (empty: the whole suite).
    pub selection: &'a str,
    /// The comment block the file being rewritten opened with (see [`header`]).
    pub header: Option<&'a str>,
    /// How the run graded, so the written checks are those that failed their trials.
    pub strictness: Strictness,
}

/// A baseline for the failing checks of `results`: one line per reason and set of trials,
/// sorted by trial. A check an entry expected keeps that entry's reason; a new one gets its
/// requirement and source, for a person to turn into what the client does.
pub fn render(results: &RunResults, how: &Rewrite<'_>) -> String {
    let mut out = String::new();
    match how.header {
        Some(header) => out.push_str(header),
        None => {
            let _ = writeln!(
                out,
                "# Expected failures of {}, written by `cargo xtask conformance --write-baseline`.",
                one_line(&results.client)
            );
            let _ = writeln!(
                out,
                "# One line per behaviour: `<trials> [<failing checks>]: <reason>`; the comment above\n\
                 # each names its checks. Review every entry: each must name a real deviation of the client."
            );
        }
    }
    if !how.selection.is_empty() {
        let _ = writeln!(out, "# Written from a partial run ({}).", how.selection);
    }
    let mut lines: Vec<(String, String)> = Vec::new();
    for (reason, trials, keys, shown) in grouped(results, how.old, how.strictness) {
        let patterns = fold(&trials, how.known).join(" ");
        let keys: Vec<String> = keys.iter().map(Key::written).collect();
        let line = format!("{patterns} [{}]: {}", keys.join(", "), one_line(&reason));
        lines.push((line, format!("# {}", shown.join("; "))));
    }
    // Every known-flaky mark (a person's finding, not this run's) is kept as it was; so is
    // an expected failure's reach over the trials that did not run: the patterns of an entry
    // that match a trial this run left out (the trials that ran have lines of their own).
    // A trial not run here (no network namespace) counts as left out: its entries stay.
    let ran = results.judged();
    for e in &how.old.entries {
        let comment = |fallback: &str| match e.comment.is_empty() {
            true => fallback.to_owned(),
            false => e.comment.join("\n"),
        };
        if e.flaky {
            lines.push((written(e), comment("# known flaky")));
            continue;
        }
        let unrun = |p: &String| {
            how.known
                .iter()
                .any(|k| glob_matches(p, k) && !ran.contains(k.as_str()))
        };
        let trials: Vec<String> = e.trials.iter().filter(|p| unrun(p)).cloned().collect();
        if !trials.is_empty() {
            let kept = Entry {
                trials,
                ..e.clone()
            };
            lines.push((written(&kept), comment("# kept: trials this run left out")));
        }
    }
    lines.sort();
    for (line, comment) in lines {
        let _ = writeln!(out, "\n{comment}\n{line}");
    }
    out
}

/// An entry as a baseline writes it.
fn written(e: &Entry) -> String {
    let keys = match &e.checks {
        Some(keys) => format!(
            " [{}]",
            keys.iter().map(Key::written).collect::<Vec<_>>().join(", ")
        ),
        None => String::new(),
    };
    let flaky = if e.flaky { "flaky: " } else { "" };
    format!(
        "{}{keys}: {flaky}{}",
        e.trials.join(" "),
        one_line(&e.reason)
    )
}

/// One group per reason and set of trials: the reason, the trials, the keys, and the checks
/// the keys stand for as a comment shows them (`name [level]`).
type Group = (String, BTreeSet<String>, Vec<Key>, Vec<String>);

/// The failing checks of a run, grouped so that one behaviour is one group. A check a
/// known-flaky mark of `old` names (or any check of a trial marked whole) is left out: the
/// mark says it may fail, and an expected failure would go stale the next time it passes.
fn grouped(results: &RunResults, old: &Baseline, strictness: Strictness) -> Vec<Group> {
    // (key, reason) -> the trials, and the check names shown for the key.
    let mut by_key: BTreeMap<(Key, String), (BTreeSet<String>, Vec<String>)> = BTreeMap::new();
    for t in &results.trials {
        let marks = old.flaky(&t.name);
        if marks.iter().any(|m| m.checks.is_none()) {
            continue;
        }
        let marked = |c: &CheckRecord| {
            marks
                .iter()
                .flat_map(|m| m.checks.iter().flatten())
                .any(|k| k.names(&c.name, &c.requirement_id))
        };
        for (key, reason, shown) in failing(t, strictness, results.profile, &marked) {
            let slot = by_key.entry((key, reason)).or_default();
            slot.0.insert(t.name.clone());
            if !slot.1.contains(&shown) {
                slot.1.push(shown);
            }
        }
    }
    // Keys whose reason and trials are the same share one line.
    type Line = (String, BTreeSet<String>);
    let mut by_line: BTreeMap<Line, (Vec<Key>, Vec<String>)> = BTreeMap::new();
    for ((key, reason), (trials, shown)) in by_key {
        let slot = by_line.entry((reason, trials)).or_default();
        slot.0.push(key);
        slot.1.extend(shown);
    }
    by_line
        .into_iter()
        .map(|((reason, trials), (keys, mut shown))| {
            if shown.len() > 4 {
                let more = shown.len() - 3;
                shown.truncate(3);
                shown.push(format!("and {more} more"));
            }
            (reason, trials, keys, shown)
        })
        .collect()
}

/// The checks that fail one trial, each as the key that names it, its reason and how a
/// comment shows it.
fn failing(
    t: &TrialResult,
    strictness: Strictness,
    profile: bool,
    marked: &dyn Fn(&CheckRecord) -> bool,
) -> Vec<(Key, String, String)> {
    let fails = |c: &CheckRecord| counts(c, t.grade, strictness) && !marked(c);
    if t.grade == Grade::Unimplemented {
        // One line for the trial, whichever checks failed for want of the operation.
        let reason = t
            .checks
            .iter()
            .filter(|c| fails(c))
            .find_map(|c| c.baseline.clone());
        let reason = reason.unwrap_or_else(|| {
            "unimplemented: the client answered unsupported_op or declared a limit the case needs"
                .to_owned()
        });
        return vec![(Key::Unimplemented, reason, "unimplemented".to_owned())];
    }
    let mut out: Vec<(Key, String, String)> = Vec::new();
    for c in t.checks.iter().filter(|c| fails(c)) {
        // An id that a check holding in this trial cites too would hide that check's
        // regression: the failing check is named instead.
        let shared = t
            .checks
            .iter()
            .any(|o| o.requirement_id == c.requirement_id && !fails(o));
        let key = match c.requirement_id.is_empty() || shared {
            true => Key::Name(shortest_name(&c.name, &t.checks)),
            false => Key::Requirement(c.requirement_id.clone()),
        };
        let reason = c
            .baseline
            .clone()
            .unwrap_or_else(|| format!("misses {}", c.source));
        let shown = format!("{} [{}]", one_line(&c.name), level_label(c.level, profile));
        if !out.iter().any(|(k, r, _)| *k == key && *r == reason) {
            out.push((key, reason, shown));
        }
    }
    out
}

/// The fewest first words of `name` that name no other check of `checks` (at least two:
/// `step 1` rather than `step`).
fn shortest_name(name: &str, checks: &[CheckRecord]) -> String {
    let ends = name
        .char_indices()
        .filter(|(_, c)| *c == ' ')
        .map(|(i, _)| i)
        .chain([name.len()]);
    for end in ends.skip(1) {
        let key = Key::Name(name[..end].to_owned());
        if checks
            .iter()
            .filter(|o| key.names(&o.name, &o.requirement_id))
            .count()
            == 1
        {
            return name[..end].to_owned();
        }
    }
    name.to_owned()
}

/// The shortest list of names and patterns that matches exactly `trials` among `known`:
/// per case, `case@*` for all its trials, `case@<transport>*` for one transport's,
/// `case@*@<revision>` for one revision's, else the names.
pub fn fold(trials: &BTreeSet<String>, known: &[String]) -> Vec<String> {
    let mut by_case: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for t in trials {
        let case = t.split_once('@').map_or(t.as_str(), |(c, _)| c);
        by_case.entry(case).or_default().insert(t);
    }
    let mut out = Vec::new();
    for (case, mine) in by_case {
        let all: Vec<&str> = known
            .iter()
            .map(String::as_str)
            .filter(|k| k.split_once('@').is_some_and(|(c, _)| c == case))
            .collect();
        let exact = |pattern: &str| {
            let hit: Vec<&&str> = all.iter().filter(|k| glob_matches(pattern, k)).collect();
            !hit.is_empty() && hit.iter().all(|k| mine.contains(**k))
        };
        let whole = format!("{case}@*");
        if exact(&whole) && all.len() == mine.len() {
            out.push(whole);
            continue;
        }
        let mut left: BTreeSet<&str> = mine.clone();
        let mut candidates: BTreeSet<String> = BTreeSet::new();
        for t in &mine {
            let mut parts = t.splitn(3, '@').skip(1);
            let (transport, revision) = (parts.next(), parts.next());
            if let (Some(tr), Some(_)) = (transport, revision) {
                candidates.insert(format!("{case}@{tr}*"));
            }
            if let Some(rev) = revision {
                candidates.insert(format!("{case}@*@{rev}"));
            }
        }
        for pattern in candidates {
            let covers: Vec<&str> = all
                .iter()
                .copied()
                .filter(|k| glob_matches(&pattern, k))
                .collect();
            if exact(&pattern) && covers.len() > 1 && covers.iter().any(|k| left.contains(k)) {
                for k in covers {
                    left.remove(k);
                }
                out.push(pattern);
            }
        }
        out.extend(left.into_iter().map(str::to_owned));
    }
    out
}

/// Text on one line, every run of white space one space (a baseline entry or comment cannot
/// span lines).
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
