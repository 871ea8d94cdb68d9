//! The headless authorization step of the driver contract: the user's part of an OAuth
//! authorization, without a browser.
//!
//! Where a person would open the authorization URL, the driver GETs it itself, trusting the
//! run's CA, following no redirect, and hands the `Location` of the redirect that answers it
//! (the redirect URI with `code` and `state`, or with `error`) back to the client library,
//! which checks `state` and `iss` as it would for a real browser redirect. No check is added
//! here. A non-redirect answer is an authorization failure. The `Location` carries the
//! authorization code, so it is never printed.

use std::path::PathBuf;
use std::time::Duration;

use reqwest::Url;
use reqwest::header::LOCATION;

use crate::auth::{AgentFuture, UserAgent};
use crate::error::{Error, ErrorKind};
use crate::transport::http::security;

/// The driver's user agent (see the module doc).
pub(crate) struct Headless {
    /// The run's CA files.
    pub(crate) ca_files: Vec<PathBuf>,
    /// The bound on the GET.
    pub(crate) timeout: Duration,
}

fn failed(message: String) -> Error {
    Error::new(ErrorKind::AuthFailed, message)
}

impl UserAgent for Headless {
    fn authorize<'a>(&'a self, authorization_url: &'a str) -> AgentFuture<'a> {
        Box::pin(async move {
            let url = Url::parse(authorization_url)
                .map_err(|e| failed(format!("the authorization URL does not parse: {e}")))?;
            // Name the endpoint, not the whole URL, in messages.
            let endpoint = format!("{}{}", url.origin().ascii_serialization(), url.path());
            let client = security::no_redirect_client(&self.ca_files)?;
            let what = format!("the headless GET of the authorization endpoint {endpoint}");
            let reply = client
                .get(url.clone())
                .timeout(self.timeout)
                .send()
                .await
                .map_err(|e| {
                    let e = security::send_error(&e, &what);
                    match e.kind {
                        ErrorKind::Tls | ErrorKind::InsecureUrl => e,
                        _ => failed(e.message),
                    }
                })?;
            let status = reply.status();
            if !status.is_redirection() {
                return Err(failed(format!(
                    "{what} was answered with HTTP {status} instead of a redirect"
                )));
            }
            let location = reply
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| {
                    failed(format!(
                        "{what} was answered with HTTP {status} without a Location"
                    ))
                })?;
            let reached = url
                .join(location)
                .map_err(|e| failed(format!("the Location answering {what} is not a URL: {e}")))?;
            Ok(reached.into())
        })
    }
}
