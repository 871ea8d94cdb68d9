//! Running one trial: the client under test, started through the driver contract with the
//! fake's command line, watched until it exits or its deadline passes.
//!
//! Everything the client prints is bounded (a flood stops the client), the deadline is
//! enforced by killing the client's process group, and what the fake recorded is read back
//! afterwards together with whether each server process outlived the client. Then every
//! process of the trial still running is killed: the group, the servers, and any process
//! that left the group, found by the trial's marker in its environment or by the client's
//! output pipe it holds.

use std::collections::BTreeMap;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{OnceLock, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use mcp_harness_fakes::cli::Play;
use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::model::Transport;
use mcp_harness_scenarios::model::file::Network;
use mcp_harness_scenarios::transcript::{self, Event, Record};

use super::http_env::{HttpEnv, HttpTrial};
use super::netns::{Isolation, Unavailable};
use super::output;
use super::procs::{self, Leftover};

mod servers;
mod traces;
pub use servers::VAR as SERVERS_VAR;

/// Where the harness's own programs are: in the repository two binaries of their own, in
/// the installed `mcp-harness` one binary that plays both behind a hidden subcommand.
#[derive(Debug, Clone)]
pub struct Bins {
    /// The stdio fake server.
    pub fake_stdio: PathBuf,
    /// Arguments put before the fake's own (`fake-stdio` for the installed binary).
    pub fake_stdio_args: Vec<String>,
    /// The reference client's driver.
    pub driver: PathBuf,
    /// Arguments put after the driver's path (`driver` for the installed binary).
    pub driver_args: Vec<String>,
}

impl Bins {
    /// The fake and the driver as two programs of their own.
    pub fn separate(fake_stdio: PathBuf, driver: PathBuf) -> Bins {
        Bins {
            fake_stdio,
            fake_stdio_args: Vec::new(),
            driver,
            driver_args: Vec::new(),
        }
    }

    /// One program that plays the fake as `EXE fake-stdio …` and the driver as `EXE driver`.
    pub fn single(exe: PathBuf) -> Bins {
        Bins {
            fake_stdio: exe.clone(),
            fake_stdio_args: vec!["fake-stdio".to_owned()],
            driver: exe,
            driver_args: vec!["driver".to_owned()],
        }
    }

    /// The stdio fake's argv playing `play` and recording into `transcript`; `wrapped` puts
    /// it behind a shell that forks it and waits (no `exec`), as a launcher script does
    /// (`server.wrapped`).
    pub fn fake_argv(&self, wrapped: bool, play: &Path, transcript: &Path) -> Vec<String> {
        let mut argv = Vec::new();
        if wrapped {
            argv.extend(
                ["/bin/sh", "-c", "\"$@\"; exit $?", "mcp-server-wrapper"].map(String::from),
            );
        }
        argv.push(self.fake_stdio.to_string_lossy().into_owned());
        argv.extend(self.fake_stdio_args.iter().cloned());
        argv.extend([
            "--play".to_owned(),
            play.to_string_lossy().into_owned(),
            "--transcript".to_owned(),
            transcript.to_string_lossy().into_owned(),
        ]);
        argv
    }

    /// The reference client's command line, for `sh -c`.
    pub fn driver_command(&self) -> String {
        let mut cmd = super::shell_quote(&self.driver);
        for arg in &self.driver_args {
            cmd.push(' ');
            cmd.push_str(&super::shell_quote(std::path::Path::new(arg)));
        }
        cmd
    }
}

/// The variable that marks every process of one trial (the client passes it on to what it
/// starts), so that one which left the client's process group can still be found.
pub const TRIAL_MARKER: &str = "MCP_HARNESS_TRIAL";
/// How long the client's pipes may stay open after the trial's processes are gone (the
/// readers' threads may not have run yet on a loaded machine), at time scale 1.
const PIPE_PATIENCE: Duration = Duration::from_millis(500);
/// How long a server may take to vanish after the client exits (a kill just sent), at time
/// scale 1.
const VANISH_GRACE: Duration = Duration::from_millis(200);

/// How the client process ended.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientEnd {
    /// It exited with this status.
    Exited(i32),
    /// A signal ended it.
    Signaled(i32),
    /// The deadline passed and the runner killed its process group.
    Deadline,
    /// It printed more than the stdout cap, and the runner killed its process group.
    OutputCapped,
    /// It could not be started at all.
    SpawnFailed(String),
}

/// One server process the fake's transcript knows of.
#[derive(Debug, Clone)]
pub struct ServerProcess {
    /// Its pid.
    pub pid: u32,
    /// Whether it was still running once the client had exited.
    pub outlived_client: bool,
    /// The extra server (a case's `servers`) it played; `None`: the main server.
    pub server: Option<String>,
}

/// Everything observed in one trial.
#[derive(Debug, Clone)]
pub struct TrialRun {
    /// The client's stdout, line by line (bounded).
    pub stdout_lines: Vec<String>,
    /// Whether stdout went past the cap.
    pub stdout_overflow: bool,
    /// The tail of the client's stderr.
    pub stderr_tail: String,
    /// How the client ended.
    pub end: ClientEnd,
    /// Wall time from spawn to end.
    pub elapsed: Duration,
    /// What the fake recorded, or why it could not be read.
    pub records: Result<Vec<Record>, String>,
    /// The server processes, in launch order (stdio only).
    pub servers: Vec<ServerProcess>,
    /// Whether the client was handed a bearer token.
    pub token_given: bool,
    /// Whether the client printed the bearer token it was given, or any secret of the
    /// authorization side (already redacted above).
    pub secret_leaked: bool,
    /// An authorization trial (`server.auth` over HTTPS): what connected to the client's
    /// redirect URI (nothing, for a client doing the headless step).
    pub auth_redirect: Option<super::canary::CanaryRun>,
    /// Processes that had left the client's process group and were still running when the
    /// client ended (killed since); servers the transcript knows of are under `servers`.
    pub escaped: Vec<Leftover>,
    /// Where the harness's own time in this trial went.
    pub phases: Phases,
    /// What the trial's canary listener saw, for a case whose script names the canary, and
    /// (isolated trials) what the canaries of its network namespace saw.
    pub canary: Option<super::canary::CanaryRun>,
    /// Why the trial was not run: its case needs a network namespace and none could be made
    /// here (the client was never started).
    pub unavailable: Option<String>,
    /// The DNS questions the namespace's DNS fake answered (isolated trials).
    pub dns: Vec<String>,
    /// What each extra server (a case's `servers`) recorded, by name; empty for a case
    /// without them. `records` is the main server's alone.
    pub others: BTreeMap<String, Result<Vec<Record>, String>>,
    /// A traces case (`traces`): what the trial's OTLP receiver collected. The spans are
    /// also appended to `records` as `span` events.
    pub traces: Option<super::traces::TracesRun>,
}

/// The harness's own time in one trial, step by step (the bench's per-trial cost breakdown).
/// `client` is the client's run from spawn to exit: the time the trial waits, not the
/// harness's cost; `spawn` is the part of it spent starting the client's process.
#[derive(Debug, Clone, Copy, Default)]
pub struct Phases {
    /// The trial's directory and command line (and over HTTPS the fake's start, also below).
    pub prepare: Duration,
    /// Starting the HTTPS fake (a bind and a task; the certificates are made once per run).
    pub fake_start: Duration,
    /// Starting the client's process (fork and exec of its shell).
    pub spawn: Duration,
    /// From the client's spawn to its end.
    pub client: Duration,
    /// Stopping the HTTPS fake.
    pub fake_stop: Duration,
    /// Reading and parsing the transcript.
    pub transcript: Duration,
    /// Waiting for the servers to vanish after the client exited.
    pub vanish: Duration,
    /// Killing what is left of the trial and looking for escaped processes.
    pub clean_up: Duration,
    /// Taking what the client printed.
    pub output: Duration,
    /// Parsing the outcome lines, running every check and grading.
    pub checks: Duration,
    /// Rendering the normalized transcript and comparing it with its snapshot.
    pub snapshot: Duration,
    /// The failure report and the trial's record.
    pub record: Duration,
}

impl Phases {
    /// The phases by name, in order, with `client` last (it is not the harness's cost).
    pub fn named(&self) -> [(&'static str, Duration); 12] {
        [
            ("prepare", self.prepare),
            ("fake_start", self.fake_start),
            ("spawn", self.spawn),
            ("fake_stop", self.fake_stop),
            ("transcript", self.transcript),
            ("vanish", self.vanish),
            ("clean_up", self.clean_up),
            ("output", self.output),
            ("checks", self.checks),
            ("snapshot", self.snapshot),
            ("record", self.record),
            ("client", self.client),
        ]
    }
}

/// What a trial needs besides the case: the harness's binaries and, made on first use,
/// the run's HTTP environment.
pub struct Harness {
    /// The harness's binaries.
    pub bins: Bins,
    http: OnceLock<Result<HttpEnv, String>>,
    /// How long making the HTTP environment (runtime, certificates, CA file) took.
    http_setup: OnceLock<Duration>,
    /// Worker threads of the HTTP environment's runtime.
    http_workers: usize,
    bearer_token: Option<String>,
}

impl Harness {
    /// A harness using these binaries.
    pub fn new(bins: Bins) -> Harness {
        Harness {
            bins,
            http: OnceLock::new(),
            http_setup: OnceLock::new(),
            http_workers: 2,
            bearer_token: None,
        }
    }

    /// Serves the HTTPS fakes with `workers` threads (a run gives one per trial at once).
    pub fn with_http_workers(mut self, workers: usize) -> Harness {
        self.http_workers = workers.max(1);
        self
    }

    /// Gives every HTTPS trial this bearer token (the fake requires it), not only the cases
    /// that ask for a fresh one.
    pub fn with_bearer_token(mut self, token: Option<String>) -> Harness {
        self.bearer_token = token.filter(|t| !t.is_empty());
        self
    }

    fn http(&self) -> Result<&HttpEnv, String> {
        self.http
            .get_or_init(|| {
                let started = Instant::now();
                let env = HttpEnv::with_workers(self.http_workers);
                let _ = self.http_setup.set(started.elapsed());
                env
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The stdio fake's argv playing `play` and recording into `transcript` (unwrapped).
    fn fake_argv(&self, play: &Path, transcript: &Path) -> Vec<String> {
        self.bins.fake_argv(false, play, transcript)
    }

    /// How long the run's HTTP environment took to make (its certificates included), once
    /// an HTTPS trial has asked for it.
    pub fn http_setup(&self) -> Option<Duration> {
        self.http_setup.get().copied()
    }
}

/// Runs `client_cmd` (a shell command line) for one case over one transport, in four
/// steps: prepare the client's command (and the HTTP fake), run it to its end, read what the
/// fake recorded, then kill whatever of the trial is left and collect what the client printed.
pub fn run(case: &Case, transport: Transport, client_cmd: &str, harness: &Harness) -> TrialRun {
    let mut phases = Phases::default();
    let mut clock = Instant::now();
    let mut lap = move || {
        let now = Instant::now();
        let took = now - clock;
        clock = now;
        took
    };
    let dir = match tempfile::Builder::new().prefix("mcp-harness-").tempdir() {
        Ok(dir) => dir,
        Err(e) => {
            return TrialRun::failed_to_start(format!("cannot make a temporary directory: {e}"));
        }
    };
    let transcript_path = dir.path().join("transcript.jsonl");
    // Only a case whose script names the canary gets one (see `canary.rs`).
    let canary = match case.scenario.server.uses_canary() {
        false => None,
        true => match super::canary::Canary::start() {
            Ok(canary) => Some(canary),
            Err(e) => {
                return TrialRun::failed_to_start(format!("cannot start the canary: {e}"));
            }
        },
    };
    // An authorization trial's redirect URI (see `auth_env.rs`).
    let auth = match (transport, case.scenario.server.auth.is_some()) {
        (Transport::Https, true) => match super::auth_env::AuthEnv::start() {
            Ok(auth) => Some(auth),
            Err(e) => return TrialRun::failed_to_start(e),
        },
        _ => None,
    };
    // An isolated case's trial runs in a namespace of its own, or not at all.
    let mut isolation = match case.scenario.network {
        Network::Host => None,
        Network::Isolated => match Isolation::make(dir.path()) {
            Ok(isolation) => Some(isolation),
            Err(Ok(Unavailable(why))) => return TrialRun::unavailable(why),
            Err(Err(e)) => return TrialRun::failed_to_start(e),
        },
    };
    // A traces case's OTLP receiver (see `trial/traces.rs`).
    let receiver = match traces::start(case, isolation.as_mut()) {
        Ok(receiver) => receiver,
        Err(e) => return TrialRun::failed_to_start(e),
    };
    let (mut cmd, http, mut extras) = match prepare(
        case,
        transport,
        client_cmd,
        harness,
        dir.path(),
        Listeners {
            canary: canary.as_ref().map(super::canary::Canary::origin),
            auth: auth.as_ref(),
            isolation: isolation.as_mut(),
        },
        &mut phases,
    ) {
        Ok(prepared) => prepared,
        Err(e) => return TrialRun::failed_to_start(e),
    };
    traces::hand(&mut cmd, case, receiver.as_ref());
    let token = http.as_ref().and_then(|h| h.token.clone());
    let token_given = token.is_some();
    let deadline = Duration::from_millis(case.scenario.deadline_ms);
    phases.prepare = lap();
    let ran = match run_client(cmd, deadline) {
        Ok(ran) => ran,
        Err(e) => return TrialRun::failed_to_start(format!("cannot start `{client_cmd}`: {e}")),
    };
    phases.client = lap();
    phases.spawn = ran.spawn;
    let issued = http.map(HttpTrial::stop).unwrap_or_default();
    extras.stop();
    let traced = receiver.and_then(|r| traces::finish(r, case, token.as_deref(), &issued));
    let secrets = super::auth_env::secrets(token, issued);
    phases.fake_stop = lap();
    let mut canary = canary.map(super::canary::Canary::finish);
    let mut dns = Vec::new();
    if let Some(isolation) = isolation.take() {
        let seen = isolation.finish();
        dns = seen.dns;
        canary
            .get_or_insert_with(Default::default)
            .seen
            .extend(seen.connections);
    }
    let auth_redirect = auth.map(super::auth_env::AuthEnv::finish);
    let mut records = read_transcript(&transcript_path, &secrets);
    traces::append(traced.as_ref(), &mut records);
    let others = extras.records(&secrets);
    phases.transcript = lap();
    // Over HTTP the fake lives in this process: there is no server process to track. Over
    // stdio every server counts, each known by the transcript on its command line.
    let mut pids: Vec<(u32, &Path, Option<&str>)> = Vec::new();
    if transport == Transport::Stdio {
        let main = records.iter().flat_map(|r| started_pids(r));
        pids.extend(main.map(|pid| (pid, transcript_path.as_path(), None)));
        for (name, records) in &others {
            let (Ok(records), Some(path)) = (records, extras.transcript(name)) else {
                continue;
            };
            let started = started_pids(records).into_iter();
            pids.extend(started.map(|pid| (pid, path, Some(name.as_str()))));
        }
    }
    // The runner's own patience scales with the run, like every duration of the case: at 45
    // processes waiting on two cores, a reader thread went 500 ms without running and a
    // client's outcome lines were lost.
    let scale = case.scenario.time_scale.factor();
    let vanish_grace = VANISH_GRACE.mul_f64(scale);
    let servers = pids
        .iter()
        .map(|&(pid, path, server)| ServerProcess {
            pid,
            outlived_client: !procs::gone_within(pid, path, vanish_grace),
            server: server.map(str::to_owned),
        })
        .collect();
    phases.vanish = lap();
    let marker = format!("{TRIAL_MARKER}={}", dir.path().display());
    let escaped = clean_up(&ran, &pids, &marker);
    phases.clean_up = lap();
    let printed = collect_output(&ran, &secrets, PIPE_PATIENCE.mul_f64(scale));
    phases.output = lap();
    TrialRun {
        stdout_lines: printed.stdout_lines,
        stdout_overflow: printed.stdout_overflow,
        stderr_tail: printed.stderr_tail,
        end: ran.end,
        elapsed: ran.elapsed,
        records,
        servers,
        token_given,
        secret_leaked: printed.secret_leaked,
        auth_redirect,
        escaped,
        phases,
        canary,
        unavailable: None,
        dns,
        others,
        traces: traced,
    }
}

/// What the trial listens with besides the fake: the loopback canary's origin, an
/// authorization trial's redirect listener, and the network namespace of an isolated trial.
struct Listeners<'a> {
    canary: Option<&'a str>,
    auth: Option<&'a super::auth_env::AuthEnv>,
    isolation: Option<&'a mut Isolation>,
}

/// Step 1: the client's command line with the driver contract's variables, and for HTTPS
/// the trial's fake server, started (its URL is the client's last argument).
fn prepare<'h>(
    case: &Case,
    transport: Transport,
    client_cmd: &str,
    harness: &'h Harness,
    dir: &Path,
    listeners: Listeners<'_>,
    phases: &mut Phases,
) -> Result<(Command, Option<HttpTrial<'h>>, servers::Extras<'h>), String> {
    let Listeners {
        canary,
        auth,
        isolation,
    } = listeners;
    let transcript_path = dir.join("transcript.jsonl");
    let s = &case.scenario;
    let plan = s.plan_json().to_string();
    let versions = case.versions();
    let mut cmd = Command::new("/bin/sh");
    // `"$@"` appends the URL (if any) as the client's last argument.
    cmd.arg("-c")
        .arg(format!("{client_cmd} \"$@\""))
        .arg("mcp-harness-client")
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("MCP_HARNESS_CONTRACT", "1")
        .env("MCP_HARNESS_SCENARIO", &case.id)
        .env("MCP_HARNESS_TRANSPORT", transport.contract_name())
        .env("MCP_HARNESS_PLAN", plan)
        .env("MCP_HARNESS_TIMEOUT_MS", s.timeout_ms.to_string())
        .env("MCP_HARNESS_PROTOCOL_VERSION", &versions.protocol)
        .env(
            "MCP_HARNESS_SHUTDOWN_GRACE_MS",
            s.shutdown_grace_ms.to_string(),
        )
        .env(
            "MCP_CONFORMANCE_SCENARIO",
            s.official_scenario.as_deref().unwrap_or(&case.id),
        )
        .env("MCP_CONFORMANCE_PROTOCOL_VERSION", &versions.protocol)
        .env(TRIAL_MARKER, dir)
        .env_remove("MCP_HARNESS_BEARER_TOKEN")
        .env_remove("MCP_HARNESS_LOCAL_ORIGINS")
        .env_remove(super::timings::VAR)
        .env_remove("MCP_HARNESS_ERA")
        .env_remove("MCP_HARNESS_LEGACY_PROTOCOL_VERSION")
        .env_remove(servers::VAR)
        .env_remove("MCP_CONFORMANCE_CONTEXT");
    // The authorization variables are set only on authorization trials (by the HTTP env).
    for var in [
        "MCP_HARNESS_AUTH_REDIRECT_URI",
        "MCP_HARNESS_AUTH_CLIENT_ID",
        "MCP_HARNESS_AUTH_CLIENT_SECRET",
        "MCP_HARNESS_AUTH_CLIENT_METADATA_URL",
        "MCP_HARNESS_AUTH_CLIENT_AUTH_METHOD",
        "MCP_HARNESS_AUTH_CLIENT_ISSUER",
    ] {
        cmd.env_remove(var);
    }
    // The era variables are set only where a case asks for an era, so legacy cases see
    // exactly what they saw before the modern era existed.
    if let Some(era) = s.client_era {
        cmd.env("MCP_HARNESS_ERA", era.as_str());
    }
    if let Some(legacy) = &versions.legacy {
        cmd.env("MCP_HARNESS_LEGACY_PROTOCOL_VERSION", legacy);
    }
    // The trial's canary origin, written where the script names it, for either fake.
    let played;
    let case = match canary {
        Some(origin) => {
            let mut copy = case.clone();
            copy.scenario.server = case.scenario.server.with_canary(origin)?;
            played = copy;
            &played
        }
        None => case,
    };
    match transport {
        Transport::Stdio => {
            // The fake plays the trial as prepared here: it loads no case of its own.
            let play_path = dir.join("play.json");
            Play::of(case).write(&play_path)?;
            let server_argv =
                harness
                    .bins
                    .fake_argv(case.scenario.server.wrapped, &play_path, &transcript_path);
            cmd.env(
                "MCP_HARNESS_SERVER_COMMAND",
                serde_json::to_string(&server_argv).unwrap_or_default(),
            );
            let main = serde_json::json!({ "argv": server_argv });
            let extras = servers::prepare(case, transport, harness, dir, main, &mut cmd)?;
            Ok((cmd, None, extras))
        }
        Transport::Https => {
            let token = harness.bearer_token.as_deref();
            let env = harness.http()?;
            let started = Instant::now();
            let trial = match isolation {
                None => env.start_trial(case, &transcript_path, token, auth, Vec::new())?,
                Some(isolation) => {
                    isolation.confine(&mut cmd);
                    let listeners = std::mem::take(&mut isolation.fake_listeners);
                    env.start_trial(case, &transcript_path, token, auth, listeners)?
                }
            };
            phases.fake_start = started.elapsed();
            cmd.envs(trial.vars.iter().map(|(k, v)| (k, v)))
                .arg(&trial.url);
            // What the official suite hands its clients beside the scenario's name.
            let official = s.official_scenario.as_deref();
            if let Some(context) = official.and_then(|o| super::official::context(o, &trial.vars)) {
                cmd.env("MCP_CONFORMANCE_CONTEXT", context);
            }
            let main = serde_json::json!({ "url": trial.url });
            let extras = servers::prepare(case, transport, harness, dir, main, &mut cmd)?;
            Ok((cmd, Some(trial), extras))
        }
    }
}

/// The client while and after it ran: how it ended, and its pipes still being read.
struct Ran {
    end: ClientEnd,
    elapsed: Duration,
    /// How long starting its process took.
    spawn: Duration,
    /// Which other starts could hold copies of its pipes.
    mark: procs::StartMark,
    /// Its process group (the shell's pid).
    pgid: u32,
    /// The names of its stdout and stderr pipes, to find processes still holding them.
    pipes: Vec<String>,
    stdout: Option<output::Reader<output::Lines>>,
    stderr: Option<output::Reader<output::Tail>>,
}

/// Step 2: starts the client and waits for it to exit, to flood its stdout, or for the
/// deadline (then its process group is killed).
fn run_client(mut cmd: Command, deadline: Duration) -> std::io::Result<Ran> {
    let start = Instant::now();
    let (mut child, mark) = procs::spawn(&mut cmd)?;
    let spawn = start.elapsed();
    let pgid = child.id();
    let pipes: Vec<String> = [
        child.stdout.as_ref().and_then(procs::pipe_name),
        child.stderr.as_ref().and_then(procs::pipe_name),
    ]
    .into_iter()
    .flatten()
    .collect();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().map(|out| {
        let tx = tx.clone();
        output::read_stdout(out, move || {
            let _ = tx.send(Waited::Flooded);
        })
    });
    let stderr = child.stderr.take().map(output::read_stderr);
    let waiter = tx.clone();
    thread::spawn(move || {
        let _ = waiter.send(Waited::Exited(child.wait()));
    });
    let end = wait_for_end(&rx, start + deadline, pgid);
    drop(tx);
    Ok(Ran {
        end,
        elapsed: start.elapsed(),
        spawn,
        mark,
        pgid,
        pipes,
        stdout,
        stderr,
    })
}

/// Step 3: what the fake recorded (a missing file is an empty transcript), with the bearer
/// token and every other secret redacted wherever the client put it in a message.
fn read_transcript(path: &Path, secrets: &[String]) -> Result<Vec<Record>, String> {
    let mut text = std::fs::read_to_string(path)
        .or_else(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Ok(String::new()),
            _ => Err(e),
        })
        .map_err(|e| format!("cannot read the transcript: {e}"))?;
    for secret in secrets {
        output::redact(&mut text, secret);
        if let Ok(quoted) = serde_json::to_string(secret) {
            output::redact(&mut text, quoted.trim_matches('"'));
        }
    }
    transcript::parse(&text)
}

/// Step 4a: nothing of the trial may outlive it: kills the client's group, any server that
/// left it, then whatever else still carries the trial's marker or holds the client's pipes;
/// returns the last kind (processes that escaped the group).
fn clean_up(ran: &Ran, servers: &[(u32, &Path, Option<&str>)], marker: &str) -> Vec<Leftover> {
    procs::kill_group(ran.pgid);
    for &(pid, transcript_path, _) in servers {
        procs::kill_and_reap(pid, transcript_path);
    }
    let known: Vec<u32> = servers.iter().map(|&(pid, ..)| pid).collect();
    procs::sweep_trial(marker, &ran.pipes, ran.mark, ran.pgid, &known)
}

/// What the client printed, bounded, escaped and with its token redacted.
struct Printed {
    stdout_lines: Vec<String>,
    stdout_overflow: bool,
    stderr_tail: String,
    secret_leaked: bool,
}

/// Step 4b: takes what the client printed once its pipes closed (or after a short patience,
/// when an escaped process holds them); a client that printed its credential is caught here,
/// and the credential goes no further.
fn collect_output(ran: &Ran, secrets: &[String], patience: Duration) -> Printed {
    let (mut stdout_lines, stdout_overflow, mut stderr_tail) = match (&ran.stdout, &ran.stderr) {
        (Some(out), Some(err)) => {
            output::settle(out, err, patience);
            let lines = out.take();
            (lines.lines, lines.overflow, err.take().text())
        }
        _ => Default::default(),
    };
    let mut secret_leaked = false;
    if !secrets.is_empty() {
        // Outcome lines are read decoded later (an error message goes into results.json), so
        // a token the client wrote with JSON escapes (`\/`, `\u0041`) is searched for in the
        // line as its decoded value reads.
        for line in stdout_lines.iter_mut() {
            if let Ok(value) = serde_json::from_str::<serde_json::Value>(line)
                && let Ok(plain) = serde_json::to_string(&value)
            {
                *line = plain;
            }
        }
        for text in stdout_lines
            .iter_mut()
            .chain(std::iter::once(&mut stderr_tail))
        {
            for secret in secrets {
                secret_leaked |= output::redact(text, secret);
                if let Ok(quoted) = serde_json::to_string(secret) {
                    secret_leaked |= output::redact(text, quoted.trim_matches('"'));
                }
            }
        }
    }
    Printed {
        stdout_lines,
        stdout_overflow,
        stderr_tail,
        secret_leaked,
    }
}

/// What the runner waits for while the client runs.
enum Waited {
    /// The client (the shell running it) exited.
    Exited(std::io::Result<ExitStatus>),
    /// Its stdout went past the cap.
    Flooded,
}

/// Waits for the client to exit, to flood its stdout, or for the deadline; in the last two
/// cases kills its process group first.
fn wait_for_end(rx: &mpsc::Receiver<Waited>, deadline: Instant, pgid: u32) -> ClientEnd {
    let left = deadline.saturating_duration_since(Instant::now());
    let stopped = match rx.recv_timeout(left) {
        Ok(Waited::Exited(Ok(status))) => {
            return match (status.code(), status.signal()) {
                (Some(code), _) => ClientEnd::Exited(code),
                (None, Some(sig)) => ClientEnd::Signaled(sig),
                (None, None) => ClientEnd::Exited(-1),
            };
        }
        Ok(Waited::Exited(Err(e))) => {
            return ClientEnd::SpawnFailed(format!("cannot wait for the client: {e}"));
        }
        Ok(Waited::Flooded) => ClientEnd::OutputCapped,
        Err(_) => ClientEnd::Deadline,
    };
    procs::kill_group(pgid);
    let until = Instant::now() + Duration::from_secs(5);
    while let Ok(waited) = rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
        if let Waited::Exited(_) = waited {
            break;
        }
    }
    stopped
}

impl TrialRun {
    fn failed_to_start(message: String) -> TrialRun {
        TrialRun {
            stdout_lines: Vec::new(),
            stdout_overflow: false,
            stderr_tail: String::new(),
            end: ClientEnd::SpawnFailed(message),
            elapsed: Duration::ZERO,
            records: Ok(Vec::new()),
            servers: Vec::new(),
            token_given: false,
            secret_leaked: false,
            auth_redirect: None,
            escaped: Vec::new(),
            phases: Phases::default(),
            canary: None,
            unavailable: None,
            dns: Vec::new(),
            others: BTreeMap::new(),
            traces: None,
        }
    }

    /// A trial not run because its case needs a network namespace and none can be made here.
    fn unavailable(why: String) -> TrialRun {
        TrialRun {
            end: ClientEnd::SpawnFailed(format!("not run: {why}")),
            unavailable: Some(why),
            ..TrialRun::failed_to_start(String::new())
        }
    }

    /// The main server's processes (stdio), in launch order: what lifecycle checks judge.
    pub fn main_servers(&self) -> Vec<&ServerProcess> {
        self.servers.iter().filter(|p| p.server.is_none()).collect()
    }

    /// The messages the client sent to its servers, in order (valid JSON only).
    pub fn received(&self) -> Vec<&serde_json::Value> {
        self.records
            .iter()
            .flatten()
            .filter_map(|r| match &r.event {
                Event::Received { message } => Some(message),
                _ => None,
            })
            .collect()
    }
}

fn started_pids(records: &[Record]) -> Vec<u32> {
    records
        .iter()
        .filter(|r| r.event == Event::Started)
        .map(|r| r.pid)
        .collect()
}
