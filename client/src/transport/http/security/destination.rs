//! Where URLs the client discovers may lead: the destination policy against server-side
//! request forgery (MCP security best practices, "Server-Side Request Forgery").
//!
//! A server the user pointed the client at can name other URLs for it to fetch: a
//! `resource_metadata` URL in a 401 challenge, authorization servers in Protected Resource
//! Metadata, endpoints in Authorization Server Metadata, redirects. Such a URL must not turn
//! the client against the user's own network. So a discovered URL is refused (`insecure_url`,
//! before any connection) when its destination is internal ([`is_internal`]: private,
//! loopback, link-local, the cloud metadata address, unspecified; IPv4 and IPv6, IPv4
//! inside IPv6 included), unless its origin is the configured server's (the user chose that
//! one) or one the user's local policy lists ([`DestinationPolicy::new`]'s `local_origins`,
//! `MCP_HARNESS_LOCAL_ORIGINS` in the driver contract: a real loopback authorization server).
//!
//! Two places judge, because a name's addresses are only known when it is resolved:
//! [`check_discovered_url`] judges the URL before any request (an address literal at once,
//! no DNS), and [`GuardedResolver`], the resolver of the client that fetches discovered URLs,
//! judges a name's addresses when it resolves them and hands the connector only those that
//! passed. The connection therefore goes to an address that was checked, whatever the name
//! resolves to later (DNS rebinding cannot switch it between the check and the use).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::Arc;

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::error::{Error, ErrorKind};
use crate::seams::Seams;
use crate::seams::wire::Wire;

/// Whether `ip` is a destination a discovered URL must not reach: private (10/8, 172.16/12,
/// 192.168/16, 100.64/10 shared, IPv6 ULA fc00::/7), loopback (127/8, ::1), link-local
/// (169.254/16 with the cloud metadata address 169.254.169.254, fe80::/10), unspecified
/// (0/8, ::), broadcast and multicast; an IPv4 address inside IPv6 (mapped `::ffff:a.b.c.d`,
/// compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`) is judged as the IPv4 address it carries.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => internal_v4(v4),
        IpAddr::V6(v6) => internal_v6(v6),
    }
}

fn internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || a == 0
        // Shared address space (RFC 6598), carrier-grade NAT: another network's inside.
        || (a == 100 && (64..128).contains(&b))
}

fn internal_v6(ip: Ipv6Addr) -> bool {
    let segments = ip.segments();
    if let Some(v4) = ip.to_ipv4_mapped() {
        return internal_v4(v4);
    }
    // NAT64 (64:ff9b::/96) carries an IPv4 destination in its last 32 bits.
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        let o = ip.octets();
        return internal_v4(Ipv4Addr::new(o[12], o[13], o[14], o[15]));
    }
    ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        // Unique local fc00::/7 and link-local fe80::/10.
        || (segments[0] & 0xfe00) == 0xfc00
        || (segments[0] & 0xffc0) == 0xfe80
        // IPv4-compatible ::a.b.c.d (deprecated, still routed by some stacks).
        || (segments[..6] == [0; 6] && internal_v4(ip.to_ipv4().unwrap_or(Ipv4Addr::UNSPECIFIED)))
}

/// The user's policy for discovered URLs: the configured server's origin and the origins of
/// the local policy are allowed wherever they are; anything else must be public.
#[derive(Debug, Clone)]
pub struct DestinationPolicy {
    /// The configured MCP server's origin (always allowed).
    server: String,
    /// The local policy's origins, as serialized origins (`https://localhost:8443`).
    local_origins: Vec<String>,
    /// Hosts whose addresses are not judged: the server's and the local policy's.
    trusted_hosts: Vec<String>,
    /// Shared, not copied: the flags are many and the policy travels with each client.
    seams: Arc<Seams>,
}

impl DestinationPolicy {
    /// The policy for the MCP server at `server` with the user's `local_origins` (each an
    /// origin such as `https://localhost:8443`; a path, if given, is ignored; text that does
    /// not parse as a URL allows nothing).
    pub fn new(server: &Url, local_origins: &[String]) -> Self {
        let parsed: Vec<Url> = local_origins
            .iter()
            .filter_map(|o| Url::parse(o.trim()).ok())
            .filter(|u| u.has_host())
            .collect();
        let host = |u: &Url| u.host_str().map(str::to_ascii_lowercase);
        DestinationPolicy {
            server: server.origin().ascii_serialization(),
            local_origins: parsed
                .iter()
                .map(|u| u.origin().ascii_serialization())
                .collect(),
            trusted_hosts: std::iter::once(server)
                .chain(&parsed)
                .filter_map(host)
                .collect(),
            seams: Arc::default(),
        }
    }

    /// The policy asking the connection's seams.
    #[doc(hidden)]
    pub(crate) fn with_seams(mut self, seams: Seams) -> Self {
        self.seams = Arc::new(seams);
        self
    }

    /// Splits `MCP_HARNESS_LOCAL_ORIGINS`: origins separated by white space.
    pub fn split_origins(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    /// Whether `url`'s origin is allowed wherever it leads: the server's or a listed one.
    pub fn allows_origin(&self, url: &Url) -> bool {
        let origin = url.origin().ascii_serialization();
        origin == self.server || self.local_origins.contains(&origin)
    }

    /// The resolver of a client that fetches discovered URLs under this policy.
    pub fn resolver(&self) -> Arc<GuardedResolver> {
        Arc::new(GuardedResolver {
            trusted_hosts: self.trusted_hosts.clone(),
            filter: self.seams.ssrf_filter_resolved(),
        })
    }
}

/// Judges a discovered URL before any connection to it: allowed when its origin is the
/// server's or a listed one; otherwise an address literal must not be internal (see
/// [`is_internal`]), and a name is judged by [`GuardedResolver`] when the request resolves
/// it. A refusal is `insecure_url`, naming the URL and why.
pub fn check_discovered_url(url: &Url, policy: &DestinationPolicy) -> Result<(), Error> {
    if policy.allows_origin(url) {
        return Ok(());
    }
    policy
        .seams
        .ssrf_check(url, || literal_destination(url))
        .map_err(|why| {
            Error::new(
                ErrorKind::InsecureUrl,
                format!(
                    "refusing the discovered URL {url}: {why}; a private, loopback, link-local \
                     or cloud-metadata destination is reached only when the local policy lists \
                     its origin"
                ),
            )
        })
}

/// The URL's host judged as an address literal; a name passes here (its addresses are
/// judged when resolved).
fn literal_destination(url: &Url) -> Result<(), String> {
    // The URL parser has already normalized address literals (`0x7f.1` is `127.0.0.1`).
    let Some(host) = url.host_str() else {
        return Err("it has no host".into());
    };
    let Ok(ip) = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
    else {
        return Ok(());
    };
    match is_internal(ip) {
        true => Err(format!("{ip} is an internal address")),
        false => Ok(()),
    }
}

/// Resolves `host` with the system's resolver (blocking) and judges every address; the
/// check-once defect's way (see `defects/ssrf.rs`), so built only with the `defects` feature.
#[cfg(feature = "defects")]
pub(crate) fn resolve_and_judge(host: &str) -> Result<(), String> {
    let addrs: Vec<SocketAddr> = (host, 0)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}: {e}"))?
        .collect();
    match addrs.iter().find(|a| is_internal(a.ip())) {
        Some(a) => Err(format!(
            "{host} resolves to the internal address {}",
            a.ip()
        )),
        None => Ok(()),
    }
}

/// A name's addresses were all internal: found again in the error chain by `send_error`.
#[derive(Debug)]
pub(crate) struct DestinationRefused {
    pub(crate) host: String,
    pub(crate) addresses: Vec<IpAddr>,
}

impl std::fmt::Display for DestinationRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown: Vec<String> = self.addresses.iter().map(IpAddr::to_string).collect();
        write!(
            f,
            "refused to connect to {}: it resolves only to internal addresses ({}); a private, \
             loopback, link-local or cloud-metadata destination is reached only when the local \
             policy lists its origin",
            self.host,
            shown.join(", ")
        )
    }
}

impl std::error::Error for DestinationRefused {}

/// The resolver of the client that fetches discovered URLs: resolves with the system's
/// resolver (on a blocking thread, as reqwest's default does), then keeps only the addresses
/// [`is_internal`] passes, for every host but the server's and the local policy's. The
/// connector dials only what it returns, so the address connected to is one that was judged.
#[derive(Debug)]
pub struct GuardedResolver {
    trusted_hosts: Vec<String>,
    filter: bool,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_ascii_lowercase();
        let judged = self.filter && !self.trusted_hosts.contains(&host);
        Box::pin(async move {
            let lookup = host.clone();
            let looked_up =
                tokio::task::spawn_blocking(move || (lookup.as_str(), 0).to_socket_addrs())
                    .await
                    .map_err(std::io::Error::other)
                    .and_then(|r| r);
            let addrs: Vec<SocketAddr> = match looked_up {
                Ok(addrs) => addrs.collect(),
                Err(e) => return Err(Box::new(e) as _),
            };
            if !judged {
                return Ok(Box::new(addrs.into_iter()) as Addrs);
            }
            let (internal, public): (Vec<SocketAddr>, Vec<SocketAddr>) =
                addrs.into_iter().partition(|a| is_internal(a.ip()));
            if public.is_empty() {
                let addresses = internal.iter().map(SocketAddr::ip).collect();
                return Err(Box::new(DestinationRefused { host, addresses }) as _);
            }
            Ok(Box::new(public.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_addresses_in_every_spelling() {
        for internal in [
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.0.1",
            "127.0.0.1",
            "127.0.0.2",
            "169.254.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fd00::1",
            "fc00::1",
            "fe80::1",
            "::ffff:169.254.169.254",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "fd00:ec2::254",
        ] {
            assert!(is_internal(internal.parse().unwrap()), "{internal}");
        }
        for public in [
            "203.0.113.10",
            "8.8.8.8",
            "172.32.0.1",
            "2001:db8::1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
        ] {
            assert!(!is_internal(public.parse().unwrap()), "{public}");
        }
    }

    fn policy() -> DestinationPolicy {
        let server = Url::parse("https://localhost:8443/mcp").unwrap();
        DestinationPolicy::new(
            &server,
            &DestinationPolicy::split_origins(
                "https://127.0.0.1:9443  https://localhost:9000/ignored",
            ),
        )
    }

    #[test]
    fn the_server_and_listed_origins_pass_literals_are_judged() {
        let p = policy();
        let ok = |u: &str| check_discovered_url(&Url::parse(u).unwrap(), &p);
        assert!(ok("https://localhost:8443/.well-known/oauth-protected-resource").is_ok());
        assert!(ok("https://127.0.0.1:9443/token").is_ok());
        assert!(ok("https://localhost:9000/authorize").is_ok());
        assert!(ok("https://as.example/token").is_ok());
        assert!(ok("https://203.0.113.10/token").is_ok());
        // A name passes here: its addresses are judged by the resolver when it is resolved.
        assert!(ok("https://localhost:8444/x").is_ok());
        for bad in [
            "https://127.0.0.1:8443/x",
            "https://169.254.169.254/latest/meta-data/",
            "https://[::ffff:a9fe:a9fe]/x",
            "https://[fd00::1]/x",
            "https://10.0.0.1/x",
            "https://0x7f.1/x",
            "https://2130706433/x",
        ] {
            let e = ok(bad).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InsecureUrl, "{bad}");
        }
    }

    #[test]
    fn the_resolver_keeps_only_public_addresses_of_untrusted_names() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let p = policy();
        let resolver = p.resolver();
        rt.block_on(async {
            let trusted = resolver.resolve("localhost".parse().unwrap()).await;
            assert!(trusted.is_ok_and(|mut a| a.next().is_some()));
            let server = Url::parse("https://example.invalid/mcp").unwrap();
            let strict = DestinationPolicy::new(&server, &[]).resolver();
            let refused = match strict.resolve("localhost".parse().unwrap()).await {
                Ok(_) => panic!("localhost passed"),
                Err(e) => e,
            };
            let refused = refused.downcast_ref::<DestinationRefused>().unwrap();
            assert!(refused.addresses.iter().all(|a| a.is_loopback()));
        });
    }
}
