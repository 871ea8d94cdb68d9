//! Runs the built `mcp-fake-stdio` binary as a client would: writes requests to its stdin,
//! reads its answers, ends it, and checks the transcript it leaves.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_harness_scenarios::transcript::{self, Event};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(5);

/// A scratch directory holding one play file (what the runner hands the fake) and its
/// transcript.
struct Case {
    dir: PathBuf,
    play: PathBuf,
    transcript: PathBuf,
}

impl Case {
    fn new(name: &str, server: Value) -> Case {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!(
            "mcp-fake-stdio-{name}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("create temp dir");
        let play = json!({"server": server, "request_timeout_ms": 10_000});
        let path = dir.join("play.json");
        std::fs::write(&path, play.to_string()).expect("write the play file");
        Case {
            transcript: dir.join("transcript.jsonl"),
            play: path,
            dir,
        }
    }

    fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-fake-stdio"));
        command
            .arg("--play")
            .arg(&self.play)
            .arg("--transcript")
            .arg(&self.transcript);
        command
    }

    /// Starts the fake with piped stdin/stdout; stderr is piped and never read, to show that
    /// start-up noise cannot stall the protocol.
    fn start(&self) -> Fake {
        let mut child = self
            .command()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the fake");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let (lines, answers) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if lines.send(line).is_err() {
                    return;
                }
            }
        });
        Fake {
            child,
            stdin,
            answers,
        }
    }

    fn events(&self) -> Vec<(u32, Event)> {
        let text = std::fs::read_to_string(&self.transcript).unwrap_or_default();
        transcript::parse(&text)
            .expect("the transcript parses")
            .into_iter()
            .map(|r| (r.pid, r.event))
            .collect()
    }
}

impl Drop for Case {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

struct Fake {
    child: Child,
    stdin: Option<ChildStdin>,
    answers: Receiver<String>,
}

impl Fake {
    fn write(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .expect("write to the fake");
        stdin.flush().expect("flush");
    }

    fn next_answer(&self) -> Value {
        let line = self.answers.recv_timeout(WAIT).expect("an answer in time");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("answer {line:?} is not JSON: {e}"))
    }

    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    fn wait(&mut self) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            if start.elapsed() > WAIT {
                let _ = self.child.kill();
                panic!("the fake did not exit in time");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn request(id: Value, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

#[test]
fn answers_requests_records_everything_and_exits_on_eof() {
    let tools = json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]});
    let case = Case::new(
        "basic",
        json!({
            "stderr_noise_bytes": 300_000,
            "handlers": [
                {"method": "tools/list", "reply": {"result": tools}},
                {"method": "tools/call", "params": {"name": "slow"}, "reply": "hang"},
            ],
        }),
    );
    let mut fake = case.start();

    let initialize = request(
        json!(1),
        "initialize",
        json!({"protocolVersion": "2025-06-18"}),
    );
    fake.write(&initialize);
    let answer = fake.next_answer();
    assert_eq!(answer["id"], json!(1));
    assert_eq!(answer["result"]["protocolVersion"], "2025-06-18");

    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    fake.write(&initialized.to_string());
    fake.write("this is not json");
    let parse_error = fake.next_answer();
    assert_eq!(parse_error["id"], Value::Null);
    assert_eq!(parse_error["error"]["code"], json!(-32700));

    fake.write(&request(json!("two"), "tools/list", json!({})));
    let listed = fake.next_answer();
    assert_eq!(
        listed,
        json!({"jsonrpc": "2.0", "id": "two", "result": tools})
    );

    let call = request(
        json!(3),
        "tools/call",
        json!({"name": "slow", "arguments": {}}),
    );
    fake.write(&call);
    fake.write(&request(json!(4), "ping", json!({})));
    assert_eq!(
        fake.next_answer(),
        json!({"jsonrpc": "2.0", "id": 4, "result": {}})
    );

    fake.close_stdin();
    assert_eq!(fake.wait().code(), Some(0));
    match fake.answers.recv_timeout(WAIT) {
        Err(RecvTimeoutError::Disconnected) => {}
        other => panic!("the hanging call must get no answer, got {other:?}"),
    }

    let events = case.events();
    let pid = fake.child.id();
    assert!(events.iter().all(|(p, _)| *p == pid), "{events:?}");
    let received = |s: &str| Event::Received {
        message: serde_json::from_str(s).expect("test JSON"),
    };
    let sent = |message: Value| Event::Sent { message };
    let expected = vec![
        Event::Started,
        received(&initialize),
        sent(answer),
        received(&initialized.to_string()),
        Event::ReceivedInvalid {
            line: "this is not json".into(),
            // The parser's own words, whatever they are.
            error: serde_json::from_str::<Value>("this is not json")
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default(),
        },
        sent(parse_error),
        received(&request(json!("two"), "tools/list", json!({}))),
        sent(listed),
        received(&call),
        received(&request(json!(4), "ping", json!({}))),
        sent(json!({"jsonrpc": "2.0", "id": 4, "result": {}})),
        Event::StdinEof,
        Event::Exited { code: 0 },
    ];
    let actual: Vec<Event> = events.into_iter().map(|(_, e)| e).collect();
    assert_eq!(actual, expected);
}

#[test]
fn ignores_eof_and_exits_on_sigterm() {
    let case = Case::new("sigterm", json!({"on_eof": "ignore", "on_sigterm": "exit"}));
    let mut fake = case.start();
    fake.write(&request(json!(1), "ping", json!({})));
    assert_eq!(fake.next_answer()["id"], json!(1));

    fake.close_stdin();
    let start = Instant::now();
    while !case.events().iter().any(|(_, e)| *e == Event::StdinEof) {
        assert!(start.elapsed() < WAIT, "no StdinEof recorded");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        fake.child.try_wait().expect("try_wait").is_none(),
        "exited on EOF"
    );

    let killed = Command::new("kill")
        .args(["-TERM", &fake.child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    assert_eq!(fake.wait().code(), Some(0));

    let events: Vec<Event> = case.events().into_iter().map(|(_, e)| e).collect();
    let tail = [
        Event::StdinEof,
        Event::Signal {
            name: "SIGTERM".into(),
        },
        Event::Exited { code: 0 },
    ];
    assert!(events.ends_with(&tail), "{events:?}");
}

#[test]
fn plays_delays_raw_lines_and_scripted_exits() {
    let case = Case::new(
        "faults",
        json!({"handlers": [
            {"method": "tools/call", "params": {"name": "late"}, "delay_ms": 300, "reply": {"result": {"late": true}}},
            {"method": "tools/call", "reply": {"raw_line": "{oops"}},
            {"method": "tools/list", "reply": {"exit": 3}},
        ]}),
    );
    let mut fake = case.start();
    fake.write(&request(json!(1), "tools/call", json!({"name": "late"})));
    fake.write(&request(json!(2), "ping", json!({})));
    assert_eq!(fake.next_answer()["id"], json!(2));
    assert_eq!(fake.next_answer()["id"], json!(1));

    fake.write(&request(json!(3), "tools/call", json!({"name": "other"})));
    let raw = fake.answers.recv_timeout(WAIT).expect("the raw line");
    assert_eq!(raw, "{oops");

    fake.write(&request(json!(4), "tools/list", json!({})));
    assert_eq!(fake.wait().code(), Some(3));
    let events: Vec<Event> = case.events().into_iter().map(|(_, e)| e).collect();
    assert!(events.contains(&Event::SentRaw {
        line: "{oops".into()
    }));
    assert_eq!(
        events.last(),
        Some(&Event::Exited { code: 3 }),
        "{events:?}"
    );
}

#[test]
fn a_rule_with_times_answers_that_many_requests_then_gives_way() {
    let case = Case::new(
        "times",
        json!({"handlers": [
            {"method": "tools/list", "params": {"cursor": "A"}, "times": 3,
             "reply": {"result": {"tools": [], "nextCursor": "A"}}},
            {"method": "tools/list", "params": {"cursor": "A"}, "reply": {"result": {"tools": []}}},
        ]}),
    );
    let mut fake = case.start();
    for id in 1..=5 {
        fake.write(&request(json!(id), "tools/list", json!({"cursor": "A"})));
        let answer = fake.next_answer();
        assert_eq!(answer["id"], json!(id));
        assert_eq!(
            answer["result"].get("nextCursor").is_some(),
            id <= 3,
            "{answer}"
        );
    }
    fake.close_stdin();
    assert_eq!(fake.wait().code(), Some(0));
}

#[test]
fn bad_usage_and_bad_play_files_exit_2_naming_the_problem() {
    let bin = env!("CARGO_BIN_EXE_mcp-fake-stdio");
    let run = |command: &mut Command| {
        let out = command.output().expect("run the fake");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stderr) = run(Command::new(bin).arg("--bogus"));
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("--bogus") && stderr.contains("usage"),
        "{stderr}"
    );

    let case = Case::new("invalid", json!({}));
    std::fs::write(&case.play, "{\"server\": {}, \"request_timeout_ms\": -1}")
        .expect("overwrite the play file");
    let (code, stderr) = run(case.command().stdin(Stdio::null()));
    assert_eq!(code, Some(2));
    let name = case.play.display().to_string();
    assert!(
        stderr.contains(&name)
            && stderr.contains("invalid play file")
            && stderr.contains("request_timeout_ms"),
        "{stderr}"
    );

    std::fs::remove_file(&case.play).expect("remove the play file");
    let (code, stderr) = run(case.command().stdin(Stdio::null()));
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains(&name) && stderr.contains("cannot read"),
        "{stderr}"
    );
}

/// Reads the fake's stdout as byte lines (they need not be UTF-8) in a thread; a last line
/// without its newline comes through at end of file.
fn byte_lines(stdout: std::process::ChildStdout) -> Receiver<Vec<u8>> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        loop {
            let mut line = Vec::new();
            match reader.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) if tx.send(line).is_err() => return,
                Ok(_) => {}
            }
        }
    });
    rx
}

fn next_line(lines: &Receiver<Vec<u8>>) -> Vec<u8> {
    lines.recv_timeout(WAIT).expect("a line in time")
}

#[test]
fn hostile_faults_are_played_on_the_pipes() {
    let case = Case::new(
        "hostile",
        json!({"handlers": [
            {"method": "tools/call", "params": {"name": "junk"}, "reply": {"result": {}},
             "faults": {"before": [{"raw": "{oops"}, {"message": {"jsonrpc": "2.0", "method": "n"}, "repeat": 3},
                                   {"bytes": [255, 254]}],
                        "padding_bytes": 100, "duplicate_after_ms": 50}},
            {"method": "tools/call", "params": {"name": "bad"}, "reply": {"result": {"t": "a\u{fffd}"}},
             "faults": {"invalid_utf8": true, "drip_ms": 1}},
            {"method": "tools/call", "params": {"name": "half"}, "reply": {"result": {"t": "x"}},
             "faults": {"truncate": "exit"}},
        ]}),
    );
    let mut child = case
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the fake");
    let mut stdin = child.stdin.take().expect("stdin");
    let lines = byte_lines(child.stdout.take().expect("stdout"));
    let mut send = |line: String| {
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    };

    send(request(json!(1), "tools/call", json!({"name": "junk"})));
    assert_eq!(next_line(&lines), b"{oops\n");
    for _ in 0..3 {
        assert_eq!(
            next_line(&lines),
            b"{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n"
        );
    }
    assert_eq!(next_line(&lines), b"\xff\xfe\n");
    let answer: Value = serde_json::from_slice(&next_line(&lines)).unwrap();
    let image = &answer["result"]["content"][0];
    assert_eq!(
        (image["type"].as_str(), image["data"].as_str().map(str::len)),
        (Some("image"), Some(100))
    );
    let again: Value = serde_json::from_slice(&next_line(&lines)).unwrap();
    assert_eq!(again, answer, "the duplicate");

    send(request(json!(2), "tools/call", json!({"name": "bad"})));
    let bad = next_line(&lines);
    assert!(std::str::from_utf8(&bad).is_err());
    let mended = String::from_utf8_lossy(&bad).into_owned();
    let mended: Value = serde_json::from_str(&mended).unwrap();
    assert_eq!(mended["result"]["t"], "a\u{fffd}");

    send(request(json!(3), "tools/call", json!({"name": "half"})));
    let half = next_line(&lines);
    assert!(
        !half.ends_with(b"\n") && half.starts_with(b"{\"jsonrpc\""),
        "{half:?}"
    );
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(1));

    let events: Vec<Event> = case.events().into_iter().map(|(_, e)| e).collect();
    let noted = events
        .iter()
        .any(|e| matches!(e, Event::SentRaw { line } if line.contains("2 more times")));
    assert!(noted, "{events:?}");
    let recorded_padding = events.iter().any(|e| {
        matches!(e, Event::Sent { message } if message["result"]["content"][0]["data"] == "<100 bytes of filler>")
    });
    assert!(recorded_padding, "{events:?}");
    assert_eq!(events.last(), Some(&Event::Exited { code: 1 }));
}

#[test]
fn a_closed_stdout_a_stderr_flood_and_an_answered_notification() {
    let case = Case::new(
        "closing",
        json!({"handlers": [
            {"method": "notifications/initialized", "reply": {"result": {}}},
            {"method": "tools/call", "params": {"name": "chatty"}, "reply": {"result": {}},
             "faults": {"stderr_bytes": 1_000_000}},
            {"method": "tools/call", "params": {"name": "last"}, "reply": {"result": {}},
             "faults": {"then": "close_stdout"}},
        ]}),
    );
    let mut child = case
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the fake");
    let mut stdin = child.stdin.take().expect("stdin");
    let lines = byte_lines(child.stdout.take().expect("stdout"));
    let mut send = |line: String| {
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    };
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    let answer: Value = serde_json::from_slice(&next_line(&lines)).unwrap();
    assert_eq!(answer, json!({"jsonrpc": "2.0", "id": null, "result": {}}));

    // The flood fills the unread stderr pipe, so the answer waits until someone reads it.
    send(request(json!(1), "tools/call", json!({"name": "chatty"})));
    assert!(lines.recv_timeout(Duration::from_millis(300)).is_err());
    let mut stderr = child.stderr.take().expect("stderr");
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let answer: Value = serde_json::from_slice(&next_line(&lines)).unwrap();
    assert_eq!(answer["id"], 1);

    send(request(json!(2), "tools/call", json!({"name": "last"})));
    let answer: Value = serde_json::from_slice(&next_line(&lines)).unwrap();
    assert_eq!(answer["id"], 2);
    // End of file on stdout while the process lives on; it is deaf from now on.
    assert!(matches!(
        lines.recv_timeout(WAIT),
        Err(RecvTimeoutError::Disconnected)
    ));
    send(request(json!(3), "ping", json!({})));
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        child.try_wait().expect("try_wait").is_none(),
        "still running"
    );
    drop(stdin);
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(0));
    let events: Vec<Event> = case.events().into_iter().map(|(_, e)| e).collect();
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::Received { message } if message["id"] == 3))
    );
    assert_eq!(events.last(), Some(&Event::Exited { code: 0 }));
}

#[test]
fn a_modern_fake_wants_meta_and_has_no_initialize() {
    let case = Case::new("modern", json!({"era": "modern"}));
    let mut fake = case.start();
    let meta = json!({"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }});
    fake.write(&request(
        json!(1),
        "initialize",
        json!({"protocolVersion": "2025-11-25"}),
    ));
    assert_eq!(fake.next_answer()["error"]["code"], -32601);
    fake.write(&request(json!(2), "server/discover", meta.clone()));
    let found = fake.next_answer();
    assert_eq!(found["id"], 2);
    assert_eq!(found["result"]["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(found["result"]["resultType"], "complete");
    fake.write(&request(json!(3), "tools/list", json!({})));
    assert_eq!(fake.next_answer()["error"]["code"], -32602);
    fake.close_stdin();
    assert!(fake.wait().success());
}

/// A client that gives up on a call at the first junk line ahead of its reply, sends its next
/// request at once and closes stdin as soon as that one is answered (issue 11): the fake still
/// plays the first handler's script whole, in order, and records all of it.
#[test]
fn a_handlers_script_is_played_whole_whatever_the_client_does() {
    let junk = [
        "{\"jsonrpc\": \"2.0\", \"id\": ",
        "not JSON",
        "{\"cut\": \"str",
    ];
    let case = Case::new(
        "whole-script",
        json!({"handlers": [
            {"method": "tools/call", "params": {"name": "noisy"},
             "reply": {"result": {"content": [{"type": "text", "text": "answered"}]}},
             "faults": {"before": junk.iter().map(|j| json!({"raw": j})).collect::<Vec<_>>()}},
            {"method": "tools/call", "params": {"name": "echo"},
             "reply": {"result": {"content": [{"type": "text", "text": "ok"}]}}},
        ]}),
    );
    // The race this guards against is lost most of the time, so a few rounds show it.
    for _ in 0..5 {
        let _ = std::fs::remove_file(&case.transcript);
        let mut child = case
            .command()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the fake");
        let mut stdin = child.stdin.take().expect("stdin");
        let lines = byte_lines(child.stdout.take().expect("stdout"));
        let mut send = |line: String| {
            stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
            stdin.flush().unwrap();
        };
        send(request(json!(1), "tools/call", json!({"name": "noisy"})));
        assert_eq!(next_line(&lines), format!("{}\n", junk[0]).into_bytes());
        send(request(json!(2), "tools/call", json!({"name": "echo"})));
        loop {
            let line = next_line(&lines);
            let answer: Value = serde_json::from_slice(&line).unwrap_or_default();
            if answer["id"] == json!(2) {
                break;
            }
        }
        drop(stdin);
        assert_eq!(child.wait().expect("wait").code(), Some(0));

        let written: Vec<String> = case
            .events()
            .into_iter()
            .filter_map(|(_, e)| match e {
                Event::SentRaw { line } => Some(line),
                Event::Sent { message } => Some(message["id"].to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(
            written,
            [junk[0], junk[1], junk[2], "1", "2"],
            "in this order"
        );
    }
}

/// A stdio batch at 2025-03-26 is answered as one batch line and recorded message by message
/// after a note; at 2025-06-18 the fake answers it with one Invalid Request error.
#[test]
fn batches_are_answered_at_2025_03_26_and_refused_later() {
    let case = Case::new("batch", json!({"handlers": []}));
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let batch = format!(
        "[{}, {note}, {}]",
        request(json!(2), "ping", json!({})),
        request(json!("three"), "ping", json!({}))
    );
    for (version, answered) in [("2025-03-26", true), ("2025-06-18", false)] {
        let _ = std::fs::remove_file(&case.transcript);
        let mut fake = case.start();
        fake.write(&request(
            json!(1),
            "initialize",
            json!({"protocolVersion": version}),
        ));
        assert_eq!(fake.next_answer()["result"]["protocolVersion"], version);
        fake.write(&batch);
        let answer = fake.next_answer();
        match answered {
            true => assert_eq!(
                answer,
                json!([{"jsonrpc": "2.0", "id": 2, "result": {}},
                       {"jsonrpc": "2.0", "id": "three", "result": {}}])
            ),
            false => {
                assert_eq!(answer["id"], Value::Null);
                assert_eq!(answer["error"]["code"], json!(-32600));
            }
        }
        fake.close_stdin();
        assert_eq!(fake.wait().code(), Some(0));
        let events: Vec<Event> = case.events().into_iter().map(|(_, e)| e).collect();
        let at = events
            .iter()
            .position(|e| mcp_harness_fakes::batch::received_size(e) == Some(3))
            .expect("the batch is noted");
        assert!(matches!(&events[at + 2], Event::Received { message } if message == &note));
        let sent_batch = events
            .iter()
            .any(|e| matches!(e, Event::SentRaw { line } if line.contains("2 messages went out")));
        assert_eq!(sent_batch, answered, "{events:?}");
    }
}

/// A progress notification with the client's token before the reply, a request to the client
/// after it that waits for the client's response, then a log message: all in order, with
/// the `$request` pointers filled in, and the response recorded.
#[test]
fn a_rule_sends_messages_around_its_reply_and_waits_for_responses() {
    let case = Case::new(
        "sends",
        json!({"handlers": [{
            "method": "tools/call",
            "reply": {"result": {"content": []}},
            "sends": [
                {"message": {"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                    "progressToken": {"$request": "/params/_meta/progressToken"},
                    "progress": 1, "of": {"$request": "/id"}}}},
                {"at": "after", "await_response": true,
                 "message": {"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}},
                {"at": "after", "delay_ms": 20,
                 "message": {"jsonrpc": "2.0", "method": "notifications/message",
                             "params": {"level": "info", "data": "done"}}},
            ],
        }]}),
    );
    let mut fake = case.start();
    let call = request(
        json!(9),
        "tools/call",
        json!({"name": "t", "_meta": {"progressToken": "tok-1"}}),
    );
    fake.write(&call);
    let progress = fake.next_answer();
    assert_eq!(progress["method"], "notifications/progress");
    assert_eq!(progress["params"]["progressToken"], "tok-1");
    assert_eq!(progress["params"]["of"], 9);
    assert_eq!(fake.next_answer()["id"], 9);
    let roots = fake.next_answer();
    assert_eq!(roots["method"], "roots/list");
    // Nothing more until the client answers the server's request.
    assert!(
        fake.answers
            .recv_timeout(Duration::from_millis(300))
            .is_err()
    );
    let response = json!({"jsonrpc": "2.0", "id": "s1", "result": {"roots": []}});
    fake.write(&response.to_string());
    assert_eq!(fake.next_answer()["method"], "notifications/message");
    fake.close_stdin();
    assert_eq!(fake.wait().code(), Some(0));

    let events: Vec<Event> = case.events().into_iter().map(|(_, e)| e).collect();
    let at = |wanted: &Event| events.iter().position(|e| e == wanted).expect("recorded");
    let sent_roots = at(&Event::Sent { message: roots });
    let received = at(&Event::Received { message: response });
    let sent_progress = at(&Event::Sent { message: progress });
    assert!(
        sent_progress < sent_roots && sent_roots < received,
        "{events:?}"
    );
}

/// An awaited response that never comes holds the rule up for the case's request timeout,
/// no longer.
#[test]
fn an_awaited_response_is_waited_for_at_most_the_request_timeout() {
    let case = Case::new(
        "await-timeout",
        json!({"handlers": [{
            "method": "tools/call",
            "reply": {"result": {}},
            "sends": [{"await_response": true,
                       "message": {"jsonrpc": "2.0", "id": 1, "method": "ping"}}],
        }]}),
    );
    // The trial's request timeout: 400 ms.
    let mut play: Value =
        serde_json::from_str(&std::fs::read_to_string(&case.play).unwrap()).unwrap();
    play["request_timeout_ms"] = json!(400);
    std::fs::write(&case.play, play.to_string()).unwrap();
    let mut fake = case.start();
    fake.write(&request(json!(2), "tools/call", json!({"name": "t"})));
    assert_eq!(fake.next_answer()["method"], "ping");
    let asked = Instant::now();
    assert_eq!(fake.next_answer()["id"], 2);
    let waited = asked.elapsed();
    assert!(
        waited >= Duration::from_millis(350) && waited < Duration::from_millis(3000),
        "{waited:?}"
    );
    fake.close_stdin();
    fake.wait();
}

/// A rule on a notification sends its messages when the notification arrives and answers
/// nothing.
#[test]
fn a_rule_on_a_notification_sends_without_answering() {
    let case = Case::new(
        "on-notification",
        json!({"handlers": [{
            "method": "notifications/initialized",
            "reply": "hang",
            "sends": [{"message": {"jsonrpc": "2.0", "id": "r1", "method": "roots/list"}}],
        }]}),
    );
    let mut fake = case.start();
    fake.write(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    assert_eq!(
        fake.next_answer(),
        json!({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"})
    );
    fake.write(&request(json!(1), "ping", json!({})));
    assert_eq!(fake.next_answer()["id"], 1);
    fake.close_stdin();
    fake.wait();
}

/// The script's declared capabilities are merged into those `initialize` derives.
#[test]
fn initialize_declares_the_scripts_capabilities() {
    let case = Case::new(
        "capabilities",
        json!({"capabilities": {"tools": {"listChanged": true}, "logging": {}}}),
    );
    let mut fake = case.start();
    fake.write(&request(
        json!(1),
        "initialize",
        json!({"protocolVersion": "2025-11-25"}),
    ));
    assert_eq!(
        fake.next_answer()["result"]["capabilities"],
        json!({"tools": {"listChanged": true}, "logging": {}})
    );
    fake.close_stdin();
    fake.wait();
}

/// A modern fake's built-in `subscriptions/listen` over stdio: the acknowledgement, then
/// the rule's messages naming the subscription, until the client cancels it; never answered.
#[test]
fn listen_acknowledges_then_delivers_until_cancelled() {
    let case = Case::new(
        "listen",
        json!({"era": "modern", "handlers": [{
            "method": "subscriptions/listen", "reply": {"result": {"resourcesListChanged": true}},
            "sends": [
                {"message": {"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}},
                {"delay_ms": 400, "message": {"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}},
            ],
        }]}),
    );
    let mut fake = case.start();
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    fake.write(&request(
        json!("L"),
        "subscriptions/listen",
        json!({"_meta": meta, "notifications": {"resourcesListChanged": true}}),
    ));
    let ack = fake.next_answer();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "L"
    );
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourcesListChanged": true})
    );
    let first = fake.next_answer();
    assert_eq!(first["method"], "notifications/resources/list_changed");
    assert_eq!(
        first["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "L"
    );
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": "L"}});
    fake.write(&cancel.to_string());
    assert!(
        fake.answers
            .recv_timeout(Duration::from_millis(700))
            .is_err(),
        "nothing after the cancel, and no response to the listen request"
    );
    fake.close_stdin();
    fake.wait();
}

/// Over stdio too, a rule's message answering the listen request ends the subscription.
#[test]
fn a_listen_response_ends_the_subscription() {
    let case = Case::new(
        "listen-end",
        json!({"era": "modern", "handlers": [{
            "method": "subscriptions/listen", "reply": {"result": {}},
            "sends": [
                {"message": {"jsonrpc": "2.0", "id": {"$request": "/id"}, "result": {"resultType": "complete"}}},
                {"message": {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}},
            ],
        }]}),
    );
    let mut fake = case.start();
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}});
    fake.write(&request(
        json!(2),
        "subscriptions/listen",
        json!({"_meta": meta}),
    ));
    assert_eq!(
        fake.next_answer()["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(fake.next_answer()["id"], 2);
    assert!(
        fake.answers
            .recv_timeout(Duration::from_millis(300))
            .is_err()
    );
    fake.close_stdin();
    fake.wait();
}
