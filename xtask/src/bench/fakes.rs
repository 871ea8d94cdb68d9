//! How many requests the stdio fake serves per second, so a client's figures can be checked
//! against it: a client measured against a fake slower than itself would be measuring the
//! fake. The load is pipelined: after the handshake, every `tools/call` is written without
//! waiting, by a thread of its own, while this thread reads the answers.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::Instant;

use serde::Serialize;

use super::clients::Setup;

/// A fake's measured capacity.
#[derive(Debug, Clone, Serialize)]
pub struct Throughput {
    /// Requests answered.
    pub requests: usize,
    /// From the first request written to the last answer read.
    pub seconds: f64,
    /// Requests answered per second.
    pub per_s: f64,
    /// How the load was made.
    pub load: String,
}

impl Throughput {
    /// The capacity from a count and a duration.
    pub fn new(requests: usize, seconds: f64, load: String) -> Throughput {
        Throughput {
            requests,
            seconds,
            per_s: requests as f64 / seconds.max(1e-9),
            load,
        }
    }
}

/// A `tools/call echo` request line.
pub fn call_line(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hello"}}}}}}"#
    )
}

/// An `initialize` request line.
pub fn initialize_line() -> &'static str {
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"xtask-bench","version":"0"}}}"#
}

/// The `notifications/initialized` line.
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// Measures the stdio fake with `requests` pipelined calls.
pub fn stdio(setup: &Setup, requests: usize) -> Result<Throughput, String> {
    let mut child = Command::new(&setup.fake_stdio)
        .arg("--play")
        .arg(&setup.play)
        .arg("--transcript")
        .arg(setup.work.join("fake-stdio-load.jsonl"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", setup.fake_stdio.display()))?;
    let measured = drive(&mut child, requests);
    // Closing stdin (already dropped) ends the fake; kill it if the load failed midway.
    if measured.is_err() {
        let _ = child.kill();
    }
    let _ = child.wait();
    measured
}

fn drive(child: &mut Child, requests: usize) -> Result<Throughput, String> {
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("the fake's pipes were not set up".into());
    };
    let mut input = BufWriter::with_capacity(64 * 1024, stdin);
    let mut output = BufReader::with_capacity(64 * 1024, stdout);
    let broken = |e: std::io::Error| format!("the stdio fake's pipe broke: {e}");
    writeln!(input, "{}", initialize_line()).map_err(broken)?;
    input.flush().map_err(broken)?;
    let mut line = String::new();
    output.read_line(&mut line).map_err(broken)?;
    if !line.contains("\"result\"") {
        return Err(format!(
            "the stdio fake refused initialize: {}",
            line.trim()
        ));
    }
    writeln!(input, "{INITIALIZED}").map_err(broken)?;

    let started = Instant::now();
    let writer = thread::spawn(move || -> std::io::Result<BufWriter<_>> {
        for id in 1..=requests {
            writeln!(input, "{}", call_line(id))?;
        }
        input.flush()?;
        Ok(input)
    });
    let (mut answered, mut failed) = (0, 0);
    while answered < requests {
        line.clear();
        match output.read_line(&mut line) {
            Ok(0) => return Err(format!("the stdio fake stopped after {answered} answers")),
            Ok(_) if line.contains("\"result\"") => answered += 1,
            Ok(_) => {
                answered += 1;
                failed += 1;
            }
            Err(e) => return Err(broken(e)),
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    // Dropping stdin after every answer is in lets the fake exit on end of file.
    drop(
        writer
            .join()
            .map_err(|_| "the writer thread panicked")?
            .map_err(broken)?,
    );
    if failed > 0 {
        return Err(format!(
            "the stdio fake answered {failed} calls with an error"
        ));
    }
    Ok(Throughput::new(
        requests,
        seconds,
        format!("{requests} pipelined tools/call over one stdin pipe"),
    ))
}
