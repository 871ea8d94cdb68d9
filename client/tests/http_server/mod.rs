//! A tiny hand-written HTTP/1.1 server on 127.0.0.1 for the HTTP tests: it records every
//! request (method, headers, body) and answers through a closure, one request per connection.
//!
//! It is written here on purpose, independently of the harness's fakes, so the client's tests
//! do not lean on the code they will later be checked by.

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as the server saw it (header names lowercased).
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub headers: HashMap<String, String>,
    pub body: Value,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
    pub fn rpc(&self) -> &str {
        self.body["method"].as_str().unwrap_or("")
    }
}

pub enum Reply {
    Json(u16, Option<&'static str>, Value),
    Raw(&'static str, &'static str),
    /// Events, then the connection is closed.
    Sse(Vec<Value>),
    /// Raw SSE text, then the connection is closed.
    SseText(String),
    Status(u16),
    /// No answer; the server notes when the client drops the connection.
    Hold,
    /// A redirect with this status to this `Location`.
    Redirect(u16, String),
}

type Handler = dyn Fn(&Seen, &[Seen]) -> Reply + Send + Sync;

#[derive(Default)]
pub struct Log {
    pub seen: Vec<Seen>,
    pub dropped: usize,
}

pub struct Server {
    pub url: String,
    log: Arc<Mutex<Log>>,
}

impl Server {
    pub fn seen(&self) -> Vec<Seen> {
        self.log.lock().unwrap().seen.clone()
    }
    pub fn posts(&self) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.method == "POST")
            .collect()
    }
    /// Waits up to 3 s for `test` to hold on the log.
    pub async fn wait_for(&self, what: &str, test: impl Fn(&Log) -> bool) {
        let start = Instant::now();
        while !test(&self.log.lock().unwrap()) {
            assert!(start.elapsed() < Duration::from_secs(3), "never saw {what}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

pub async fn start(handler: impl Fn(&Seen, &[Seen]) -> Reply + Send + Sync + 'static) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let log = Arc::new(Mutex::new(Log::default()));
    let handler: Arc<Handler> = Arc::new(handler);
    let shared = Arc::clone(&log);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve(stream, Arc::clone(&shared), Arc::clone(&handler)));
        }
    });
    Server { url, log }
}

/// Serves one request on `stream`, then closes it.
async fn serve(mut stream: TcpStream, log: Arc<Mutex<Log>>, handler: Arc<Handler>) {
    let mut buf = Vec::new();
    let head_end = loop {
        if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let method = lines.next().unwrap_or("").split(' ').next().unwrap_or("");
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .map_or(0, |l| l.parse().unwrap());
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
        }
    }
    let seen = Seen {
        method: method.to_owned(),
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    let reply = {
        let mut log = log.lock().unwrap();
        log.seen.push(seen.clone());
        handler(&seen, &log.seen)
    };
    let text = match reply {
        Reply::Json(status, session, body) => {
            let body = body.to_string();
            let extra = session.map_or(String::new(), |s| format!("mcp-SESSION-id: {s}\r\n"));
            format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{extra}\
                 Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
        }
        Reply::Raw(content_type, body) => format!(
            "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        ),
        Reply::Sse(events) => sse_head(
            &events
                .iter()
                .map(|e| format!("data: {e}\n\n"))
                .collect::<String>(),
        ),
        Reply::SseText(text) => sse_head(&text),
        Reply::Status(status) => {
            format!("HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
        Reply::Redirect(status, location) => format!(
            "HTTP/1.1 {status} X\r\nLocation: {location}\r\nContent-Length: 0\r\n\
             Connection: close\r\n\r\n"
        ),
        Reply::Hold => {
            let mut chunk = [0u8; 64];
            while let Ok(n) = stream.read(&mut chunk).await {
                if n == 0 {
                    break;
                }
            }
            log.lock().unwrap().dropped += 1;
            return;
        }
    };
    let _ = stream.write_all(text.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn sse_head(events: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n\
         : a comment\n\n{events}"
    )
}

pub fn result(req: &Seen, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": req.body["id"], "result": result})
}

/// A well-behaved MCP server: session `s-N` for the N-th initialize, JSON for `tools/list`,
/// SSE (a notification and a ping first) for `tools/call echo`, no answer for `slow`.
pub fn mcp(req: &Seen, history: &[Seen]) -> Reply {
    match req.method.as_str() {
        "GET" => return Reply::Status(405),
        "DELETE" => return Reply::Status(200),
        _ => {}
    }
    if req.body.get("id").is_none() || req.body.get("method").is_none() {
        return Reply::Status(202);
    }
    match req.rpc() {
        "initialize" => {
            let n = history.iter().filter(|s| s.rpc() == "initialize").count();
            let version = req.body["params"]["protocolVersion"].clone();
            let session = if n == 1 { "s-1" } else { "s-2" };
            Reply::Json(
                200,
                Some(session),
                result(
                    req,
                    json!({"protocolVersion": version, "capabilities": {"tools": {}},
                                   "serverInfo": {"name": "http-test"}}),
                ),
            )
        }
        "tools/list" => Reply::Json(200, None, result(req, json!({"tools": [{"name": "echo"}]}))),
        "tools/call" if req.body["params"]["name"] == "slow" => Reply::Hold,
        "tools/call" => Reply::Sse(vec![
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}),
            json!({"jsonrpc": "2.0", "id": "srv-ping", "method": "ping"}),
            result(
                req,
                json!({"content": [], "structuredContent": req.body["params"]["arguments"]}),
            ),
        ]),
        _ => Reply::Json(
            200,
            None,
            json!({"jsonrpc": "2.0", "id": req.body["id"],
                                           "error": {"code": -32601, "message": "no"}}),
        ),
    }
}
