use super::write::{Rewrite, fold};
use super::*;
use crate::conformance::verdict::{Grade, Strictness, Verdict};
use crate::report::{CheckRecord, RunResults, TrialResult};
use mcp_harness_scenarios::model::Level;

fn check(name: &str, id: &str, level: Level, passed: bool) -> CheckRecord {
    CheckRecord {
        requirement_id: id.into(),
        source: format!("source of {id}"),
        ..CheckRecord::bare(name, level, passed)
    }
}

fn known() -> Vec<String> {
    [
        "a/b@stdio",
        "a/b@https",
        "c@stdio",
        "c@https",
        "v@stdio@2025-06-18",
        "v@stdio@2025-11-25",
        "v@https@2025-06-18",
        "v@https@2025-11-25",
    ]
    .map(str::to_owned)
    .to_vec()
}

#[test]
fn globs_stand_for_any_run_of_characters() {
    assert!(glob_matches("a/b@*", "a/b@stdio"));
    assert!(glob_matches("v@*@2025-06-18", "v@https@2025-06-18"));
    assert!(!glob_matches("v@*@2025-06-18", "v@https@2025-11-25"));
    assert!(glob_matches("v@stdio*", "v@stdio@2025-11-25"));
    assert!(!glob_matches("a/b@*", "a/bc@stdio"));
    assert!(glob_matches("c@stdio", "c@stdio") && !glob_matches("c@stdio", "c@stdio@x"));
    assert!(glob_matches("*", "anything") && glob_matches("a*b*c", "aXbYbc"));
}

#[test]
fn parses_per_check_entries_names_and_marks() {
    let text = "# c\n\na/b@* [AUTH-20, \"step 1 (x) succeeds, or \\\"not\\\"\"]: why\n\
                v@*@2025-06-18 c@stdio [unimplemented]: old era only\n\
                c@https: a per-trial entry\n\
                v@stdio* [HTTP-12]: flaky: races\n";
    let b = Baseline::parse(text, &known()).unwrap();
    assert_eq!(b.entries.len(), 4);
    let first = &b.entries[0];
    assert_eq!(first.line, 3);
    assert_eq!(
        first.checks.as_deref().unwrap(),
        [
            Key::Requirement("AUTH-20".into()),
            Key::Name("step 1 (x) succeeds, or \"not\"".into())
        ]
    );
    assert_eq!(first.reason, "why");
    assert_eq!(b.entries[1].trials, ["v@*@2025-06-18", "c@stdio"]);
    assert_eq!(
        b.entries[1].checks.as_deref().unwrap(),
        [Key::Unimplemented]
    );
    assert!(b.entries[2].checks.is_none() && b.per_trial().count() == 1);
    assert!(b.entries[3].flaky && b.entries[3].reason == "races");
    assert_eq!(b.flaky("v@stdio@2025-11-25").len(), 1);
    assert_eq!(b.expected("v@stdio@2025-06-18").len(), 1);
}

#[test]
fn bad_entries_name_their_line_and_what_was_expected() {
    let cases = [
        (
            "c@stdio\n",
            "expected `<trial> [<requirement id>]: <reason>`",
        ),
        ("c@stdio:\n", "no reason"),
        ("c@stdio [X-1]:\n", "no reason"),
        ("x@stdio: r\n", "names no trial"),
        ("a/x@* [X-1]: r\n", "names no trial"),
        ("c@stdio [X-1] r\n", "expected `:` and a reason"),
        ("c@stdio []: r\n", "names no check"),
        ("c@stdio [not an id]: r\n", "is not a check"),
        ("c@stdio [\"open: r\n", "closed JSON string"),
        ("c@stdio [X-1 X-2]: r\n", "is not a check"),
        ("c@stdio [X-1: r\n", "expected `]`"),
        ("c@stdio [X-1]: flaky\n", "flaky: <why"),
        ("c@stdio: r\nc@stdio: r\n", "twice (also line 1)"),
        ("c@* [X-1]: r\nc@* [X-2, X-1]: s\n", "twice (also line 1)"),
    ];
    for (text, want) in cases {
        let e = Baseline::parse(text, &known()).unwrap_err();
        assert!(e.starts_with("line "), "{text:?}: {e}");
        assert!(e.contains(want), "{text:?}: {e}");
    }
    // The same trials may carry an expected failure and a flaky mark of one check.
    Baseline::parse("c@* [X-1]: r\nc@* [X-1]: flaky: s\n", &known()).unwrap();
}

fn judged(text: &str, trial: &str, grade: Grade, checks: &[CheckRecord]) -> (usize, usize, bool) {
    let b = Baseline::parse(text, &known()).unwrap();
    let j = judge(&b, trial, grade, checks, Strictness::default());
    (j.unexcused.len(), j.stale.len(), j.expected())
}

#[test]
fn a_trial_meets_its_baseline_only_when_exactly_the_named_checks_fail() {
    let two_fail = [
        check("one", "A-1", Level::Must, false),
        check("two", "B-1", Level::Must, false),
        check("three", "C-1", Level::Should, false),
    ];
    // Both named: expected (a failing should check needs no entry).
    assert_eq!(
        judged("c@* [A-1, B-1]: r\n", "c@stdio", Grade::Fail, &two_fail),
        (0, 0, true)
    );
    // One more check fails than the baseline names: a new failure.
    assert_eq!(
        judged("c@* [A-1]: r\n", "c@stdio", Grade::Fail, &two_fail),
        (1, 0, false)
    );
    // A named check holds now: stale.
    let one_fails = [
        check("one", "A-1", Level::Must, false),
        check("two", "B-1", Level::Must, true),
    ];
    assert_eq!(
        judged("c@* [A-1, B-1]: r\n", "c@stdio", Grade::Fail, &one_fails),
        (0, 1, false)
    );
    // A name picks one of two checks citing one id.
    let same_id = [
        check("step 1", "CONTRACT-8", Level::Must, false),
        check("step 2", "CONTRACT-8", Level::Must, false),
    ];
    assert_eq!(
        judged("c@* [\"step 1\"]: r\n", "c@stdio", Grade::Fail, &same_id),
        (1, 0, false)
    );
    // An entry whose check this trial does not make is neither used nor stale here.
    assert_eq!(
        judged("c@* [A-1, Z-9]: r\n", "c@stdio", Grade::Fail, &one_fails),
        (0, 0, true)
    );
    // The old per-trial form expects any failure, and is stale once the trial passes.
    assert_eq!(
        judged("c@stdio: r\n", "c@stdio", Grade::Fail, &two_fail),
        (0, 0, true)
    );
    let pass = [check("one", "A-1", Level::Must, true)];
    assert_eq!(
        judged("c@stdio: r\n", "c@stdio", Grade::Pass, &pass),
        (0, 1, false)
    );
    // `unimplemented` covers every failed check of an unimplemented trial, and goes stale
    // once the trial grades otherwise.
    assert_eq!(
        judged(
            "c@* [unimplemented]: r\n",
            "c@stdio",
            Grade::Unimplemented,
            &two_fail
        ),
        (0, 0, true)
    );
    assert_eq!(
        judged(
            "c@* [unimplemented]: r\n",
            "c@stdio",
            Grade::Fail,
            &two_fail
        ),
        (2, 1, false)
    );
}

fn trial(name: &str, grade: Grade, checks: Vec<CheckRecord>) -> TrialResult {
    TrialResult {
        checks,
        ..TrialResult::bare(name, grade, Verdict::Failed)
    }
}

#[test]
fn folding_names_covers_exactly_the_trials_given() {
    let set = |names: &[&str]| names.iter().map(|s| s.to_string()).collect();
    assert_eq!(fold(&set(&["c@stdio", "c@https"]), &known()), ["c@*"]);
    assert_eq!(fold(&set(&["c@stdio"]), &known()), ["c@stdio"]);
    assert_eq!(
        fold(
            &set(&["v@stdio@2025-06-18", "v@https@2025-06-18"]),
            &known()
        ),
        ["v@*@2025-06-18"]
    );
    assert_eq!(
        fold(
            &set(&[
                "v@stdio@2025-06-18",
                "v@stdio@2025-11-25",
                "v@https@2025-06-18"
            ]),
            &known()
        ),
        ["v@*@2025-06-18", "v@stdio*"]
    );
}

#[test]
fn a_rewrite_migrates_per_trial_entries_to_one_line_per_behaviour() {
    let old = "# Known gaps of X.\n\nv@stdio@2025-06-18: no caps\nv@https@2025-06-18: no caps\n\
               c@stdio: old era\nc@https: flaky: races\n";
    let old = Baseline::parse(old, &known()).unwrap();
    let strictness = Strictness::default();
    let mut results = RunResults {
        netns: None,
        client: "sdk".into(),
        profile: true,
        time_scale: 1.0,
        seconds: 1.0,
        trials: vec![
            trial(
                "v@stdio@2025-06-18",
                Grade::Fail,
                vec![
                    check("asks undeclared", "LIFE-06", Level::Must, false),
                    check("step 1", "CONTRACT-8", Level::Must, false),
                    check("step 2", "CONTRACT-8", Level::Must, true),
                ],
            ),
            trial(
                "v@https@2025-06-18",
                Grade::Fail,
                vec![
                    check("asks undeclared", "LIFE-06", Level::Must, false),
                    check("step 1", "CONTRACT-8", Level::Must, false),
                    check("step 2", "CONTRACT-8", Level::Must, true),
                ],
            ),
            trial(
                "c@stdio",
                Grade::Unimplemented,
                vec![check("x", "A-1", Level::Must, false)],
            ),
            trial("c@https", Grade::Pass, vec![]),
            trial(
                "a/b@stdio",
                Grade::Fail,
                vec![check("new", "N-1", Level::Profile, false)],
            ),
        ],
    };
    // What the run's judge records: each failing check carries its entry's reason.
    for t in &mut results.trials {
        let j = judge(&old, &t.name, t.grade, &t.checks, strictness);
        let reasons: Vec<Option<String>> = j
            .excused
            .iter()
            .map(|e| e.map(|e| e.reason.clone()))
            .collect();
        for (c, r) in t.checks.iter_mut().zip(reasons) {
            c.baseline = r;
        }
    }
    let text = render(
        &results,
        &Rewrite {
            old: &old,
            known: &known(),
            selection: "",
            header: Some("# Known gaps of X.\n"),
            strictness,
        },
    );
    assert!(text.starts_with("# Known gaps of X.\n"), "{text}");
    assert!(
        text.contains("\nv@*@2025-06-18 [LIFE-06, \"step 1\"]: no caps\n"),
        "{text}"
    );
    assert!(
        text.contains("\nc@stdio [unimplemented]: old era\n"),
        "{text}"
    );
    assert!(text.contains("\nc@https: flaky: races\n"), "{text}");
    assert!(
        text.contains("# new [profile]\na/b@stdio [N-1]: misses source of N-1\n"),
        "{text}"
    );
    // It reads back, and every failing trial meets it.
    let back = Baseline::parse(&text, &known()).unwrap();
    assert_eq!(
        back.per_trial().count(),
        0,
        "only the flaky mark names no check"
    );
    assert!(back.entries.iter().any(|e| e.flaky && e.checks.is_none()));
    for t in results.trials.iter().filter(|t| !t.grade.is_acceptable()) {
        let j = judge(&back, &t.name, t.grade, &t.checks, strictness);
        assert!(j.expected(), "{}: {j:?}\n{text}", t.name);
    }
}

#[test]
fn a_partial_rewrite_keeps_the_entries_of_trials_that_did_not_run() {
    let old = Baseline::parse(
        "# about a/b\na/b@* [A-1]: kept\nc@stdio [B-1]: dropped\nc@stdio v@* [C-1]: narrowed\n",
        &known(),
    )
    .unwrap();
    let results = RunResults {
        netns: None,
        client: "sdk".into(),
        profile: true,
        time_scale: 1.0,
        seconds: 1.0,
        trials: vec![trial("c@stdio", Grade::Pass, vec![])],
    };
    let text = render(
        &results,
        &Rewrite {
            old: &old,
            known: &known(),
            selection: "filters c@",
            header: None,
            strictness: Strictness::default(),
        },
    );
    assert!(text.contains("partial run (filters c@)"), "{text}");
    assert!(
        text.contains("\n# about a/b\na/b@* [A-1]: kept\n"),
        "{text}"
    );
    assert!(!text.contains("dropped"), "{text}");
    // An entry over trials that ran and trials that did not keeps the latter.
    assert!(text.contains("\nv@* [C-1]: narrowed\n"), "{text}");
}

#[test]
fn unused_entries_are_those_that_named_no_check_where_all_their_trials_ran() {
    let b = Baseline::parse("c@* [A-1]: r\na/b@* [B-1]: s\n", &known()).unwrap();
    let known = known();
    let ran: std::collections::HashSet<&str> = ["c@stdio", "c@https", "a/b@stdio"].into();
    let unused = b.unused(&known, &ran, &Default::default());
    assert_eq!(unused.len(), 1, "a/b@https did not run: {unused:?}");
    assert_eq!(unused[0].line, 1);
    assert!(b.unused(&known, &ran, &[1].into()).is_empty());
}

#[test]
fn a_rewrite_keeps_the_header_people_wrote_but_not_an_entry_comment() {
    let written = "# Known gaps of X.\n#\n# Not gaps: Y.\n\n# fail: a check [must]\nx@stdio: why\n";
    assert_eq!(
        header(written).as_deref(),
        Some("# Known gaps of X.\n#\n# Not gaps: Y.\n")
    );
    assert_eq!(header("# fail: a check [must]\nx@stdio: why\n"), None);
    assert_eq!(header("x@stdio: why\n"), None);
    let partial = "# Known gaps of X.\n# Written from a partial run (filters a).\n\nx@stdio: w\n";
    assert_eq!(header(partial).as_deref(), Some("# Known gaps of X.\n"));
}

#[test]
fn a_rewrite_writes_no_expected_failure_for_a_check_a_flaky_mark_names() {
    let old = Baseline::parse(
        "c@stdio: flaky: whole\na/b@stdio [A-1]: flaky: one check\n",
        &known(),
    )
    .unwrap();
    let failed = |name: &str| {
        trial(
            name,
            Grade::Fail,
            vec![
                check("one", "A-1", Level::Must, false),
                check("two", "B-1", Level::Must, false),
            ],
        )
    };
    let results = RunResults {
        netns: None,
        client: "sdk".into(),
        profile: true,
        time_scale: 1.0,
        seconds: 1.0,
        trials: vec![failed("c@stdio"), failed("a/b@stdio")],
    };
    let text = render(
        &results,
        &Rewrite {
            old: &old,
            known: &known(),
            selection: "",
            header: None,
            strictness: Strictness::default(),
        },
    );
    assert!(!text.contains("c@stdio ["), "{text}");
    assert!(
        text.contains("\na/b@stdio [B-1]: misses source of B-1\n"),
        "{text}"
    );
    assert!(!text.contains("a/b@stdio [A-1]: misses"), "{text}");
    assert!(
        text.contains("\nc@stdio: flaky: whole\n")
            && text.contains("\na/b@stdio [A-1]: flaky: one check\n"),
        "{text}"
    );
}

#[test]
fn a_rewrite_keeps_the_entries_of_a_trial_not_run_here() {
    let old = Baseline::parse("c@https [LIFE-06]: no check of the address\n", &known()).unwrap();
    let results = RunResults {
        netns: Some("none: no namespace".into()),
        client: "sdk".into(),
        profile: true,
        time_scale: 1.0,
        seconds: 1.0,
        trials: vec![TrialResult {
            not_run: Some("no namespace".into()),
            ..TrialResult::bare("c@https", Grade::NotRun, Verdict::Passed)
        }],
    };
    let text = render(
        &results,
        &Rewrite {
            old: &old,
            known: &known(),
            selection: "",
            header: None,
            strictness: Strictness::default(),
        },
    );
    assert!(
        text.contains("c@https [LIFE-06]: no check of the address"),
        "{text}"
    );
}
