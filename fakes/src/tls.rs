//! The run's certificates, made with rcgen when the run starts and never written anywhere
//! but the one CA file the client is told to trust.
//!
//! The TLS cases need three certificates a client must judge differently: a good one for
//! `localhost`, one from the trusted CA for the wrong name, and one for the right name from
//! a second CA that the client never hears about. All keys are ECDSA P-256 made with ring,
//! and the rustls server configs are built once here and shared, so starting a fake per
//! trial costs a bind and nothing more.

use std::sync::Arc;

use mcp_harness_scenarios::model::Endpoint;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::ServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// Common name of the CA the client is handed.
pub const CA_NAME: &str = "mcp-harness run CA";
/// Common name of the CA the client is never told about.
pub const OTHER_CA_NAME: &str = "mcp-harness untrusted CA";
/// The only names the good leaves are valid for.
pub const GOOD_NAMES: [&str; 2] = ["localhost", "127.0.0.1"];
/// Names the trusted leaf is also valid for: those the DNS fake of an isolated trial's
/// network namespace answers (`public.test` and the rebinding `rebind.test` reach the fake).
pub const ISOLATED_NAMES: [&str; 4] = [
    "public.test",
    "private.test",
    "metadata.test",
    "rebind.test",
];
/// The name of the leaf that is valid for the wrong host.
pub const WRONG_NAME: &str = "wrong-name.invalid";

/// A run's public-key infrastructure: the trusted CA's PEM and one rustls server config per
/// TLS endpoint variant.
pub struct Pki {
    ca_pem: String,
    trusted: Arc<ServerConfig>,
    untrusted_ca: Arc<ServerConfig>,
    wrong_name: Arc<ServerConfig>,
}

impl std::fmt::Debug for Pki {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The configs hold private keys: show only what is public.
        f.debug_struct("Pki").field("ca_pem", &self.ca_pem).finish()
    }
}

impl Pki {
    /// Makes both CAs, the three leaves, and their server configs. Errors name the step.
    pub fn generate() -> Result<Pki, String> {
        let ca = make_ca(CA_NAME)?;
        let other_ca = make_ca(OTHER_CA_NAME)?;
        let good_names: Vec<&str> = GOOD_NAMES.iter().chain(&ISOLATED_NAMES).copied().collect();
        let good = make_leaf(&good_names, &ca)?;
        let wrong = make_leaf(&[WRONG_NAME], &ca)?;
        let foreign = make_leaf(&GOOD_NAMES, &other_ca)?;
        Ok(Pki {
            ca_pem: ca.pem(),
            trusted: server_config(good)?,
            untrusted_ca: server_config(foreign)?,
            wrong_name: server_config(wrong)?,
        })
    }

    /// The PEM of the CA clients are told to trust (`MCP_HARNESS_CA_FILE`).
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The server config for `endpoint`, or `None` for the plain-HTTP variants.
    pub fn server_config(&self, endpoint: Endpoint) -> Option<Arc<ServerConfig>> {
        match endpoint {
            Endpoint::Trusted => Some(Arc::clone(&self.trusted)),
            Endpoint::UntrustedCa => Some(Arc::clone(&self.untrusted_ca)),
            Endpoint::WrongName => Some(Arc::clone(&self.wrong_name)),
            Endpoint::PlainLoopback | Endpoint::InsecureRemote => None,
        }
    }
}

/// A leaf certificate with its key, ready for a server config.
struct Leaf {
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
}

type Ca = CertifiedIssuer<'static, KeyPair>;

fn make_ca(name: &str) -> Result<Ca, String> {
    let fail = |e: rcgen::Error| format!("cannot make the CA {name:?}: {e}");
    let mut params = CertificateParams::new(Vec::<String>::new()).map_err(fail)?;
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    set_validity(&mut params);
    let key = KeyPair::generate().map_err(fail)?;
    CertifiedIssuer::self_signed(params, key).map_err(fail)
}

fn make_leaf(names: &[&str], ca: &Ca) -> Result<Leaf, String> {
    let fail = |e: rcgen::Error| format!("cannot make the certificate for {names:?}: {e}");
    let sans: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let mut params = CertificateParams::new(sans).map_err(fail)?;
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, names.first().copied().unwrap_or("leaf"));
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    set_validity(&mut params);
    let key = KeyPair::generate().map_err(fail)?;
    let cert = params.signed_by(&key, ca).map_err(fail)?;
    Ok(Leaf {
        cert: cert.der().clone(),
        key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
    })
}

/// A fixed, wide validity window: no clock reading, and no year-4096 dates that some TLS
/// stacks treat with suspicion.
fn set_validity(params: &mut CertificateParams) {
    params.not_before = rcgen::date_time_ymd(2020, 1, 1);
    params.not_after = rcgen::date_time_ymd(2100, 1, 1);
}

fn server_config(leaf: Leaf) -> Result<Arc<ServerConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot configure TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(vec![leaf.cert], leaf.key)
        .map_err(|e| format!("cannot configure the server certificate: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn makes_one_ca_pem_and_configs_only_for_tls_endpoints() {
        let pki = Pki::generate().expect("generate");
        assert!(pki.ca_pem().starts_with("-----BEGIN CERTIFICATE-----"));
        for endpoint in [
            Endpoint::Trusted,
            Endpoint::UntrustedCa,
            Endpoint::WrongName,
        ] {
            let config = pki.server_config(endpoint).expect("a TLS config");
            assert_eq!(config.alpn_protocols, vec![b"http/1.1".to_vec()]);
        }
        assert!(pki.server_config(Endpoint::PlainLoopback).is_none());
        assert!(pki.server_config(Endpoint::InsecureRemote).is_none());
        // The configs are made once and shared.
        let a = pki.server_config(Endpoint::Trusted).expect("config");
        let b = pki.server_config(Endpoint::Trusted).expect("config");
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!format!("{pki:?}").contains("PRIVATE"));
    }
}
