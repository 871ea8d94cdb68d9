//! The expected-failures baseline of one client: strict both ways. A trial that fails (or
//! is unimplemented) without an entry fails the run; an entry whose trial now passes fails
//! as stale; an entry naming no trial at all is an error before anything runs.
//!
//! Format, one entry a line: `<case-id>@<transport>: <reason>`, where the reason names the
//! requirement the client misses. Blank lines and lines starting with `#` are ignored.
//!
//! A known-flaky entry, `<case-id>@<transport>: flaky: <reason>`, says something else: the
//! trial is expected to pass, but is known to change grade from one run to the next (the
//! reason says why). Under `--retries N` a trial so marked whose grade changes between
//! attempts is reported flaky without failing the run; one that fails the same way on every
//! attempt still fails it, and one that passes needs nothing (the entry is never stale).
//!
//! [`render`] writes one from a run (`--write-baseline FILE`): one entry per trial that does
//! not grade acceptable, under a comment naming its failed checks and their levels, so a new
//! adapter can start from its first run and review the entries one by one.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::verdict::level_label;
use crate::report::RunResults;

/// A parsed baseline: trial name → (line number, reason), for expected failures and for
/// known-flaky trials apart.
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    entries: BTreeMap<String, (usize, String)>,
    flaky: BTreeMap<String, (usize, String)>,
}

impl Baseline {
    /// Reads and validates a baseline file against the names of every known trial.
    pub fn load(path: &Path, known: &[String]) -> Result<Baseline, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read the baseline: {e}", path.display()))?;
        Baseline::parse(&text, known).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses baseline text; errors name the line and what was expected.
    pub fn parse(text: &str, known: &[String]) -> Result<Baseline, String> {
        let mut entries = BTreeMap::new();
        let mut flaky: BTreeMap<String, (usize, String)> = BTreeMap::new();
        for (index, raw) in text.lines().enumerate() {
            let line_no = index + 1;
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((name, reason)) = line.split_once(':') else {
                return Err(format!(
                    "line {line_no}: expected `<case-id>@<transport>: <reason>`, found {line:?}"
                ));
            };
            let (name, reason) = (name.trim(), reason.trim());
            if reason.is_empty() {
                return Err(format!(
                    "line {line_no}: `{name}` has no reason; expected the requirement the client misses after the colon"
                ));
            }
            if !known.iter().any(|k| k == name) {
                return Err(format!(
                    "line {line_no}: `{name}` names no trial; expected one of the names `cargo xtask conformance --list` prints"
                ));
            }
            let earlier = entries.get(name).or_else(|| flaky.get(name));
            if let Some((first, _)) = earlier {
                return Err(format!(
                    "line {line_no}: `{name}` is listed twice (also line {first})"
                ));
            }
            match flaky_reason(reason) {
                None => {
                    entries.insert(name.to_owned(), (line_no, reason.to_owned()));
                }
                Some(Some(why)) => {
                    flaky.insert(name.to_owned(), (line_no, why.to_owned()));
                }
                Some(None) => {
                    return Err(format!(
                        "line {line_no}: `{name}` is marked flaky without a reason; expected `{name}: flaky: <why it changes grade between runs>`"
                    ));
                }
            }
        }
        Ok(Baseline { entries, flaky })
    }

    /// The known-flaky entry for a trial: its line number and reason.
    pub fn flaky(&self, trial: &str) -> Option<&(usize, String)> {
        self.flaky.get(trial)
    }

    /// The entry for a trial: its line number and reason.
    pub fn get(&self, trial: &str) -> Option<&(usize, String)> {
        self.entries.get(trial)
    }
}

/// Whether an entry's text marks its trial known-flaky: `None` for an expected failure,
/// `Some(Some(reason))` for `flaky: <reason>`, `Some(None)` for a `flaky` mark with no reason.
fn flaky_reason(text: &str) -> Option<Option<&str>> {
    let rest = text.strip_prefix("flaky")?;
    if rest.trim().is_empty() {
        return Some(None);
    }
    let why = rest.trim_start().strip_prefix(':')?.trim();
    Some((!why.is_empty()).then_some(why))
}

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

/// A baseline for the trials of `results` that do not grade acceptable, sorted by name. An
/// entry that the run's own baseline already had keeps its reason; a new one gets the grade
/// and the sources of its failed checks, for a person to turn into the requirement missed.
/// `selection` names the filters or shard the run was limited to (empty: the whole suite).
/// `header`, the comment block the file being rewritten opened with (see [`header`]), is kept
/// in place of the generic one, so what people wrote about the client survives a rewrite.
pub fn render(results: &RunResults, selection: &str, header: Option<&str>) -> String {
    let mut out = String::new();
    match header {
        Some(header) => out.push_str(header),
        None => {
            let _ = writeln!(
                out,
                "# Expected failures of {}, written by `cargo xtask conformance --write-baseline`.",
                one_line(&results.client)
            );
            let _ = writeln!(
                out,
                "# One entry per trial that fails or is unimplemented; the comment above each names its\n\
                 # failed checks. Review every entry: each must name a real deviation of the client."
            );
        }
    }
    if !selection.is_empty() {
        let _ = writeln!(out, "# Written from a partial run ({selection}).");
    }
    let mut trials: Vec<_> = results
        .trials
        .iter()
        .filter(|t| !t.grade.is_acceptable() || t.known_flaky.is_some())
        .collect();
    trials.sort_by(|a, b| a.name.cmp(&b.name));
    for t in trials {
        // A known-flaky mark is a person's finding about the client, not this run's: kept.
        if let Some(why) = &t.known_flaky {
            let _ = writeln!(out, "\n# known flaky\n{}: flaky: {}", t.name, one_line(why));
            continue;
        }
        let failed: Vec<_> = t.checks.iter().filter(|c| !c.passed).collect();
        let named: Vec<String> = failed
            .iter()
            .map(|c| {
                format!(
                    "{} [{}]",
                    one_line(&c.name),
                    level_label(c.level, results.profile)
                )
            })
            .collect();
        let _ = writeln!(out, "\n# {}: {}", t.grade.as_str(), named.join("; "));
        let reason = match &t.baseline_reason {
            Some(reason) => one_line(reason),
            None => {
                let mut sources: Vec<String> = Vec::new();
                for c in &failed {
                    let source = one_line(&c.source);
                    if !sources.contains(&source) {
                        sources.push(source);
                    }
                }
                match sources.is_empty() {
                    true => t.grade.as_str().to_owned(),
                    false => format!("{}; misses {}", t.grade.as_str(), sources.join("; ")),
                }
            }
        };
        let _ = writeln!(out, "{}: {reason}", t.name);
    }
    out
}

/// Text on one line, every run of white space one space (a baseline entry or comment cannot
/// span lines).
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::verdict::{Grade, Verdict};
    use crate::report::{CheckRecord, TrialResult};
    use mcp_harness_scenarios::model::Level;

    fn trial(name: &str, grade: Grade, failed: &[(&str, Level)]) -> TrialResult {
        TrialResult {
            checks: failed
                .iter()
                .map(|(n, level)| CheckRecord {
                    source: format!("source of {n}"),
                    ..CheckRecord::bare(n, *level, false)
                })
                .collect(),
            ..TrialResult::bare(name, grade, Verdict::Failed)
        }
    }

    #[test]
    fn a_written_baseline_lists_each_failing_trial_and_reads_back() {
        let mut kept = trial("c@stdio", Grade::Unimplemented, &[("step\n1", Level::Must)]);
        kept.baseline_reason = Some("no structured content".into());
        let results = RunResults {
            client: "sdk".into(),
            profile: true,
            time_scale: 1.0,
            seconds: 1.0,
            trials: vec![
                kept,
                trial(
                    "a/b@stdio",
                    Grade::Fail,
                    &[("x", Level::Must), ("y", Level::Profile)],
                ),
                trial("ok@stdio", Grade::NonStrict, &[("z", Level::Should)]),
            ],
        };
        let text = render(&results, "filters calls/", None);
        assert!(
            text.contains(
                "# fail: x [must]; y [profile]\na/b@stdio: fail; misses source of x; source of y\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("# unimplemented: step 1 [must]\nc@stdio: no structured content\n"),
            "{text}"
        );
        assert!(text.contains("partial run (filters calls/)"), "{text}");
        assert!(!text.contains("ok@stdio"), "{text}");
        let known = vec![
            "a/b@stdio".to_owned(),
            "c@stdio".to_owned(),
            "ok@stdio".to_owned(),
        ];
        let back = Baseline::parse(&text, &known).unwrap();
        assert!(back.get("a/b@stdio").is_some() && back.get("c@stdio").is_some());
        assert!(back.get("ok@stdio").is_none());
    }

    fn known() -> Vec<String> {
        vec!["a/b@stdio".into(), "c@stdio".into()]
    }

    #[test]
    fn parses_entries_and_comments() {
        let b = Baseline::parse(
            "# comment\n\na/b@stdio: misses seed 000 § Tools\n",
            &known(),
        )
        .unwrap();
        assert_eq!(b.get("a/b@stdio").unwrap().0, 3);
        assert!(b.get("c@stdio").is_none());
    }

    #[test]
    fn bad_entries_name_their_line() {
        let e = Baseline::parse("c@stdio\n", &known()).unwrap_err();
        assert!(e.starts_with("line 1:"), "{e}");
        let e = Baseline::parse("c@stdio:\n", &known()).unwrap_err();
        assert!(e.contains("no reason"), "{e}");
        let e = Baseline::parse("x@stdio: r\n", &known()).unwrap_err();
        assert!(e.contains("names no trial"), "{e}");
        let e = Baseline::parse("c@stdio: r\nc@stdio: r\n", &known()).unwrap_err();
        assert!(e.contains("twice"), "{e}");
        for bad in [
            "c@stdio: flaky\n",
            "c@stdio: flaky:\n",
            "c@stdio: flaky :  \n",
        ] {
            let e = Baseline::parse(bad, &known()).unwrap_err();
            assert!(
                e.starts_with("line 1:") && e.contains("`c@stdio: flaky: <why"),
                "{e}"
            );
        }
        let e = Baseline::parse("c@stdio: flaky: r\nc@stdio: r\n", &known()).unwrap_err();
        assert!(
            e.contains("line 2") && e.contains("twice (also line 1)"),
            "{e}"
        );
    }

    #[test]
    fn a_flaky_entry_is_kept_apart_from_the_expected_failures() {
        let b = Baseline::parse(
            "a/b@stdio: flaky: races the fake's delay\nc@stdio: flaky network code\n",
            &known(),
        )
        .unwrap();
        assert_eq!(
            b.flaky("a/b@stdio"),
            Some(&(1, "races the fake's delay".to_owned()))
        );
        assert!(b.get("a/b@stdio").is_none());
        // `flaky` as the first word of a plain reason is not a mark.
        assert_eq!(b.get("c@stdio").unwrap().1, "flaky network code");
        assert!(b.flaky("c@stdio").is_none());
    }

    #[test]
    fn a_rewrite_keeps_a_known_flaky_mark_whatever_the_trial_graded() {
        let mut flaky = trial("c@stdio", Grade::Pass, &[]);
        flaky.known_flaky = Some("races the\nfake".into());
        let results = RunResults {
            client: "sdk".into(),
            profile: true,
            time_scale: 1.0,
            seconds: 1.0,
            trials: vec![flaky],
        };
        let text = render(&results, "", None);
        assert!(
            text.contains("\n# known flaky\nc@stdio: flaky: races the fake\n"),
            "{text}"
        );
        let back = Baseline::parse(&text, &known()).unwrap();
        assert_eq!(back.flaky("c@stdio").unwrap().1, "races the fake");
    }

    #[test]
    fn a_rewrite_keeps_the_header_people_wrote_but_not_an_entry_comment() {
        let written =
            "# Known gaps of X.\n#\n# Not gaps: Y.\n\n# fail: a check [must]\nx@stdio: why\n";
        assert_eq!(
            header(written).as_deref(),
            Some("# Known gaps of X.\n#\n# Not gaps: Y.\n")
        );
        assert_eq!(header("# fail: a check [must]\nx@stdio: why\n"), None);
        assert_eq!(header("x@stdio: why\n"), None);
        let partial =
            "# Known gaps of X.\n# Written from a partial run (filters a).\n\nx@stdio: w\n";
        assert_eq!(header(partial).as_deref(), Some("# Known gaps of X.\n"));
    }
}
