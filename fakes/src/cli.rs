//! The fake's command line. Everything it needs comes through argv, because a client under
//! test may pass the servers it launches almost no environment. The runner prepares the
//! trial once and hands the fake the result as a file ([`Play`]), so the fake loads no case,
//! resolves no fixture and scales nothing itself. Two flags do not need a CLI crate;
//! anything unexpected is rejected so a wrong command line fails loudly.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::model::ServerScript;
use serde::{Deserialize, Serialize};

/// Usage line shown with every command-line error.
pub const USAGE: &str = "usage: mcp-fake-stdio --play <play.json> --transcript <path.jsonl>";

/// What the stdio fake plays in one trial, as the runner prepared it: the case's complete
/// script (its handlers, its fixtures', the built-in `echo`; for its variant), every
/// duration already scaled and the trial's canary origin already written in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Play {
    /// The script to play.
    pub server: ServerScript,
    /// The protocol revision to play, for a case run at several revisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// The case's request timeout, scaled: the longest the fake waits for the client's
    /// response to a request it sent (`sends[].await_response`).
    pub request_timeout_ms: u64,
}

impl Play {
    /// The play of a loaded case: for a trial, the case as scaled for it with the trial's
    /// canary origin written in.
    pub fn of(case: &Case) -> Play {
        Play {
            server: case.scenario.server.clone(),
            revision: case.revision.clone(),
            request_timeout_ms: case.scenario.timeout_ms,
        }
    }

    /// Reads a play file; the error names the file and, for a bad field, where it is.
    pub fn read(path: &Path) -> Result<Play, String> {
        let shown = path.display();
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
        let mut de = serde_json::Deserializer::from_str(&text);
        serde_path_to_error::deserialize(&mut de).map_err(|e| match e.path().to_string() {
            at if at == "." => format!("invalid play file {shown}: {}", e.inner()),
            at => format!("invalid play file {shown}: {at}: {}", e.inner()),
        })
    }

    /// Writes the play file the fake reads.
    pub fn write(&self, path: &Path) -> Result<(), String> {
        let text =
            serde_json::to_string(self).map_err(|e| format!("cannot encode the play: {e}"))?;
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// The parsed command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    /// The prepared trial the fake plays ([`Play`]).
    pub play: PathBuf,
    /// The transcript file the fake appends its records to.
    pub transcript: PathBuf,
}

impl Args {
    /// Parses the arguments after the program name. Accepts `--flag value` and
    /// `--flag=value`; each flag exactly once.
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Args, String> {
        let mut play = None;
        let mut transcript = None;
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let text = arg
                .to_str()
                .ok_or_else(|| format!("unexpected argument {arg:?}"))?;
            let (flag, inline) = match text.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => {
                    (flag, Some(OsString::from(value)))
                }
                _ => (text, None),
            };
            let slot = match flag {
                "--play" => &mut play,
                "--transcript" => &mut transcript,
                _ => return Err(format!("unexpected argument {text:?}")),
            };
            let value = inline
                .or_else(|| args.next())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("{flag} needs a value"))?;
            if slot.replace(PathBuf::from(value)).is_some() {
                return Err(format!("{flag} given twice"));
            }
        }
        Ok(Args {
            play: play.ok_or("--play is required")?,
            transcript: transcript.ok_or("--transcript is required")?,
        })
    }
}

/// The stdio fake's whole program: parses `args` (after the program name), reads the play,
/// opens the transcript and serves the script on stdin/stdout until it ends the process.
/// `name` prefixes error messages (`mcp-fake-stdio`, or `mcp-harness fake-stdio` when the
/// installed binary plays the fake). Exits 2 on bad usage or an unusable play file.
pub fn main(args: impl IntoIterator<Item = OsString>, name: &str) -> std::process::ExitCode {
    let fail = |problem: &str| {
        eprintln!("{name}: {problem}");
        std::process::ExitCode::from(2)
    };
    let args = match Args::parse(args) {
        Ok(args) => args,
        Err(problem) => return fail(&format!("{problem}\n{USAGE}")),
    };
    let play = match Play::read(&args.play) {
        Ok(play) => play,
        Err(problem) => return fail(&problem),
    };
    let recorder = match crate::recorder::Recorder::open(&args.transcript) {
        Ok(recorder) => recorder,
        Err(e) => {
            let path = args.transcript.display();
            return fail(&format!("cannot open transcript {path}: {e}"));
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return fail(&format!("cannot start the async runtime: {e}")),
    };
    serve(&runtime, play, recorder)
}

// `stdio::serve` ends the process itself (its output type is uninhabited); recent compilers
// see the call as diverging and flag the empty match that older ones need.
#[allow(unreachable_code)]
fn serve(runtime: &tokio::runtime::Runtime, play: Play, recorder: crate::recorder::Recorder) -> ! {
    let timeout = Duration::from_millis(play.request_timeout_ms);
    let serving = crate::stdio::serve(play.server, play.revision, timeout, recorder);
    match runtime.block_on(serving) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Args, String> {
        Args::parse(args.iter().map(OsString::from))
    }

    #[test]
    fn accepts_both_flag_forms_in_any_order() {
        let want = Args {
            play: "p.json".into(),
            transcript: "t.jsonl".into(),
        };
        assert_eq!(
            parse(&["--play", "p.json", "--transcript", "t.jsonl"]),
            Ok(want.clone())
        );
        assert_eq!(parse(&["--transcript=t.jsonl", "--play=p.json"]), Ok(want));
    }

    #[test]
    fn rejects_missing_repeated_and_unknown_arguments() {
        assert!(parse(&[]).is_err());
        assert!(parse(&["--play", "p.json"]).is_err());
        assert!(parse(&["--play"]).is_err());
        assert!(parse(&["--play=", "--transcript", "t"]).is_err());
        assert!(parse(&["--play", "a", "--play", "b", "--transcript", "t"]).is_err());
        let err = parse(&["--play", "p", "--transcript", "t", "--verbose"]).unwrap_err();
        assert!(err.contains("--verbose"), "{err}");
        assert!(parse(&["--play", "p", "--transcript", "t", "extra"]).is_err());
        // The case-file flags of old are gone: the runner prepares the trial.
        let err = parse(&["--scenario", "s.json", "--transcript", "t"]).unwrap_err();
        assert!(err.contains("--scenario"), "{err}");
    }

    #[test]
    fn a_bad_play_file_is_named_with_the_field() {
        let dir = std::env::temp_dir().join(format!("mcp-fake-play-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing.json");
        let err = Play::read(&missing).unwrap_err();
        assert!(err.contains("missing.json"), "{err}");
        let bad = dir.join("bad.json");
        std::fs::write(&bad, r#"{"server":{},"request_timeout_ms":"soon"}"#).unwrap();
        let err = Play::read(&bad).unwrap_err();
        assert!(
            err.contains("bad.json") && err.contains("request_timeout_ms"),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_play_reads_back_as_written() {
        let dir = std::env::temp_dir().join(format!("mcp-fake-play-rt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let play = Play {
            server: ServerScript::default(),
            revision: Some("2025-06-18".into()),
            request_timeout_ms: 1234,
        };
        let path = dir.join("play.json");
        play.write(&path).unwrap();
        assert_eq!(Play::read(&path), Ok(play));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
