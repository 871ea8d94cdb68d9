//! `mcp-harness-rmcp-bench`: the rmcp counterpart of the reference client's bench binary, so
//! `cargo xtask bench` can time both SDKs doing the same work against the same fake.
//!
//! Connects (timing rmcp's `serve`, spawn or HTTP client included), lists tools once, makes
//! `--calls` sequential `tools/call` requests, then `--calls` more with `--in-flight` of them
//! outstanding at a time (`buffer_unordered`), closes, and prints one JSON line on stdout.
//! Calls go through rmcp's plain `call_tool`, without its per-request timeout option.
//! Errors go to stderr with exit status 1.

mod connect;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use futures::StreamExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use serde_json::Map;

use connect::{Client, chain, connect};

pub enum Target {
    Stdio {
        argv: Vec<String>,
    },
    Http {
        url: String,
        ca_file: Option<String>,
    },
}

struct Args {
    target: Target,
    calls: usize,
    in_flight: usize,
    tool: String,
}

/// Per-call latencies of one phase and its wall time.
struct Phase {
    seconds: f64,
    micros: Vec<u64>,
}

const USAGE: &str = "usage: mcp-harness-rmcp-bench (--transport stdio --server-command '<JSON argv>' \
    | --transport http --url URL --ca-file PATH) [--calls N] [--in-flight K] [--tool NAME]";

// Two workers on this two-core machine; rmcp's service loop and the callers share them.
#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    let result = match parse_args(std::env::args().skip(1)) {
        Ok(args) => run(&args).await,
        Err(e) => Err(format!("{e}\n{USAGE}")),
    };
    match result {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mcp-harness-rmcp-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: &Args) -> Result<String, String> {
    let started = Instant::now();
    let mut client = connect(&args.target).await?;
    let init = started.elapsed();

    let started = Instant::now();
    let tools = client
        .list_all_tools()
        .await
        .map_err(|e| format!("tools/list failed: {}", chain(&e)))?;
    let list = started.elapsed();
    if !tools.iter().any(|tool| tool.name == args.tool) {
        eprintln!(
            "mcp-harness-rmcp-bench: the server does not list {:?}",
            args.tool
        );
    }

    let started = Instant::now();
    let mut micros = Vec::with_capacity(args.calls);
    for _ in 0..args.calls {
        micros.push(timed_call(&client, &args.tool).await?);
    }
    let sequential = Phase {
        seconds: started.elapsed().as_secs_f64(),
        micros,
    };

    let started = Instant::now();
    let micros = futures::stream::iter(0..args.calls)
        .map(|_| timed_call(&client, &args.tool))
        .buffer_unordered(args.in_flight)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let concurrent = Phase {
        seconds: started.elapsed().as_secs_f64(),
        micros,
    };

    client
        .close()
        .await
        .map_err(|e| format!("close failed: {e}"))?;

    Ok(format!(
        r#"{{"init_ms":{:.3},"list_ms":{:.3},"sequential":{{"calls":{},{}}},"concurrent":{{"calls":{},"in_flight":{},{}}},"peak_rss_kb":{}}}"#,
        ms(init),
        ms(list),
        args.calls,
        sequential.summary(),
        args.calls,
        args.in_flight,
        concurrent.summary(),
        peak_rss_kb()?,
    ))
}

/// One `tools/call NAME {}`; returns its latency in microseconds. A tool error is an error.
async fn timed_call(client: &Client, tool: &str) -> Result<u64, String> {
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(Map::new());
    let started = Instant::now();
    let result = client.call_tool(params).await;
    let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
    match result {
        Ok(CallToolResult {
            is_error: Some(true),
            content,
            ..
        }) => {
            let text: Vec<&str> = content
                .iter()
                .filter_map(ContentBlock::as_text)
                .map(|t| t.text.as_str())
                .collect();
            Err(format!(
                "tools/call {tool} returned a tool error: {}",
                text.join("\n")
            ))
        }
        Ok(_) => Ok(micros),
        Err(e) => Err(format!("tools/call {tool} failed: {}", chain(&e))),
    }
}

impl Phase {
    fn summary(mut self) -> String {
        self.micros.sort_unstable();
        format!(
            r#""seconds":{:.6},"p50_us":{},"p99_us":{}"#,
            self.seconds,
            nearest_rank(&self.micros, 50),
            nearest_rank(&self.micros, 99),
        )
    }
}

/// Nearest-rank percentile of sorted values: the ceil(p/100 * n)-th smallest.
fn nearest_rank(sorted: &[u64], percent: usize) -> u64 {
    let rank = (percent * sorted.len()).div_ceil(100).max(1);
    sorted.get(rank - 1).copied().unwrap_or(0)
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// VmHWM (peak resident set) from /proc/self/status, in kB.
fn peak_rss_kb() -> Result<u64, String> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| format!("cannot read /proc/self/status: {e}"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| "no VmHWM line in /proc/self/status".to_owned())
}

fn parse_args(mut raw: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut transport, mut command, mut url, mut ca_file) = (None, None, None, None);
    let (mut calls, mut in_flight, mut tool) = (1000, 16, "echo".to_owned());
    while let Some(flag) = raw.next() {
        let (name, inline) = match flag.split_once('=') {
            Some((name, value)) => (name.to_owned(), Some(value.to_owned())),
            None => (flag, None),
        };
        let mut value = || {
            inline
                .clone()
                .or_else(|| raw.next())
                .ok_or(format!("{name} needs a value"))
        };
        match name.as_str() {
            "--transport" => transport = Some(value()?),
            "--server-command" => command = Some(value()?),
            "--url" => url = Some(value()?),
            "--ca-file" => ca_file = Some(value()?),
            "--calls" => calls = count(&name, &value()?)?,
            "--in-flight" => in_flight = count(&name, &value()?)?,
            "--tool" => tool = value()?,
            _ => return Err(format!("unknown argument {name:?}")),
        }
    }
    let target = match transport.as_deref() {
        Some("stdio") => {
            let raw = command.ok_or("--transport stdio needs --server-command")?;
            let argv = serde_json::from_str::<Vec<String>>(&raw)
                .map_err(|e| format!("--server-command is not a JSON array of strings: {e}"))?;
            Target::Stdio { argv }
        }
        Some("http") => Target::Http {
            url: url.ok_or("--transport http needs --url")?,
            ca_file,
        },
        Some(other) => return Err(format!("unknown --transport {other:?} (stdio or http)")),
        None => return Err("--transport is required".into()),
    };
    Ok(Args {
        target,
        calls,
        in_flight,
        tool,
    })
}

fn count(flag: &str, value: &str) -> Result<usize, String> {
    match value.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{flag} must be a positive integer, got {value:?}")),
    }
}
