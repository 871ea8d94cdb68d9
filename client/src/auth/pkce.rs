//! PKCE (RFC 7636, OAuth 2.1 §4.1.1) with `S256`, and the `state` value: random strings from
//! the system's CSPRNG.
//!
//! Written with `ring` (SHA-256, `SystemRandom`) and `base64` (URL-safe, no padding), both
//! already in the client's tree for TLS and content decoding; it takes a dozen lines, so no
//! OAuth crate is pulled in for it.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom, SystemRandom};

use super::secret::Secret;
use crate::error::{Error, ErrorKind};

/// `n` random bytes, base64url without padding.
pub(crate) fn random(n: usize) -> Result<String, Error> {
    let mut bytes = vec![0u8; n];
    SystemRandom::new().fill(&mut bytes).map_err(|_| {
        Error::new(
            ErrorKind::AuthFailed,
            "the system's random number generator failed",
        )
    })?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// A code verifier: 32 random bytes, 43 characters of the unreserved set (RFC 7636 §4.1).
pub(crate) fn verifier() -> Result<Secret, Error> {
    random(32).map(Secret::new)
}

/// The `S256` challenge of `verifier`: BASE64URL(SHA256(verifier)).
pub(crate) fn challenge(verifier: &Secret) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.expose().as_bytes());
    URL_SAFE_NO_PAD.encode(digest.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfc_7636_example_challenge() {
        // RFC 7636 Appendix B.
        let v = Secret::new("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk");
        assert_eq!(challenge(&v), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    }

    #[test]
    fn verifiers_are_long_unreserved_and_fresh() {
        let (a, b) = (verifier().unwrap(), verifier().unwrap());
        assert_eq!(a.expose().len(), 43);
        assert!(
            a.expose()
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
        assert_ne!(a, b);
        assert_ne!(random(16).unwrap(), random(16).unwrap());
    }
}
