//! An authorization trial's runner side (a case with `server.auth`, over HTTPS): the
//! redirect URI the client is registered with, and what the trial must tell the client and
//! keep from it.
//!
//! The redirect URI is `http://127.0.0.1:PORT/callback` on a loopback listener of the
//! runner's (the canary listener, `canary.rs`: it records each connection and answers
//! nothing). A client performing the contract's headless authorization step never connects
//! to it: it takes the authorization endpoint's `Location` and hands it to its own callback
//! handling. A connection there shows an adapter that followed the redirect instead.
//!
//! The fake hands back every secret of the trial (tokens, codes, refresh tokens, client
//! secrets, verifiers) when it stops; the runner redacts each from the transcript and from
//! what the client printed, and a client that printed one fails the never-printed check.

use super::canary::{Canary, CanaryRun};

/// The path of the redirect URI on the listener.
pub const CALLBACK_PATH: &str = "/callback";

/// The redirect listener of one authorization trial.
pub struct AuthEnv {
    listener: Canary,
    /// The redirect URI the client is registered with.
    pub redirect_uri: String,
}

impl AuthEnv {
    /// Binds the redirect listener (loopback only).
    pub fn start() -> Result<AuthEnv, String> {
        let listener =
            Canary::start().map_err(|e| format!("cannot start the redirect listener: {e}"))?;
        let redirect_uri = format!("{}{CALLBACK_PATH}", listener.origin());
        Ok(AuthEnv {
            listener,
            redirect_uri,
        })
    }

    /// The contract variable naming the redirect URI (the fake's `auth_vars` add the rest).
    pub fn vars(&self) -> Vec<(&'static str, String)> {
        vec![("MCP_HARNESS_AUTH_REDIRECT_URI", self.redirect_uri.clone())]
    }

    /// Stops the listener; what connected to it.
    pub fn finish(self) -> CanaryRun {
        self.listener.finish()
    }
}

/// The secrets to redact from a trial's output and transcript: the bearer token handed to
/// the client, if any, and every secret the authorization side made or received. Empty
/// strings are dropped, and longer secrets come first so that no secret is cut into pieces
/// by the redaction of one it contains.
pub fn secrets(token: Option<String>, issued: Vec<String>) -> Vec<String> {
    let mut all: Vec<String> = token.into_iter().chain(issued).collect();
    all.retain(|s| !s.is_empty());
    all.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    all.dedup();
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_redirect_uri_is_a_loopback_callback_and_records_a_connection() {
        let env = AuthEnv::start().unwrap();
        assert!(env.redirect_uri.starts_with("http://127.0.0.1:"));
        assert!(env.redirect_uri.ends_with("/callback"));
        let addr = env.redirect_uri["http://".len()..env.redirect_uri.len() - 9].to_owned();
        drop(std::net::TcpStream::connect(addr).unwrap());
        assert_eq!(env.finish().seen.len(), 1);
    }

    #[test]
    fn secrets_are_deduplicated_longest_first() {
        let s = secrets(
            Some("tok".into()),
            vec!["a".into(), "".into(), "tokens".into(), "a".into()],
        );
        assert_eq!(s, vec!["tokens", "tok", "a"]);
    }
}
