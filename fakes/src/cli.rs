//! The fake's command line. Everything it needs comes through argv, because a client under
//! test may pass the servers it launches almost no environment. Two flags do not need a
//! CLI crate; anything unexpected is rejected so a wrong command line fails loudly.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mcp_harness_scenarios::load;
use mcp_harness_scenarios::model::{ServerScript, TimeScale};

/// Usage line shown with every command-line error.
pub const USAGE: &str = "usage: mcp-fake-stdio --scenario <path.json> --transcript <path.jsonl> [--revision <YYYY-MM-DD>] [--variant <name>] [--time-scale <F>] [--canary <origin>] [--fixtures-from <DIR[:DIR...]>]";

/// The parsed command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    /// The scenario file whose `server` script the fake plays.
    pub scenario: PathBuf,
    /// The transcript file the fake appends its records to.
    pub transcript: PathBuf,
    /// The protocol revision to play, for a case run at several revisions.
    pub revision: Option<String>,
    /// The variant to play, for a case file holding a family of cases (`variants`).
    pub variant: Option<String>,
    /// The run's time scale: every duration of the script is multiplied by it, as the runner
    /// multiplied the case's (see `mcp_harness_scenarios::model::timing`). Default 1.
    pub time_scale: TimeScale,
    /// The trial's canary origin (`http://127.0.0.1:PORT`), written where the script says
    /// `{{canary}}` (see `mcp_harness_scenarios::model::canary`).
    pub canary: Option<String>,
    /// Scenarios roots whose `fixtures/` the case's fixtures are looked up in, in order,
    /// instead of the root above the case: a user's case directory and the built-in cases
    /// (`--fixtures-from`, a `:`-separated path list). Empty: the root above the case.
    pub fixtures_from: Vec<PathBuf>,
}

impl Args {
    /// Parses the arguments after the program name. Accepts `--flag value` and
    /// `--flag=value`; each flag exactly once.
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Args, String> {
        let mut scenario = None;
        let mut transcript = None;
        let mut revision = None;
        let mut variant = None;
        let mut time_scale = None;
        let mut canary = None;
        let mut fixtures_from = None;
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
                "--scenario" => &mut scenario,
                "--transcript" => &mut transcript,
                "--revision" => &mut revision,
                "--variant" => &mut variant,
                "--time-scale" => &mut time_scale,
                "--canary" => &mut canary,
                "--fixtures-from" => &mut fixtures_from,
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
            scenario: scenario.ok_or("--scenario is required")?,
            transcript: transcript.ok_or("--transcript is required")?,
            revision: revision.map(|r: PathBuf| r.to_string_lossy().into_owned()),
            variant: variant.map(|v: PathBuf| v.to_string_lossy().into_owned()),
            time_scale: match time_scale {
                Some(f) => TimeScale::parse(&f.to_string_lossy())
                    .map_err(|e| format!("--time-scale: {e}"))?,
                None => TimeScale::ONE,
            },
            canary: canary.map(|c: PathBuf| c.to_string_lossy().into_owned()),
            fixtures_from: fixtures_from
                .map(|dirs: PathBuf| std::env::split_paths(&dirs).collect())
                .unwrap_or_default(),
        })
    }
}

/// Reads a case file and resolves the script the fake plays (its handlers, its fixtures', the
/// built-in `echo`; for `variant` of a family), checking the handlers' `params` matchers, so
/// that a broken script is reported at start-up rather than as a mysterious client failure.
/// The error names the file and the problem. Every duration is multiplied by `scale`, and
/// the canary's origin, when given, written where the script names it.
pub fn load_script(
    path: &Path,
    variant: Option<&str>,
    scale: TimeScale,
    canary: Option<&str>,
) -> Result<ServerScript, String> {
    load_case(path, variant, scale, canary).map(|loaded| loaded.script)
}

/// What the stdio fake plays: the script, and the case's request timeout (scaled like the
/// script), which bounds its waits for the client's responses (`sends[].await_response`).
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The script, as [`load_script`] returns it.
    pub script: ServerScript,
    /// The case's `timeout_ms`, scaled.
    pub request_timeout: Duration,
}

/// [`load_script`] with the case's request timeout.
pub fn load_case(
    path: &Path,
    variant: Option<&str>,
    scale: TimeScale,
    canary: Option<&str>,
) -> Result<Loaded, String> {
    load_case_in(path, variant, scale, canary, &[])
}

/// [`load_case`] with the fixtures looked up in `roots` (see [`Args::fixtures_from`]).
pub fn load_case_in(
    path: &Path,
    variant: Option<&str>,
    scale: TimeScale,
    canary: Option<&str>,
    roots: &[PathBuf],
) -> Result<Loaded, String> {
    let setup = load::server_setup_in(path, variant, roots)?;
    let mut script = setup.server;
    script.scale(scale);
    let script = match canary {
        Some(origin) => script.with_canary(origin)?,
        None => script,
    };
    Ok(Loaded {
        script,
        request_timeout: Duration::from_millis(scale.ms(setup.timeout_ms)),
    })
}

/// The stdio fake's whole program: parses `args` (after the program name), loads the case,
/// opens the transcript and serves the script on stdin/stdout until it ends the process.
/// `name` prefixes error messages (`mcp-fake-stdio`, or `mcp-harness fake-stdio` when the
/// installed binary plays the fake). Exits 2 on bad usage or an unusable scenario.
pub fn main(args: impl IntoIterator<Item = OsString>, name: &str) -> std::process::ExitCode {
    let fail = |problem: &str| {
        eprintln!("{name}: {problem}");
        std::process::ExitCode::from(2)
    };
    let args = match Args::parse(args) {
        Ok(args) => args,
        Err(problem) => return fail(&format!("{problem}\n{USAGE}")),
    };
    let variant = args.variant.as_deref();
    let canary = args.canary.as_deref();
    let roots = &args.fixtures_from;
    let loaded = match load_case_in(&args.scenario, variant, args.time_scale, canary, roots) {
        Ok(loaded) => loaded,
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
    play(&runtime, loaded, args.revision, recorder)
}

// `serve` ends the process itself (its output type is uninhabited); recent compilers see the
// call as diverging and flag the empty match that older ones need.
#[allow(unreachable_code)]
fn play(
    runtime: &tokio::runtime::Runtime,
    loaded: Loaded,
    revision: Option<String>,
    recorder: crate::recorder::Recorder,
) -> ! {
    let serving =
        crate::stdio::serve_with(loaded.script, revision, loaded.request_timeout, recorder);
    match runtime.block_on(serving) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Args, String> {
        Args::parse(args.iter().map(OsString::from))
    }

    #[test]
    fn the_canary_origin_is_taken_as_given() {
        let args = parse(&[
            "--scenario=s.json",
            "--transcript=t.jsonl",
            "--canary",
            "http://127.0.0.1:9",
        ])
        .unwrap();
        assert_eq!(args.canary.as_deref(), Some("http://127.0.0.1:9"));
        assert!(parse(&["--scenario=s", "--transcript=t", "--canary="]).is_err());
    }

    #[test]
    fn accepts_both_flag_forms_in_any_order() {
        let want = Args {
            scenario: "s.json".into(),
            transcript: "t.jsonl".into(),
            revision: None,
            variant: None,
            time_scale: TimeScale::ONE,
            canary: None,
            fixtures_from: Vec::new(),
        };
        assert_eq!(
            parse(&["--scenario", "s.json", "--transcript", "t.jsonl"]),
            Ok(want.clone())
        );
        assert_eq!(
            parse(&["--transcript=t.jsonl", "--scenario=s.json"]),
            Ok(want)
        );
    }

    #[test]
    fn takes_an_optional_revision() {
        let args = parse(&[
            "--scenario",
            "s",
            "--transcript",
            "t",
            "--revision",
            "2025-06-18",
        ]);
        assert_eq!(args.map(|a| a.revision), Ok(Some("2025-06-18".to_owned())));
        assert!(parse(&["--scenario", "s", "--transcript", "t", "--revision"]).is_err());
    }

    #[test]
    fn takes_an_optional_time_scale() {
        let args = parse(&["--scenario", "s", "--transcript", "t", "--time-scale", "2"]);
        assert_eq!(args.map(|a| a.time_scale.factor()), Ok(2.0));
        let err = parse(&["--scenario", "s", "--transcript", "t", "--time-scale=0"]).unwrap_err();
        assert!(err.contains("--time-scale"), "{err}");
    }

    #[test]
    fn rejects_missing_repeated_and_unknown_arguments() {
        assert!(parse(&[]).is_err());
        assert!(parse(&["--scenario", "s.json"]).is_err());
        assert!(parse(&["--scenario"]).is_err());
        assert!(parse(&["--scenario", "a", "--scenario", "b", "--transcript", "t"]).is_err());
        let err = parse(&["--scenario", "s", "--transcript", "t", "--verbose"]).unwrap_err();
        assert!(err.contains("--verbose"), "{err}");
        assert!(parse(&["--scenario", "s", "--transcript", "t", "extra"]).is_err());
    }

    #[test]
    fn scenario_errors_name_the_file() {
        let missing = Path::new("/nonexistent/mcp-fake-case.json");
        let err = load_script(missing, None, TimeScale::ONE, None).unwrap_err();
        assert!(err.contains("mcp-fake-case.json"), "{err}");
    }
}
