//! The harness around one HTTP fake in a test: start it with a script, talk to it over the
//! run's TLS (or plain HTTP), stop it and read its transcript.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_harness_fakes::http::{self, HttpFakeConfig, RunningHttpFake};
use mcp_harness_fakes::tls::Pki;
use mcp_harness_scenarios::model::{Endpoint, Scenario};
use mcp_harness_scenarios::transcript::{self, Event};
use rustls::ClientConfig;
use serde_json::{Value, json};

use super::{Reply, connect, request, trusting};

pub const WAIT: Duration = Duration::from_secs(5);
pub const ACCEPT_BOTH: &str = "application/json, text/event-stream";
pub const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

pub fn pki() -> &'static Pki {
    static PKI: OnceLock<Pki> = OnceLock::new();
    PKI.get_or_init(|| Pki::generate().expect("generate the PKI"))
}

/// One fake, the client config that trusts the run's CA, and the transcript path.
pub struct Trial {
    pub fake: RunningHttpFake,
    pub client: Option<Arc<ClientConfig>>,
    pub transcript: PathBuf,
}

impl Trial {
    pub async fn start(name: &str, server: Value, token: Option<&str>) -> Trial {
        Trial::start_on(name, server, token, Endpoint::Trusted).await
    }

    pub async fn start_on(name: &str, server: Value, token: Option<&str>, on: Endpoint) -> Trial {
        Trial::start_full(name, server, token, on, None).await
    }

    /// A fake playing protocol `revision` (a case's revision dimension).
    pub async fn start_at(name: &str, server: Value, revision: &str) -> Trial {
        Trial::start_full(
            name,
            server,
            None,
            Endpoint::Trusted,
            Some(revision.to_owned()),
        )
        .await
    }

    pub async fn start_full(
        name: &str,
        server: Value,
        token: Option<&str>,
        on: Endpoint,
        revision: Option<String>,
    ) -> Trial {
        let mut scenario = Scenario::serving(serde_json::from_value(server).expect("server"));
        scenario.description = format!("http fake self-test: {name}");
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let transcript = std::env::temp_dir().join(format!(
            "mcp-fake-http-{name}-{}-{nanos}.jsonl",
            std::process::id()
        ));
        let tls = pki().server_config(on);
        let fake = http::start(HttpFakeConfig {
            scenario: Arc::new(scenario),
            transcript: transcript.clone(),
            tls: tls.clone(),
            bearer_token: token.map(str::to_owned),
            revision,
            auth_redirect_uri: None,
        })
        .await
        .expect("start the fake");
        assert!(fake.addr.ip().is_loopback());
        Trial {
            fake,
            client: tls.map(|_| trusting(pki().ca_pem())),
            transcript,
        }
    }

    pub async fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Reply {
        let mut stream = connect(self.fake.addr, self.client.as_ref())
            .await
            .expect("connect");
        request(&mut stream, method, path, headers, body, WAIT).await
    }

    /// A well-formed POST to `/mcp`, with `extra` headers.
    pub async fn post(&self, extra: &[(&str, &str)], body: &str) -> Reply {
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", ACCEPT_BOTH),
        ];
        headers.extend_from_slice(extra);
        self.send("POST", "/mcp", &headers, body).await
    }

    /// Initializes and returns the session id.
    pub async fn initialize(&self) -> String {
        let reply = self.post(&[], INIT).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        reply
            .header("mcp-session-id")
            .expect("a session id")
            .to_owned()
    }

    /// Stops the fake (checking it is quick) and returns the transcript's events.
    pub async fn finish(self) -> Vec<Event> {
        let started = Instant::now();
        self.fake.stop().await;
        let took = started.elapsed();
        assert!(took < Duration::from_millis(100), "stop took {took:?}");
        let text = std::fs::read_to_string(&self.transcript).expect("read transcript");
        let _ = std::fs::remove_file(&self.transcript);
        transcript::parse(&text)
            .expect("parse transcript")
            .into_iter()
            .map(|r| r.event)
            .collect()
    }
}

pub fn statuses(events: &[Event]) -> Vec<(String, u16)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::HttpRequest { method, status, .. } => Some((method.clone(), *status)),
            _ => None,
        })
        .collect()
}

pub fn rpc(id: u32, method: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method}).to_string()
}
