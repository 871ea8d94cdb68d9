//! The floor: what a call costs when neither the client nor the server does any work, so the
//! client's own cost per call can be read off against it.
//!
//! - **The echo server** ([`serve_echo`], run as `xtask bench --serve-echo`) is the least a
//!   stdio MCP server can be and still be accepted by a client: it reads a line, finds the
//!   `"method":"` and the first `"id":` by substring search (no JSON parsing), and writes a
//!   canned answer for that method with the id spliced in. `initialize` echoes the offered
//!   `protocolVersion` (so any client's version is accepted), `tools/list` lists `echo`,
//!   `tools/call` answers one text block, any other request an empty result, and lines without
//!   an id (notifications, answers) get nothing. Output is flushed once no further complete
//!   line is waiting, so a burst of requests costs one write. The first `"id":` is taken as the
//!   message's id: both clients write it before `params`, and the bench's arguments hold none.
//! - **The pipe round trip** ([`pipe`]) drives the same echo server with no client at all:
//!   blocking writes and reads of ready-made `tools/call` lines, sequentially and with the same
//!   number in flight as the clients. A client measured against the echo server, divided by
//!   this, is the client's own cost per call.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::{Child, Command, ExitCode, Stdio};
use std::thread;
use std::time::Instant;

use serde::Serialize;

use super::clients::Batch;
use super::fakes::{INITIALIZED, call_line, initialize_line};
use mcp_harness::conformance::timings::micros;

/// The argv that starts the echo server: this xtask executable in its hidden server mode.
pub fn echo_argv(xtask: &Path) -> Vec<String> {
    vec![
        xtask.display().to_string(),
        "bench".into(),
        "--serve-echo".into(),
    ]
}

/// The echo server's main loop, on this process's stdin and stdout; see the module doc.
pub fn serve_echo() -> ExitCode {
    let mut input = BufReader::with_capacity(64 * 1024, std::io::stdin().lock());
    let mut output = BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = Vec::with_capacity(1024);
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if let Some(reply) = reply_to(&line) {
            if reply
                .iter()
                .try_for_each(|part| output.write_all(part))
                .is_err()
            {
                break;
            }
        }
        // Flush once nothing complete is waiting: a burst of requests gets one write.
        if !input.buffer().contains(&b'\n') && output.flush().is_err() {
            break;
        }
    }
    let _ = output.flush();
    ExitCode::SUCCESS
}

const TOOLS: &[u8] = br#","result":{"tools":[{"name":"echo","description":"Answers with a fixed text block","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}}
"#;
const CALLED: &[u8] = br#","result":{"content":[{"type":"text","text":"hello"}]}}
"#;
const EMPTY: &[u8] = b",\"result\":{}}\n";

/// The canned answer to one request line, in pieces; `None` for a line without an id.
fn reply_to(line: &[u8]) -> Option<[&[u8]; 5]> {
    let method = after(line, b"\"method\":\"")
        .map(|rest| &rest[..rest.iter().position(|b| *b == b'"').unwrap_or(rest.len())])?;
    let id = after(line, b"\"id\":")?;
    let id = id.trim_ascii_start();
    let id = &id[..id
        .iter()
        .position(|b| matches!(b, b',' | b'}'))
        .unwrap_or(id.len())];
    let head: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":";
    Some(match method {
        b"tools/call" => [head, id, CALLED, b"", b""],
        b"tools/list" => [head, id, TOOLS, b"", b""],
        b"initialize" => {
            let version = after(line, b"\"protocolVersion\":\"")
                .map(|rest| &rest[..rest.iter().position(|b| *b == b'"').unwrap_or(0)])
                .unwrap_or(b"2025-06-18");
            [
                head,
                id,
                b",\"result\":{\"protocolVersion\":\"",
                version,
                b"\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"echo-floor\",\"version\":\"0\"}}}\n",
            ]
        }
        _ => [head, id, EMPTY, b"", b""],
    })
}

/// The bytes after the first occurrence of `needle` in `haystack`.
fn after<'a>(haystack: &'a [u8], needle: &[u8]) -> Option<&'a [u8]> {
    haystack
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|at| &haystack[at + needle.len()..])
}

/// The pipe round trip: no client, the same echo server.
#[derive(Debug, Clone, Serialize)]
pub struct Pipe {
    /// One request written, its answer read, one after another.
    pub sequential: Batch,
    /// `in_flight` requests outstanding at once.
    pub concurrent: Batch,
}

/// Measures the pipe round trip against a fresh echo server (`argv`), best of `rounds`.
pub fn pipe(argv: &[String], calls: usize, in_flight: usize, rounds: u32) -> Result<Pipe, String> {
    let mut best: Option<Pipe> = None;
    for _ in 0..rounds.max(1) {
        let run = pipe_once(argv, calls, in_flight)?;
        best = Some(match best {
            None => run,
            Some(b) => Pipe {
                sequential: b.sequential.best(&run.sequential),
                concurrent: b.concurrent.best(&run.concurrent),
            },
        });
    }
    best.ok_or_else(|| "no round ran".into())
}

fn pipe_once(argv: &[String], calls: usize, in_flight: usize) -> Result<Pipe, String> {
    let (program, args) = argv.split_first().ok_or("empty echo server command")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the echo server {program}: {e}"))?;
    let measured = drive(&mut child, calls, in_flight);
    if measured.is_err() {
        let _ = child.kill();
    }
    let _ = child.wait();
    measured
}

fn drive(child: &mut Child, calls: usize, in_flight: usize) -> Result<Pipe, String> {
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("the echo server's pipes were not set up".into());
    };
    let mut input = stdin;
    let mut output = BufReader::with_capacity(64 * 1024, stdout);
    let broken = |e: std::io::Error| format!("the echo server's pipe broke: {e}");
    let mut line = Vec::new();
    let read_answer = |output: &mut BufReader<_>, line: &mut Vec<u8>| {
        line.clear();
        match output.read_until(b'\n', line) {
            Ok(0) => Err("the echo server closed its stdout".to_owned()),
            Ok(_) if line.windows(8).any(|w| w == b"\"result\"") => Ok(()),
            Ok(_) => Err(format!(
                "the echo server answered without a result: {}",
                String::from_utf8_lossy(line).trim()
            )),
            Err(e) => Err(broken(e)),
        }
    };
    input
        .write_all(format!("{}\n", initialize_line()).as_bytes())
        .map_err(broken)?;
    read_answer(&mut output, &mut line)?;
    input
        .write_all(format!("{INITIALIZED}\n").as_bytes())
        .map_err(broken)?;
    let requests: Vec<Vec<u8>> = (1..=calls)
        .map(|id| format!("{}\n", call_line(id)).into_bytes())
        .collect();

    let started = Instant::now();
    let mut latencies = Vec::with_capacity(calls);
    for request in &requests {
        let sent = Instant::now();
        input.write_all(request).map_err(broken)?;
        read_answer(&mut output, &mut line)?;
        latencies.push(micros(sent.elapsed()));
    }
    let sequential = Batch::of(started.elapsed().as_secs_f64(), latencies);

    // Keep `in_flight` outstanding: every answer read lets one more request go, and the
    // requests freed by the answers already buffered go out in one write.
    let started = Instant::now();
    let mut sent_at = Vec::with_capacity(calls);
    let mut latencies = Vec::with_capacity(calls);
    let mut next = 0;
    let mut burst = Vec::with_capacity(in_flight * 128);
    let mut send = |upto: usize, next: &mut usize, sent_at: &mut Vec<Instant>| {
        burst.clear();
        let now = Instant::now();
        while *next < upto.min(calls) {
            burst.extend_from_slice(&requests[*next]);
            sent_at.push(now);
            *next += 1;
        }
        input.write_all(&burst)
    };
    send(in_flight, &mut next, &mut sent_at).map_err(broken)?;
    while latencies.len() < calls {
        read_answer(&mut output, &mut line)?;
        // Answers come back in order from this server.
        latencies.push(micros(sent_at[latencies.len()].elapsed()));
        if !output.buffer().contains(&b'\n') {
            send(latencies.len() + in_flight, &mut next, &mut sent_at).map_err(broken)?;
        }
    }
    let concurrent = Batch::of(started.elapsed().as_secs_f64(), latencies);
    drop(input);
    // Whatever the server still writes is of no interest; let it reach end of file.
    let drain = thread::spawn(move || std::io::copy(&mut output, &mut std::io::sink()));
    let _ = drain.join();
    Ok(Pipe {
        sequential,
        concurrent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joined(parts: Option<[&[u8]; 5]>) -> String {
        String::from_utf8(parts.unwrap().concat()).unwrap()
    }

    #[test]
    fn answers_carry_the_request_id_and_notifications_get_none() {
        let call = joined(reply_to(call_line(7).as_bytes()));
        let v: serde_json::Value = serde_json::from_str(&call).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["result"]["content"][0]["text"], "hello");
        let init = joined(reply_to(
            br#"{"id":"a-1","jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":"2025-03-26"}}"#,
        ));
        let v: serde_json::Value = serde_json::from_str(&init).unwrap();
        assert_eq!(v["id"], "a-1");
        assert_eq!(v["result"]["protocolVersion"], "2025-03-26");
        let list = joined(reply_to(
            br#"{"id":2,"jsonrpc":"2.0","method":"tools/list"}"#,
        ));
        let v: serde_json::Value = serde_json::from_str(&list).unwrap();
        assert_eq!(v["result"]["tools"][0]["name"], "echo");
        let ping = joined(reply_to(br#"{"jsonrpc":"2.0","id": 3,"method":"ping"}"#));
        assert_eq!(ping, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n");
        assert!(reply_to(INITIALIZED.as_bytes()).is_none());
        assert!(reply_to(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).is_none());
    }
}
