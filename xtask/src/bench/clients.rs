//! The client figures: the reference client's bench binary and rmcp's, run against the same
//! fake in the same run, interleaved round by round (reference, rmcp, then rmcp, reference,
//! ...) so that a noisy moment hits both, each figure keeping its best round.
//!
//! Both binaries take the same flags and print the same one JSON line (see
//! `client/src/bin/mcp-harness-bench.rs`); a fresh fake serves every run.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use mcp_harness_scenarios::Case;
use serde::{Deserialize, Serialize};

use mcp_harness::conformance::http_env::HttpEnv;

/// The longest one bench binary may run before it is killed.
const RUN_LIMIT: Duration = Duration::from_secs(180);

/// What every measurement needs to reach a fake.
#[derive(Clone)]
pub struct Setup<'a> {
    /// Hosts the HTTPS fakes.
    pub env: &'a HttpEnv,
    /// The bench scenario.
    pub case: &'a Case,
    /// The release stdio fake.
    pub fake_stdio: PathBuf,
    /// The argv of the floor's echo server (see `floor`).
    pub echo: Vec<String>,
    /// The bench scenario as the stdio fake plays it (a play file).
    pub play: PathBuf,
    /// A scratch directory (transcripts, reports).
    pub work: PathBuf,
    /// Calls per batch.
    pub calls: usize,
    /// Calls in flight in the concurrent batch.
    pub in_flight: usize,
}

/// One batch of calls, as a bench binary reports it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Batch {
    /// Calls made.
    pub calls: usize,
    /// Wall time of the batch.
    pub seconds: f64,
    /// Median latency per call, in microseconds.
    pub p50_us: u64,
    /// 99th-percentile latency per call, in microseconds.
    pub p99_us: u64,
}

impl Batch {
    /// Calls per second.
    pub fn rate(&self) -> f64 {
        self.calls as f64 / self.seconds.max(1e-9)
    }

    /// A batch from its wall time and its per-call latencies (nearest-rank percentiles, as
    /// the bench binaries compute them).
    pub fn of(seconds: f64, mut latencies: Vec<u64>) -> Batch {
        latencies.sort_unstable();
        let rank = |p: usize| {
            let at = (p * latencies.len()).div_ceil(100).max(1);
            latencies.get(at - 1).copied().unwrap_or(0)
        };
        Batch {
            calls: latencies.len(),
            seconds,
            p50_us: rank(50),
            p99_us: rank(99),
        }
    }

    /// Wall time per call, in microseconds.
    pub fn per_call_us(&self) -> f64 {
        self.seconds * 1e6 / self.calls.max(1) as f64
    }

    /// The better of two batches, figure by figure.
    pub fn best(&self, other: &Batch) -> Batch {
        Batch {
            calls: self.calls,
            seconds: self.seconds.min(other.seconds),
            p50_us: self.p50_us.min(other.p50_us),
            p99_us: self.p99_us.min(other.p99_us),
        }
    }
}

/// The one JSON line a bench binary prints.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Figures {
    /// Connecting, `initialize` included, in milliseconds.
    pub init_ms: f64,
    /// `tools/list`, in milliseconds.
    pub list_ms: f64,
    /// The sequential batch.
    pub sequential: Batch,
    /// The batch with several calls in flight.
    pub concurrent: Batch,
    /// Peak resident set size of the client process (VmHWM), in KiB.
    pub peak_rss_kb: u64,
}

impl Figures {
    /// The better of two runs, figure by figure.
    fn best(&self, other: &Figures) -> Figures {
        Figures {
            init_ms: self.init_ms.min(other.init_ms),
            list_ms: self.list_ms.min(other.list_ms),
            sequential: self.sequential.best(&other.sequential),
            concurrent: self.concurrent.best(&other.concurrent),
            peak_rss_kb: self.peak_rss_kb.min(other.peak_rss_kb),
        }
    }
}

/// A client's best figures over one transport, or why there are none.
pub type Outcome = Result<Figures, String>;

/// Both clients over one transport.
#[derive(Debug, Clone)]
pub struct Pair {
    /// `stdio`, `https` or `floor`.
    pub transport: &'static str,
    /// The reference client.
    pub reference: Outcome,
    /// rmcp.
    pub rmcp: Outcome,
}

/// Builds rmcp's bench binary (release, outside the workspace) and returns its path.
pub fn build_rmcp(root: &Path) -> Result<PathBuf, String> {
    let adapter = root.join("adapters").join("rmcp");
    let target = root.join("target").join("sdk").join("rmcp");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(adapter.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target);
    let (status, _, stderr) = output_within(&mut cmd, Duration::from_secs(1800))?;
    if !status.success() {
        return Err(format!("its build failed ({status}): {}", reason(&stderr)));
    }
    let bin = target.join("release").join("mcp-harness-rmcp-bench");
    match bin.exists() {
        true => Ok(bin),
        false => Err(format!("the build made no {}", bin.display())),
    }
}

/// Runs both clients over each of `transports` (`stdio`, `https`, and `floor`: stdio to the
/// echo server), `rounds` times, interleaved.
pub fn compare(
    setup: &Setup,
    reference: &Path,
    rmcp: &Result<PathBuf, String>,
    rounds: u32,
    transports: &[&'static str],
) -> Vec<Pair> {
    let mut pairs = Vec::new();
    for &transport in transports {
        let (mut ours, mut theirs): (Outcome, Outcome) = (Err(String::new()), Err(String::new()));
        // A discarded warm-up of each, so neither pays alone for a cold start (page cache,
        // the previous phase's after-effects).
        let warm_up = Setup {
            calls: setup.calls.min(200),
            ..setup.clone()
        };
        let _ = run_once(&warm_up, reference, transport, 0, "ref");
        let _ = run_rmcp(&warm_up, rmcp, transport, 0);
        for round in 1..=rounds {
            // Every other round starts with rmcp (ABBA), so a drift or an after-effect of
            // the previous run does not always land on the same client.
            let rmcp_first = round % 2 == 0;
            if rmcp_first {
                keep_best(&mut theirs, run_rmcp(setup, rmcp, transport, round));
            }
            keep_best(
                &mut ours,
                run_once(setup, reference, transport, round, "ref"),
            );
            if !rmcp_first {
                keep_best(&mut theirs, run_rmcp(setup, rmcp, transport, round));
            }
        }
        pairs.push(Pair {
            transport,
            reference: ours,
            rmcp: theirs,
        });
    }
    pairs
}

fn run_rmcp(setup: &Setup, rmcp: &Result<PathBuf, String>, transport: &str, round: u32) -> Outcome {
    match rmcp {
        Ok(bin) => run_once(setup, bin, transport, round, "rmcp"),
        Err(why) => Err(why.clone()),
    }
}

/// Keeps the best figures so far; one failed round does not hide a good one.
fn keep_best(best: &mut Outcome, run: Outcome) {
    *best = match (&*best, run) {
        (Ok(old), Ok(new)) => Ok(old.best(&new)),
        (Ok(old), Err(_)) => Ok(old.clone()),
        (Err(_), run) => run,
    };
}

/// One run of a bench binary against a fresh fake.
fn run_once(setup: &Setup, bin: &Path, transport: &str, round: u32, who: &str) -> Outcome {
    let transcript = setup.work.join(format!("{who}-{transport}-{round}.jsonl"));
    let mut cmd = Command::new(bin);
    cmd.args(["--calls", &setup.calls.to_string()])
        .args(["--in-flight", &setup.in_flight.to_string()])
        .args(["--tool", "echo"]);
    let stdio_server = match transport {
        "floor" => Some(serde_json::json!(setup.echo)),
        "stdio" => Some(serde_json::json!([
            setup.fake_stdio,
            "--play",
            setup.play,
            "--transcript",
            transcript
        ])),
        _ => None,
    };
    let trial = match stdio_server {
        Some(argv) => {
            cmd.args([
                "--transport",
                "stdio",
                "--server-command",
                &argv.to_string(),
            ]);
            None
        }
        None => {
            let trial = setup.env.start(setup.case, &transcript)?;
            let ca = trial
                .vars
                .iter()
                .find(|(name, _)| *name == "MCP_HARNESS_CA_FILE");
            cmd.args(["--transport", "http", "--url", &trial.url]);
            if let Some((_, ca)) = ca {
                cmd.args(["--ca-file", ca]);
            }
            Some(trial)
        }
    };
    let ran = output_within(&mut cmd, RUN_LIMIT);
    if let Some(trial) = trial {
        trial.stop();
    }
    let (status, stdout, stderr) = ran?;
    if !status.success() {
        return Err(format!(
            "{transport} run failed ({status}): {}",
            reason(&stderr)
        ));
    }
    let line = stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    serde_json::from_str(line)
        .map_err(|e| format!("unreadable {transport} figures ({e}): {line:?}"))
}

/// A one-line reason from a failed command's stderr: its first `error` line, else its last
/// line.
pub fn reason(text: &str) -> &str {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first_error = lines.clone().find(|l| l.starts_with("error"));
    first_error
        .or_else(|| lines.next_back())
        .unwrap_or("(no output)")
}

/// Runs `cmd` to the end with its output captured, killing it after `limit`.
pub fn output_within(
    cmd: &mut Command,
    limit: Duration,
) -> Result<(ExitStatus, String, String), String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(10)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{:?} ran longer than {limit:?}", cmd.get_program()));
            }
            Err(e) => return Err(format!("cannot wait for {:?}: {e}", cmd.get_program())),
        }
    };
    let joined = |t: thread::JoinHandle<String>| t.join().unwrap_or_default();
    Ok((status, joined(stdout), joined(stderr)))
}
