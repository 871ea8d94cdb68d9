//! How many requests the in-process HTTPS fake serves per second, under a minimal HTTP/1.1
//! load generator: after one `initialize` opens a session, `connections` keep-alive TLS
//! connections (rustls, plain threads, one request at a time each) POST `tools/call echo`
//! until `requests` are answered. Each connection's TLS handshake and first request happen
//! before the clock starts, so what is timed is the fake's steady state.
//!
//! Hand-written rather than a load-testing crate because it needs very little: one request
//! shape, and answers that the fake always sends with a `Content-Length`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::path::Path;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, StreamOwned};

use super::clients::Setup;
use super::fakes::{INITIALIZED, Throughput, call_line, initialize_line};

/// The version header sent once the session is open (one the fake knows).
const VERSION: &str = "2025-06-18";

/// Starts a fresh HTTPS fake, loads it, and stops it.
pub fn run(setup: &Setup, requests: usize, connections: usize) -> Result<Throughput, String> {
    let transcript = setup.work.join("fake-https-load.jsonl");
    let trial = setup.env.start(setup.case, &transcript)?;
    let ca = trial
        .vars
        .iter()
        .find(|(name, _)| *name == "MCP_HARNESS_CA_FILE")
        .map(|(_, path)| path.clone())
        .unwrap_or_default();
    let measured = load(&trial.url, Path::new(&ca), requests, connections.max(1));
    trial.stop();
    measured
}

fn load(url: &str, ca: &Path, requests: usize, connections: usize) -> Result<Throughput, String> {
    let port: u16 = url
        .rsplit_once(':')
        .and_then(|(_, rest)| rest.split('/').next()?.parse().ok())
        .ok_or_else(|| format!("no port in {url:?}"))?;
    let config = Arc::new(tls_config(ca)?);
    let mut first = Conn::open(port, &config)?;
    let (status, session) = first.post(initialize_line(), None)?;
    let session = match (status, session) {
        (200, Some(session)) => session,
        (status, _) => return Err(format!("initialize got HTTP {status} and no session id")),
    };
    first.expect(INITIALIZED, &session, 202)?;
    let mut conns = vec![first];
    for _ in 1..connections {
        conns.push(Conn::open(port, &config)?);
    }
    for conn in &mut conns {
        conn.expect(&call_line(0), &session, 200)?;
    }

    let start = Arc::new(Barrier::new(connections + 1));
    let workers: Vec<_> = conns
        .into_iter()
        .enumerate()
        .map(|(i, mut conn)| {
            let share = requests / connections + usize::from(i < requests % connections);
            let (start, session) = (Arc::clone(&start), session.clone());
            thread::spawn(move || -> Result<u64, String> {
                start.wait();
                let cpu = thread_cpu_ns();
                for n in 0..share {
                    conn.expect(&call_line(1 + i + n * connections), &session, 200)?;
                }
                Ok(thread_cpu_ns().saturating_sub(cpu))
            })
        })
        .collect();
    let fake_cpu = runtime_cpu_ns();
    start.wait();
    let started = Instant::now();
    let mut load_cpu = 0;
    for worker in workers {
        load_cpu += worker.join().map_err(|_| "a load thread panicked")??;
    }
    let seconds = started.elapsed().as_secs_f64();
    let fake_cpu = runtime_cpu_ns().saturating_sub(fake_cpu);
    let per_request = |ns: u64| ns as f64 / 1000.0 / requests.max(1) as f64;
    Ok(Throughput::new(
        requests,
        seconds,
        format!(
            "{connections} keep-alive HTTP/1.1 TLS connections, one request at a time each; \
             CPU per request: fake {:.1} us, load generator {:.1} us",
            per_request(fake_cpu),
            per_request(load_cpu)
        ),
    ))
}

/// CPU time the calling thread has run, in nanoseconds (0 where the kernel does not say).
fn thread_cpu_ns() -> u64 {
    schedstat_ns(Path::new("/proc/thread-self/schedstat"))
}

/// CPU time the threads of this process's tokio runtimes (where the fake runs) have run.
fn runtime_cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|name| name.starts_with("tokio-r"))
        })
        .map(|task| schedstat_ns(&task.path().join("schedstat")))
        .sum()
}

/// The first field of a `schedstat` file: time spent on the CPU, in nanoseconds.
fn schedstat_ns(path: &Path) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Trusts only the run's CA, with ring as the provider (as everywhere in the workspace).
fn tls_config(ca: &Path) -> Result<ClientConfig, String> {
    let mut roots = rustls::RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(ca)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("cannot read the CA {}: {e}", ca.display()))?;
    for cert in certs {
        roots.add(cert).map_err(|e| format!("unusable CA: {e}"))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    Ok(ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth())
}

/// One keep-alive connection.
struct Conn {
    stream: BufReader<StreamOwned<ClientConnection, TcpStream>>,
    port: u16,
    line: String,
    body: Vec<u8>,
}

impl Conn {
    fn open(port: u16, config: &Arc<ClientConfig>) -> Result<Conn, String> {
        let tcp = TcpStream::connect((Ipv4Addr::LOCALHOST, port))
            .map_err(|e| format!("cannot connect to the HTTPS fake: {e}"))?;
        let _ = tcp.set_nodelay(true);
        let name = ServerName::try_from("localhost").map_err(|e| e.to_string())?;
        let tls = ClientConnection::new(Arc::clone(config), name).map_err(|e| e.to_string())?;
        Ok(Conn {
            stream: BufReader::with_capacity(16 * 1024, StreamOwned::new(tls, tcp)),
            port,
            line: String::new(),
            body: Vec::new(),
        })
    }

    /// POSTs `body` and checks the status (and, for 200, that a result came back).
    fn expect(&mut self, body: &str, session: &str, want: u16) -> Result<(), String> {
        let (status, _) = self.post(body, Some(session))?;
        let ok = status == want && (want != 200 || contains(&self.body, b"\"result\""));
        match ok {
            true => Ok(()),
            false => Err(format!(
                "the HTTPS fake answered HTTP {status}: {}",
                String::from_utf8_lossy(&self.body)
            )),
        }
    }

    /// POSTs one message; returns the status and the `Mcp-Session-Id`, if any. The body is
    /// left in `self.body`.
    fn post(&mut self, body: &str, session: Option<&str>) -> Result<(u16, Option<String>), String> {
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: localhost:{}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.port,
            body.len()
        );
        if let Some(session) = session {
            request.push_str(&format!(
                "Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: {VERSION}\r\n"
            ));
        }
        request.push_str("\r\n");
        request.push_str(body);
        let io = |e: std::io::Error| format!("the HTTPS exchange failed: {e}");
        let stream = self.stream.get_mut();
        stream.write_all(request.as_bytes()).map_err(io)?;
        stream.flush().map_err(io)?;

        self.line.clear();
        self.stream.read_line(&mut self.line).map_err(io)?;
        let status = self
            .line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("not an HTTP status line: {:?}", self.line))?;
        let (mut length, mut session) = (None, None);
        loop {
            self.line.clear();
            self.stream.read_line(&mut self.line).map_err(io)?;
            let header = self.line.trim_end();
            if header.is_empty() {
                break;
            }
            let Some((name, value)) = header.split_once(':') else {
                continue;
            };
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            } else if name.eq_ignore_ascii_case("mcp-session-id") {
                session = Some(value.trim().to_owned());
            }
        }
        let length = length.ok_or("an answer without Content-Length (not supported here)")?;
        self.body.resize(length, 0);
        self.stream.read_exact(&mut self.body).map_err(io)?;
        Ok((status, session))
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
