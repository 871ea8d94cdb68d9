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

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Answers one connection with `answer` and returns the authorization URL it served.
    async fn serve(answer: &'static str) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 4096];
            let _ = socket.read(&mut buf).await;
            let _ = socket.write_all(answer.as_bytes()).await;
        });
        format!("http://127.0.0.1:{port}/authorize?state=s")
    }

    fn agent() -> Headless {
        Headless {
            ca_files: Vec::new(),
            timeout: Duration::from_secs(5),
        }
    }

    #[tokio::test]
    async fn the_location_of_a_redirect_is_handed_back_unfollowed() {
        let url = serve(
            "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/callback?code=c&state=s\r\n\
             Content-Length: 0\r\nConnection: close\r\n\r\n",
        )
        .await;
        let reached = agent().authorize(&url).await.unwrap();
        assert_eq!(reached, "http://127.0.0.1:1/callback?code=c&state=s");
        // A relative Location is resolved against the authorization URL.
        let url = serve(
            "HTTP/1.1 303 See Other\r\nLocation: /cb?error=access_denied\r\n\
             Content-Length: 0\r\nConnection: close\r\n\r\n",
        )
        .await;
        let reached = agent().authorize(&url).await.unwrap();
        assert!(reached.ends_with("/cb?error=access_denied"), "{reached}");
    }

    #[tokio::test]
    async fn an_answer_that_is_not_a_redirect_fails_authorization() {
        let url =
            serve("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi").await;
        let e = agent().authorize(&url).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::AuthFailed);
        assert!(
            e.message.contains("200") && !e.message.contains("state=s"),
            "{}",
            e.message
        );
        let url =
            serve("HTTP/1.1 302 Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").await;
        let e = agent().authorize(&url).await.unwrap_err();
        assert!(e.message.contains("without a Location"), "{}", e.message);
    }
}
