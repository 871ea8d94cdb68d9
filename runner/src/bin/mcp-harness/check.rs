//! `mcp-harness check TRANSCRIPT…`: grades recorded sessions offline (the library's
//! `offline` module) and prints one line per requirement, grouped by verdict: failures with
//! Expected / Actual, passes, then what was not observed (never a pass). Exit status 0 when
//! no judged check failed at must, should or profile, 1 otherwise, 2 on bad input.

use std::path::PathBuf;
use std::process::ExitCode;

use mcp_harness::conformance::verdict::level_label;
use mcp_harness::offline::{self, Graded, Grading, Verdict};
use mcp_harness::report::{self, RunResults};
use mcp_harness_scenarios::model::era;
use mcp_harness_scenarios::transcript::Record;
use serde_json::json;

/// The flags of `check`.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// The recordings: harness transcripts (what `record` and the fakes write) or import
    /// files, one `{"from": "client"|"server", "message": …, "at_ms"?: N}` per line.
    #[arg(required = true, value_name = "TRANSCRIPT")]
    transcripts: Vec<PathBuf>,
    /// Write results.json, junit.xml and report.html here, one trial per recording.
    #[arg(long, value_name = "DIR")]
    report_dir: Option<PathBuf>,
    /// The protocol revision where a recording names none itself (no initialize before a
    /// message, no _meta version); by default the recording's initialize result.
    #[arg(long, value_name = "R")]
    revision: Option<String>,
    /// Print the verdicts as JSON instead of lines.
    #[arg(long)]
    json: bool,
}

/// Exit status after checking.
pub const EXIT_CODES: &str = "\
Exit status:
  0  no judged check failed at must, should or profile (not observed is not a pass)
  1  a judged check failed at must, should or profile
  2  bad input: an unreadable recording (the message names the file and line), bad flags";

/// Runs `check`.
pub fn run(args: CheckArgs) -> ExitCode {
    if let Some(r) = args
        .revision
        .as_deref()
        .filter(|r| !era::REVISIONS.contains(r))
    {
        eprintln!(
            "error: --revision {r}: not a revision the harness knows; expected one of {}",
            era::REVISIONS.join(", ")
        );
        return ExitCode::from(2);
    }
    let mut read: Vec<(String, Vec<Record>)> = Vec::new();
    let mut bad = 0;
    for path in &args.transcripts {
        match offline::read::read(path) {
            Ok((records, _)) => read.push((path.display().to_string(), records)),
            Err(e) => {
                eprintln!("error: {e}");
                bad += 1;
            }
        }
    }
    if bad > 0 {
        eprintln!("{bad} recording(s) could not be read; nothing was graded");
        return ExitCode::from(2);
    }
    let graded: Vec<(String, Vec<Record>, Grading)> = read
        .into_iter()
        .map(|(name, records)| {
            let grading = offline::grade(&records, args.revision.as_deref());
            (name, records, grading)
        })
        .collect();
    if args.json {
        let shown: Vec<_> = graded.iter().map(|(n, _, g)| as_json(n, g)).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&shown).unwrap_or_default()
        );
    } else {
        for (name, _, grading) in &graded {
            print!("{}", as_text(name, grading));
        }
    }
    if let Some(dir) = &args.report_dir {
        let trials = graded
            .iter()
            .map(|(name, records, g)| {
                let trial = format!("{name}@{}", g.transport.as_str());
                offline::trial_result(&trial, records, g)
            })
            .collect();
        let results = RunResults {
            client: "recording".to_owned(),
            profile: true,
            time_scale: 1.0,
            seconds: 0.0,
            netns: None,
            trials,
        };
        if let Err(e) = report::write_all(dir, &results) {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
        if !args.json {
            println!("report: {}", dir.join("report.html").display());
        }
    }
    match graded.iter().any(|(_, _, g)| g.fails()) {
        true => ExitCode::from(1),
        false => ExitCode::SUCCESS,
    }
}

/// One recording's verdicts as lines: a header, then failures, passes and not observed.
fn as_text(name: &str, g: &Grading) -> String {
    let (revision, source) = &g.revision;
    let mut out = format!(
        "{name}: {}, revision {revision} ({}), {} message(s) from the client\n",
        g.transport.as_str(),
        source.as_str(),
        g.client_messages
    );
    let groups = [
        (Verdict::Fail, "failed"),
        (Verdict::Pass, "passed"),
        (
            Verdict::NotObserved,
            "not observed (not a pass: nothing in the recording exercised it)",
        ),
    ];
    for (verdict, title) in groups {
        let rows: Vec<&Graded> = g.with(verdict).collect();
        if rows.is_empty() {
            continue;
        }
        out.push_str(&format!("  {title}: {}\n", rows.len()));
        for row in rows {
            let c = &row.check;
            let mark = match verdict {
                Verdict::Fail => "✗",
                Verdict::Pass => "✓",
                Verdict::NotObserved => "-",
            };
            out.push_str(&format!(
                "    {mark} {} [{}] {}",
                c.requirement_id,
                level_label(c.level, true),
                c.name
            ));
            match verdict {
                Verdict::NotObserved => out.push_str(&format!(": {}\n", row.why)),
                Verdict::Pass => out.push('\n'),
                Verdict::Fail => out.push_str(&format!(
                    "\n        Expected: {}\n        Actual:   {}\n        Source:   {}\n",
                    c.expected, c.actual, c.source
                )),
            }
        }
    }
    let count = |v| g.with(v).count();
    out.push_str(&format!(
        "  {} failed, {} passed, {} not observed\n",
        count(Verdict::Fail),
        count(Verdict::Pass),
        count(Verdict::NotObserved)
    ));
    out
}

fn as_json(name: &str, g: &Grading) -> serde_json::Value {
    let checks: Vec<_> = g
        .checks
        .iter()
        .map(|row| {
            let c = &row.check;
            let mut v = json!({
                "verdict": row.verdict.as_str(),
                "requirement_id": c.requirement_id,
                "name": c.name,
                "level": c.level.as_str(),
                "requirement": c.requirement,
                "source": c.source,
            });
            match row.verdict {
                Verdict::Fail => {
                    v["expected"] = json!(c.expected);
                    v["actual"] = json!(c.actual);
                }
                Verdict::NotObserved => v["why"] = json!(row.why),
                Verdict::Pass => {}
            }
            v
        })
        .collect();
    json!({
        "recording": name,
        "transport": g.transport.as_str(),
        "revision": g.revision.0,
        "revision_source": g.revision.1.as_str(),
        "client_messages": g.client_messages,
        "fails": g.fails(),
        "checks": checks,
    })
}
