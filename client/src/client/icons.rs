//! `fetch_icons`: the icons the client would render (those of `serverInfo` and of every
//! tool, prompt and resource the server lists), taken as [`crate::icons`] allows: a `data:`
//! URI decoded, an `https:` icon on the server's origin fetched with a client of its own,
//! which sends no credentials (no bearer, no cookies) and follows no redirect.

use std::path::PathBuf;
use std::time::Duration;

use reqwest::{StatusCode, Url};
use serde_json::{Value, json};

use super::seams::ClientSeams;
use super::{Client, Connection};
use crate::error::Error;
use crate::icons::{self, Verdict};
use crate::listing::ListKind;
use crate::transport::http::security;

/// Where an HTTP server's icons may come from: its URL, and the CAs to trust.
pub(crate) struct IconServer {
    pub(crate) url: Url,
    pub(crate) ca_files: Vec<PathBuf>,
}

impl Client {
    /// Fetches the icons the client would render: those of `serverInfo` and of every tool,
    /// prompt and resource the server lists (each listing the server declared). Returns
    /// `{"fetched": [src…], "refused": [{"src", "reason"}…]}`: the icons whose bytes it got
    /// (a decoded `data:` URI counts), and the others with the reason.
    pub async fn fetch_icons(&self) -> Result<Value, Error> {
        let mut icons = Vec::new();
        let server_info = match &self.connection {
            Connection::Legacy(handshake) => handshake.result().get("serverInfo").cloned(),
            Connection::Modern(modern) => modern.found().server_info.clone(),
        };
        icons.extend(server_info.as_ref().map(srcs).unwrap_or_default());
        if self.require("tools/list").is_ok() {
            for tool in self.list_tools().await? {
                icons.extend(srcs(&tool));
            }
        }
        for kind in [ListKind::PROMPTS, ListKind::RESOURCES] {
            if self.require(kind.method).is_ok() {
                for entry in self.list_all(kind).await? {
                    icons.extend(srcs(&entry));
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        icons.retain(|src| seen.insert(src.clone()));
        let (mut fetched, mut refused) = (Vec::new(), Vec::new());
        let seams = self.session.seams();
        let server = self.icon_server.as_ref().map(|s| &s.url);
        for src in icons {
            let verdict = seams.icon_verdict(icons::judge(&src, server), &src);
            match self.take(verdict).await {
                Ok(()) => fetched.push(json!(src)),
                Err(reason) => refused.push(json!({"src": src, "reason": reason})),
            }
        }
        Ok(json!({"fetched": fetched, "refused": refused}))
    }

    /// Carries out `verdict`: Ok once the icon's bytes are in hand.
    async fn take(&self, verdict: Verdict) -> Result<(), String> {
        let timeout = self.session.options().request_timeout;
        match verdict {
            Verdict::Decode => Ok(()),
            Verdict::Refuse(reason) => Err(reason),
            Verdict::Fetch(url) | Verdict::Reach(url) if url.scheme().starts_with("http") => {
                self.get(url, timeout).await
            }
            Verdict::Fetch(url) | Verdict::Reach(url) => reach(url, timeout).await,
        }
    }

    /// One GET of an icon, with a client that carries no credentials and follows no redirect.
    async fn get(&self, url: Url, timeout: Duration) -> Result<(), String> {
        let ca_files = self
            .icon_server
            .as_ref()
            .map(|s| s.ca_files.clone())
            .unwrap_or_default();
        let client = security::no_redirect_client(&ca_files).map_err(|e| e.to_string())?;
        let mut request = client.get(url).timeout(timeout);
        if let Some(credentials) = self.session.seams().icon_credentials() {
            request = request.header(reqwest::header::AUTHORIZATION, credentials);
        }
        let response = request
            .send()
            .await
            .map_err(|e| format!("the fetch failed: {e}"))?;
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .and_then(|l| Url::parse(l).ok());
        match response.status() {
            s if s.is_redirection() => match location {
                Some(next) if self.session.seams().icon_follows_redirects() => {
                    let followed = client.get(next).timeout(timeout).send().await;
                    followed
                        .map(drop)
                        .map_err(|e| format!("the fetch failed: {e}"))
                }
                _ => Err(format!("a redirect ({s}), not followed")),
            },
            StatusCode::OK => response
                .bytes()
                .await
                .map(drop)
                .map_err(|e| format!("the body failed: {e}")),
            s => Err(format!("status {s}")),
        }
    }
}

/// What a client without the scheme rules does with a URL that is not http(s): connects to
/// its host, or reads its file (only a deliberate defect gets here).
async fn reach(url: Url, timeout: Duration) -> Result<(), String> {
    if url.scheme() == "file" {
        let path = url.to_file_path().map_err(|()| "no file path".to_owned())?;
        return tokio::fs::read(path)
            .await
            .map(drop)
            .map_err(|e| e.to_string());
    }
    let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
        return Err("no address".into());
    };
    let address = format!("{host}:{port}");
    tokio::task::spawn_blocking(move || {
        use std::net::ToSocketAddrs;
        let addr = address
            .to_socket_addrs()
            .map_err(|e| e.to_string())?
            .next()
            .ok_or("no address")?;
        std::net::TcpStream::connect_timeout(&addr, timeout)
            .map(drop)
            .map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| e.to_string())?
}

/// The `src` of each icon of an entry (a tool, prompt, resource, or `serverInfo`).
fn srcs(entry: &Value) -> Vec<String> {
    entry
        .get("icons")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|icon| icon.get("src").and_then(Value::as_str).map(str::to_owned))
        .collect()
}
