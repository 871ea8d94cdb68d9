//! Running one trial: the client under test, started through the driver contract with the
//! fake's command line, watched until it exits or its deadline passes.
//!
//! Everything the client prints is bounded (a flood cannot exhaust memory), the deadline is
//! enforced by killing the client's process group, and what the fake recorded is read back
//! afterwards together with whether each server process outlived the client.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{OnceLock, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use mcp_harness_scenarios::Case;
use mcp_harness_scenarios::model::Transport;
use mcp_harness_scenarios::transcript::{self, Event, Record};

use super::http_env::HttpEnv;
use super::procs;

/// Where the harness's own binaries are.
#[derive(Debug, Clone)]
pub struct Bins {
    /// The stdio fake server.
    pub fake_stdio: PathBuf,
    /// The reference client's driver.
    pub driver: PathBuf,
}

/// The most outcome output kept from a client; the rest is drained and dropped.
const STDOUT_CAP: usize = 1 << 20;
/// How much of the client's stderr is kept (its tail).
const STDERR_TAIL: usize = 8 << 10;
/// How long a server may take to vanish after the client exits (a kill just sent).
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
    /// Whether the client printed the bearer token it was given (already redacted above).
    pub secret_leaked: bool,
}

/// What a trial needs besides the case: the harness's binaries and, made on first use,
/// the run's HTTP environment.
pub struct Harness {
    /// The harness's binaries.
    pub bins: Bins,
    http: OnceLock<Result<HttpEnv, String>>,
}

impl Harness {
    /// A harness using these binaries.
    pub fn new(bins: Bins) -> Harness {
        Harness {
            bins,
            http: OnceLock::new(),
        }
    }

    fn http(&self) -> Result<&HttpEnv, String> {
        self.http
            .get_or_init(HttpEnv::new)
            .as_ref()
            .map_err(Clone::clone)
    }
}

/// Runs `client_cmd` (a shell command line) for one case over one transport.
pub fn run(case: &Case, transport: Transport, client_cmd: &str, harness: &Harness) -> TrialRun {
    let dir = match tempfile::Builder::new().prefix("mcp-harness-").tempdir() {
        Ok(dir) => dir,
        Err(e) => {
            return TrialRun::failed_to_start(format!("cannot make a temporary directory: {e}"));
        }
    };
    let transcript_path = dir.path().join("transcript.jsonl");
    let s = &case.scenario;
    let plan = serde_json::to_string(&s.plan).unwrap_or_default();
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
        .env_remove("MCP_HARNESS_BEARER_TOKEN")
        .env_remove("MCP_HARNESS_ERA")
        .env_remove("MCP_HARNESS_LEGACY_PROTOCOL_VERSION");
    // The era variables are set only where a case asks for an era, so legacy cases see
    // exactly what they saw before the modern era existed.
    if let Some(era) = s.client_era {
        cmd.env("MCP_HARNESS_ERA", era.as_str());
    }
    if let Some(legacy) = &versions.legacy {
        cmd.env("MCP_HARNESS_LEGACY_PROTOCOL_VERSION", legacy);
    }
    let http = match transport {
        Transport::Stdio => {
            let mut server_argv = vec![
                harness.bins.fake_stdio.to_string_lossy().into_owned(),
                "--scenario".to_owned(),
                case.path.to_string_lossy().into_owned(),
                "--transcript".to_owned(),
                transcript_path.to_string_lossy().into_owned(),
            ];
            if let Some(rev) = &case.revision {
                server_argv.extend(["--revision".to_owned(), rev.clone()]);
            }
            cmd.env(
                "MCP_HARNESS_SERVER_COMMAND",
                serde_json::to_string(&server_argv).unwrap_or_default(),
            );
            None
        }
        Transport::Https => {
            let started = harness
                .http()
                .and_then(|env| env.start(case, &transcript_path));
            match started {
                Ok(trial) => {
                    cmd.envs(trial.vars.iter().map(|(k, v)| (k, v)))
                        .arg(&trial.url);
                    Some(trial)
                }
                Err(e) => return TrialRun::failed_to_start(e),
            }
        }
    };
    let secret = http.as_ref().and_then(|h| h.token.clone());

    let start = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => return TrialRun::failed_to_start(format!("cannot start `{client_cmd}`: {e}")),
    };
    let pgid = child.id();
    let stdout = child.stdout.take().map(|out| spawn_reader(out, read_lines));
    let stderr = child.stderr.take().map(|err| spawn_reader(err, read_tail));

    let (done_tx, done_rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = done_tx.send(child.wait());
    });
    let deadline = Duration::from_millis(s.deadline_ms);
    let end = match done_rx.recv_timeout(deadline) {
        Ok(Ok(status)) => match (status.code(), status.signal()) {
            (Some(code), _) => ClientEnd::Exited(code),
            (None, Some(sig)) => ClientEnd::Signaled(sig),
            (None, None) => ClientEnd::Exited(-1),
        },
        Ok(Err(e)) => ClientEnd::SpawnFailed(format!("cannot wait for the client: {e}")),
        Err(_) => {
            procs::kill_group(pgid);
            let _ = done_rx.recv_timeout(Duration::from_secs(5));
            ClientEnd::Deadline
        }
    };
    let elapsed = start.elapsed();
    if let Some(http) = http {
        http.stop();
    }

    let records = std::fs::read_to_string(&transcript_path)
        .or_else(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Ok(String::new()),
            _ => Err(e),
        })
        .map_err(|e| format!("cannot read the transcript: {e}"))
        .and_then(|text| transcript::parse(&text));
    // Over HTTP the fake lives in this process: there is no server process to track.
    let pids = match (transport, &records) {
        (Transport::Stdio, Ok(records)) => started_pids(records),
        _ => Vec::new(),
    };
    let servers = pids
        .iter()
        .map(|&pid| ServerProcess {
            pid,
            outlived_client: !procs::gone_within(pid, &transcript_path, VANISH_GRACE),
        })
        .collect();

    // Nothing of this trial may outlive it: the client's group, then any server that left it.
    procs::kill_group(pgid);
    for &pid in &pids {
        procs::kill_and_reap(pid, &transcript_path);
    }
    let (mut stdout_lines, stdout_overflow) = join_reader(stdout).unwrap_or_default();
    let mut stderr_tail = join_reader(stderr).unwrap_or_default();
    // A client that prints its credential is caught here, and the credential goes no further.
    let mut secret_leaked = false;
    if let Some(secret) = &secret {
        for text in stdout_lines
            .iter_mut()
            .chain(std::iter::once(&mut stderr_tail))
        {
            if text.contains(secret.as_str()) {
                secret_leaked = true;
                *text = text.replace(secret.as_str(), "[redacted]");
            }
        }
    }
    TrialRun {
        stdout_lines,
        stdout_overflow,
        stderr_tail,
        end,
        elapsed,
        records,
        servers,
        secret_leaked,
    }
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
            secret_leaked: false,
        }
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

fn spawn_reader<R, T, F>(source: R, read: F) -> mpsc::Receiver<T>
where
    R: Read + Send + 'static,
    T: Send + 'static,
    F: FnOnce(R) -> T + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(read(source));
    });
    rx
}

/// A reader still blocked (a grandchild that escaped the group holds the pipe) is left
/// behind after a short wait; the trial goes on with nothing from it.
fn join_reader<T>(rx: Option<mpsc::Receiver<T>>) -> Option<T> {
    rx?.recv_timeout(Duration::from_millis(500)).ok()
}

fn read_lines(source: impl Read) -> (Vec<String>, bool) {
    let mut reader = BufReader::new(source);
    let (mut lines, mut kept) = (Vec::new(), 0usize);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let room = (STDOUT_CAP - kept) as u64 + 1;
        match reader.by_ref().take(room).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return (lines, false),
            Ok(n) => kept += n,
        }
        if kept > STDOUT_CAP {
            // Keep draining so the client never blocks on a full pipe.
            let _ = std::io::copy(&mut reader, &mut std::io::sink());
            return (lines, true);
        }
        let line = String::from_utf8_lossy(&buf);
        lines.push(line.trim_end_matches(['\n', '\r']).to_owned());
    }
}

fn read_tail(mut source: impl Read) -> String {
    let mut tail = Vec::new();
    let mut chunk = [0u8; 8192];
    while let Ok(n) = source.read(&mut chunk) {
        if n == 0 {
            break;
        }
        tail.extend_from_slice(&chunk[..n]);
        if tail.len() > 2 * STDERR_TAIL {
            tail.drain(..tail.len() - STDERR_TAIL);
        }
    }
    let start = tail.len().saturating_sub(STDERR_TAIL);
    String::from_utf8_lossy(&tail[start..]).into_owned()
}
