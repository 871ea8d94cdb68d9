//! Seam: tool output schemas. How a `tools/call` result is checked against the tool's
//! `outputSchema` (see [`crate::schema`]).
//!
//! Defects here: `no-output-validation`, `draft-07-default`, `unbounded-schema`,
//! `permissive-unresolved-ref`, `fetch-network-ref`.

use std::error::Error as StdError;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use serde_json::Value;

use super::Defects;
use crate::schema::Policy;

impl Defects {
    /// The output-schema policy; correct: [`Policy::SPEC`].
    pub(crate) fn schema_policy(&self) -> Policy {
        let mut policy = Policy::SPEC;
        if self.no_output_validation {
            policy.validate = false;
        }
        if self.draft_07_default {
            policy.default_draft = boon::Draft::V7;
        }
        if self.unbounded_schema {
            policy.bounded = false;
        }
        if self.permissive_unresolved_ref {
            policy.permissive_unresolved = true;
        }
        if self.fetch_network_ref {
            policy.network = Some(fetch);
        }
        policy
    }
}

/// The `fetch-network-ref` defect's loader: an `http://` reference is really fetched (a GET
/// over a fresh TCP connection, one second per step); any other is refused as a correct
/// client refuses it.
pub(crate) fn fetch(url: &str) -> Result<Value, Box<dyn StdError>> {
    let Some(rest) = url.strip_prefix("http://") else {
        return Err(format!("{url} is outside the schema and is not fetched").into());
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let path = path.split('#').next().unwrap_or("/");
    let step = Duration::from_secs(1);
    let addr = authority
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| format!("{authority} has no address"))?;
    let mut stream = TcpStream::connect_timeout(&addr, step)?;
    stream.set_read_timeout(Some(step))?;
    stream.set_write_timeout(Some(step))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
    )?;
    let mut body = Vec::new();
    stream.take(1 << 20).read_to_end(&mut body)?;
    let text = String::from_utf8_lossy(&body);
    let json = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    Ok(serde_json::from_str(json)?)
}
