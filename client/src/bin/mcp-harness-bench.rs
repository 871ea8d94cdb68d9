//! `mcp-harness-bench`: times the reference client doing a fixed amount of work against one
//! server, and prints the figures as one JSON line, so `cargo xtask bench` can compare it side
//! by side with another SDK's bench binary that takes the same flags and prints the same line.
//!
//! ```text
//! mcp-harness-bench --transport stdio --server-command '["mcp-fake-stdio", "--play", ...]'
//! mcp-harness-bench --transport http --url https://localhost:PORT/mcp --ca-file ca.pem
//!     [--calls 1000] [--in-flight 16] [--tool echo]
//! ```
//!
//! The work: connect (spawn or TLS, plus `initialize`), `tools/list`, `--calls` sequential
//! `tools/call`s, then `--calls` more with `--in-flight` of them outstanding at once, then
//! close. Output: `{"init_ms", "list_ms", "sequential": {...}, "concurrent": {...},
//! "peak_rss_kb"}` with per-call latency percentiles in microseconds.
//!
//! It runs on a current-thread runtime: the client has no CPU work worth spreading over
//! threads, one thread avoids cross-thread wake-ups on every answer, and on a two-core machine
//! it leaves the other core to the server being driven. (The client crate does not enable
//! Tokio's multi-thread runtime either.)

use std::process::ExitCode;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::stream;
use mcp_harness_client::{Client, ClientOptions, HttpOptions, StdioCommand, ToolOutput};
use serde_json::{Value, json};

const USAGE: &str = "usage: mcp-harness-bench (--transport stdio --server-command '<JSON argv>' | \
                     --transport http --url URL [--ca-file PATH]) [--calls N] [--in-flight K] \
                     [--tool NAME]";

/// Where the server is.
#[derive(Debug, PartialEq)]
enum Target {
    Stdio(Vec<String>),
    Http { url: String, ca_files: Vec<String> },
}

/// The parsed command line.
#[derive(Debug, PartialEq)]
struct Args {
    target: Target,
    calls: usize,
    in_flight: usize,
    tool: String,
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let (mut transport, mut command, mut url) = (None, None, None);
    let mut ca_files = Vec::new();
    let (mut calls, mut in_flight, mut tool) = (1000, 16, "echo".to_owned());
    let mut args = args.into_iter();
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        let number = |text: String| {
            text.parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{flag} needs a positive number, found {text:?}"))
        };
        match flag.as_str() {
            "--transport" => transport = Some(value()?),
            "--server-command" => command = Some(value()?),
            "--url" => url = Some(value()?),
            "--ca-file" => ca_files.push(value()?),
            "--calls" => calls = number(value()?)?,
            "--in-flight" => in_flight = number(value()?)?,
            "--tool" => tool = value()?,
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    let target =
        match (transport.as_deref(), command, url) {
            (Some("stdio"), Some(command), None) => {
                let argv: Vec<String> = serde_json::from_str(&command)
                    .map_err(|e| format!("--server-command is not a JSON array of strings: {e}"))?;
                if argv.is_empty() {
                    return Err("--server-command is empty".into());
                }
                Target::Stdio(argv)
            }
            (Some("http"), None, Some(url)) => Target::Http { url, ca_files },
            _ => return Err(
                "expected --transport stdio with --server-command, or --transport http with --url"
                    .into(),
            ),
        };
    Ok(Args {
        target,
        calls,
        in_flight,
        tool,
    })
}

/// The `p`-th percentile (nearest rank) of `sorted`, which must be sorted ascending.
fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The summary of one batch of calls.
fn batch(seconds: f64, mut latencies: Vec<u64>) -> Value {
    latencies.sort_unstable();
    json!({
        "calls": latencies.len(),
        "seconds": seconds,
        "p50_us": percentile(&latencies, 50.0),
        "p99_us": percentile(&latencies, 99.0),
    })
}

fn micros(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX)
}

/// One timed `tools/call` that must come back as text.
async fn timed_call(client: &Client, tool: &str) -> Result<u64, String> {
    let started = Instant::now();
    let output = client
        .call_tool(tool, json!({"text": "hello"}))
        .await
        .map_err(|e| format!("tools/call {tool} failed: {e}"))?;
    let elapsed = micros(started.elapsed());
    match output.output {
        ToolOutput::Text(_) => Ok(elapsed),
        ToolOutput::Structured(_) => Err(format!("tools/call {tool} gave no text result")),
    }
}

/// Peak resident set size of this process, from `/proc/self/status` (0 when unknown).
fn peak_rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

async fn connect(target: &Target) -> Result<Client, String> {
    let options = ClientOptions::default();
    let connected = match target {
        Target::Stdio(argv) => {
            let command = StdioCommand::from_argv(argv.clone()).ok_or("empty server command")?;
            Client::connect_stdio(&command, options).await
        }
        Target::Http { url, ca_files } => {
            let http = HttpOptions {
                ca_files: ca_files.iter().map(Into::into).collect(),
                ..HttpOptions::default()
            };
            Client::connect_http(url, http, options).await
        }
    };
    connected.map_err(|e| format!("connecting failed: {e}"))
}

async fn bench(args: &Args) -> Result<Value, String> {
    let started = Instant::now();
    let client = connect(&args.target).await?;
    let init_ms = started.elapsed().as_secs_f64() * 1e3;

    let outcome = async {
        let started = Instant::now();
        let tools = client
            .list_tools()
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        let list_ms = started.elapsed().as_secs_f64() * 1e3;
        if !tools.iter().any(|t| t["name"] == args.tool.as_str()) {
            return Err(format!("the server does not list the tool {:?}", args.tool));
        }

        let started = Instant::now();
        let mut sequential = Vec::with_capacity(args.calls);
        for _ in 0..args.calls {
            sequential.push(timed_call(&client, &args.tool).await?);
        }
        let sequential = batch(started.elapsed().as_secs_f64(), sequential);

        let started = Instant::now();
        let concurrent: Vec<u64> = stream::iter(0..args.calls)
            .map(|_| timed_call(&client, &args.tool))
            .buffer_unordered(args.in_flight)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect::<Result<_, _>>()?;
        let mut concurrent = batch(started.elapsed().as_secs_f64(), concurrent);
        concurrent["in_flight"] = json!(args.in_flight);
        Ok((list_ms, sequential, concurrent))
    }
    .await;
    client.close().await;
    let (list_ms, sequential, concurrent) = outcome?;
    Ok(json!({
        "init_ms": init_ms,
        "list_ms": list_ms,
        "sequential": sequential,
        "concurrent": concurrent,
        "peak_rss_kb": peak_rss_kb(),
    }))
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(problem) => {
            eprintln!("mcp-harness-bench: {problem}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match bench(&args).await {
        Ok(figures) => {
            println!("{figures}");
            ExitCode::SUCCESS
        }
        Err(problem) => {
            eprintln!("mcp-harness-bench: {problem}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let hundred: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&hundred, 50.0), 50);
        assert_eq!(percentile(&hundred, 99.0), 99);
        assert_eq!(percentile(&hundred, 100.0), 100);
        assert_eq!(percentile(&[7], 50.0), 7);
        assert_eq!(percentile(&[7], 99.0), 7);
        assert_eq!(percentile(&[1, 2], 50.0), 1);
        assert_eq!(percentile(&[1, 2], 99.0), 2);
        assert_eq!(percentile(&[], 50.0), 0);
    }

    #[test]
    fn both_transports_parse_and_bad_lines_are_refused() {
        let args = |list: &[&str]| parse_args(list.iter().map(|s| s.to_string()));
        let stdio = args(&[
            "--transport",
            "stdio",
            "--server-command",
            r#"["fake","-x"]"#,
        ]);
        assert_eq!(
            stdio.unwrap(),
            Args {
                target: Target::Stdio(vec!["fake".into(), "-x".into()]),
                calls: 1000,
                in_flight: 16,
                tool: "echo".into(),
            }
        );
        let http = args(&[
            "--transport",
            "http",
            "--url",
            "https://localhost:1/mcp",
            "--ca-file",
            "ca.pem",
            "--calls",
            "5",
            "--in-flight",
            "2",
            "--tool",
            "t",
        ])
        .unwrap();
        assert_eq!(
            (http.calls, http.in_flight, http.tool.as_str()),
            (5, 2, "t")
        );
        for bad in [
            &["--transport", "stdio"][..],
            &["--transport", "http", "--server-command", "[\"x\"]"],
            &["--transport", "stdio", "--server-command", "[]"],
            &[
                "--transport",
                "stdio",
                "--server-command",
                "[\"x\"]",
                "--calls",
                "0",
            ],
            &["--bogus"],
        ] {
            assert!(args(bad).is_err(), "{bad:?}");
        }
    }
}
