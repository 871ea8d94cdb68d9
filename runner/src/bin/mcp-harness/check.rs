//! `mcp-harness check TRANSCRIPT…`: grades recorded sessions offline (the library's
//! `offline` module) and prints one line per requirement, grouped by verdict: failures with
//! Expected / Actual, passes, then what was not observed (never a pass). Exit status 0 when
//! no judged check failed at must, should or profile, 1 otherwise, 2 on bad input.

use std::path::PathBuf;
use std::process::ExitCode;

use mcp_harness::offline::{self, Grading, output};
use mcp_harness::report::{self, RunResults};
use mcp_harness_scenarios::model::era;
use mcp_harness_scenarios::transcript::Record;

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
  1  a judged check failed at must, should or profile, or a recording had nothing judged
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
    let mut shown = match args.json {
        true => {
            let all: Vec<_> = graded.iter().map(|(n, _, g)| output::json(n, g)).collect();
            serde_json::to_string_pretty(&all).unwrap_or_default() + "\n"
        }
        false => graded.iter().map(|(n, _, g)| output::text(n, g)).collect(),
    };
    if let Some(dir) = &args.report_dir {
        let trials = graded
            .iter()
            .map(|(name, records, g)| offline::trial_result(&trial_name(name, &graded), records, g))
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
            shown.push_str(&format!("report: {}\n", dir.join("report.html").display()));
        }
    }
    // A reader that went away (`| head`) is not an error.
    let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), shown.as_bytes());
    let empty: Vec<&str> = graded
        .iter()
        .filter(|(_, _, g)| g.judged_nothing())
        .map(|(source, _, _)| source.as_str())
        .collect();
    if !empty.is_empty() {
        eprintln!(
            "nothing was judged in {}: no rule was exercised (a recording of nothing is no pass)",
            empty.join(", ")
        );
    }
    match !empty.is_empty() || graded.iter().any(|(_, _, g)| g.fails()) {
        true => ExitCode::from(1),
        false => ExitCode::SUCCESS,
    }
}

/// A recording's trial in a report: `recording/<file name>@<transport>`, or the path as
/// given when two recordings share a file name.
fn trial_name(path: &str, all: &[(String, Vec<Record>, Grading)]) -> String {
    let file = |p: &str| {
        std::path::Path::new(p)
            .file_name()
            .map_or(p.to_owned(), |f| f.to_string_lossy().into_owned())
    };
    let shared = all.iter().filter(|(p, _, _)| file(p) == file(path)).count() > 1;
    let transport = all
        .iter()
        .find(|(p, _, _)| p == path)
        .map_or("stdio", |(_, _, g)| g.transport.as_str());
    match shared {
        true => format!("{path}@{transport}"),
        false => format!("recording/{}@{transport}", file(path)),
    }
}
