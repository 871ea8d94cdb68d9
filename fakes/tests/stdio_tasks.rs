//! The built `mcp-fake-stdio` playing a 2025-11-25 task, driven line by line as a client
//! would: a task-augmented call, a `tasks/result` that waits while the fake goes on reading
//! and answering, the input request it sends on stdout, the outcome; and the arrival times
//! (`at_ms`) the transcript keeps.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_harness_scenarios::transcript::{self, Event};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(5);

struct Fake {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    dir: std::path::PathBuf,
}

impl Fake {
    fn start(server: Value) -> Fake {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir =
            std::env::temp_dir().join(format!("mcp-fake-tasks-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        let play = json!({"server": server, "request_timeout_ms": 10_000});
        std::fs::write(dir.join("play.json"), play.to_string()).expect("the play file");
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-fake-stdio"))
            .arg("--play")
            .arg(dir.join("play.json"))
            .arg("--transcript")
            .arg(dir.join("transcript.jsonl"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the fake");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Fake {
            child,
            stdin,
            lines,
            dir,
        }
    }

    fn write(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .expect("write to the fake");
        stdin.flush().expect("flush");
    }

    fn next(&self) -> Value {
        let line = self.lines.recv_timeout(WAIT).expect("a line in time");
        serde_json::from_str(&line).expect("a JSON line")
    }

    fn nothing_for(&self, wait: Duration) {
        if let Ok(line) = self.lines.recv_timeout(wait) {
            panic!("expected nothing yet, got {line}");
        }
    }

    /// Ends the fake (end of its stdin) and returns its transcript.
    fn finish(mut self) -> Vec<transcript::Record> {
        self.stdin = None;
        let _ = self.child.wait();
        let text = std::fs::read_to_string(self.dir.join("transcript.jsonl")).unwrap_or_default();
        transcript::parse(&text).expect("the transcript parses")
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn request(id: u32, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[test]
fn a_legacy_task_result_waits_while_the_fake_keeps_answering() {
    let mut fake = Fake::start(json!({
        "tasks": [{"tool": "slow", "poll_interval_ms": 50, "phases": [
            {"status": "working", "ms": 150},
            {"status": "input_required",
             "input_requests": {"confirm": {"method": "elicitation/create",
                                            "params": {"message": "go on?"}}}},
            {"status": "completed"}],
            "result": {"content": [{"type": "text", "text": "done"}]}}]
    }));
    fake.write(request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25"}),
    ));
    let init = fake.next();
    assert_eq!(
        init["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"],
        json!({})
    );
    fake.write(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call = json!({"name": "slow", "arguments": {}, "task": {"ttl": 5000}});
    fake.write(request(2, "tools/call", call));
    let created = fake.next();
    assert_eq!(created["id"], 2);
    assert_eq!(created["result"]["task"]["taskId"], "task-1");
    assert_eq!(created["result"]["task"]["status"], "working");

    fake.write(request(3, "tasks/result", json!({"taskId": "task-1"})));
    // While tasks/result waits, the fake reads on and answers.
    fake.write(request(4, "tasks/get", json!({"taskId": "task-1"})));
    let polled = fake.next();
    assert_eq!(polled["id"], 4);
    assert_eq!(polled["result"]["status"], "working");
    assert_eq!(polled["result"]["pollInterval"], 50);
    // Then the task needs input: the request comes on stdout, tied to the task.
    let asked = fake.next();
    assert_eq!(asked["method"], "elicitation/create");
    assert_eq!(
        asked["params"]["_meta"]["io.modelcontextprotocol/related-task"],
        json!({"taskId": "task-1"})
    );
    fake.write(request(5, "tasks/get", json!({"taskId": "task-1"})));
    assert_eq!(fake.next()["result"]["status"], "input_required");
    fake.nothing_for(Duration::from_millis(150));
    fake.write(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept"}}));
    let outcome = fake.next();
    assert_eq!(outcome["id"], 3);
    assert_eq!(outcome["result"]["content"][0]["text"], "done");
    assert_eq!(
        outcome["result"]["_meta"]["io.modelcontextprotocol/related-task"],
        json!({"taskId": "task-1"})
    );

    let records = fake.finish();
    let received: Vec<(&Value, Option<u64>)> = records
        .iter()
        .filter_map(|r| match &r.event {
            Event::Received { message } => Some((message, r.at_ms)),
            _ => None,
        })
        .collect();
    assert!(received.iter().all(|(_, at)| at.is_some()), "{received:?}");
    let at = |id: u32| {
        received
            .iter()
            .find(|(m, _)| m["id"] == id && m.get("method").is_some())
            .and_then(|(_, at)| *at)
            .expect("recorded")
    };
    // The answer to the input request came after a pause of at least 150 ms.
    let answered = received
        .iter()
        .find(|(m, _)| m.get("result").is_some())
        .and_then(|(_, at)| *at)
        .expect("the client's answer is recorded");
    assert!(answered >= at(5) + 150, "{answered} vs {}", at(5));
    assert!(
        records
            .iter()
            .filter(|r| !matches!(r.event, Event::Received { .. }))
            .all(|r| r.at_ms.is_none())
    );
}
