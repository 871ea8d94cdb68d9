//! The namespace's DNS fake: answers A and AAAA questions for the few names an isolated trial
//! knows (see [`NAMES`]), one of them rebinding, over UDP on `127.0.0.1:53` inside the
//! namespace (the client's `/etc/resolv.conf` there names it).
//!
//! Hand-written rather than built on a DNS crate: a stub resolver's query is one question, and
//! the answer one or no record, so the wire format needed is a header, a name and a record
//! (RFC 1035 §4.1) — some sixty lines, against a crate with its own dependency tree for what
//! this fake never does (compression of names it writes, EDNS, TCP, DNSSEC). A query it does
//! not understand is answered FORMERR, an unknown name NXDOMAIN, so a resolver never waits.

use std::net::{IpAddr, Ipv4Addr};

/// The address of the safe-looking public name (TEST-NET-3, RFC 5737): the fake listens there.
pub const PUBLIC: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 10);
/// The cloud metadata address.
pub const METADATA: Ipv4Addr = Ipv4Addr::new(169, 254, 169, 254);

/// The names the fake answers, and what: `(name, first answer, later answers)`.
pub const NAMES: [(&str, Ipv4Addr, Ipv4Addr); 4] = [
    ("public.test", PUBLIC, PUBLIC),
    (
        "private.test",
        Ipv4Addr::new(10, 0, 0, 1),
        Ipv4Addr::new(10, 0, 0, 1),
    ),
    ("metadata.test", METADATA, METADATA),
    // DNS rebinding: a safe answer to the first question, the metadata address after it.
    ("rebind.test", PUBLIC, METADATA),
];

const TYPE_A: u16 = 1;
const TYPE_AAAA: u16 = 28;
const CLASS_IN: u16 = 1;

/// What the fake has answered so far (for the rebinding name) and saw.
#[derive(Debug, Default)]
pub struct Dns {
    /// A questions answered per name of [`NAMES`].
    asked: [u32; NAMES.len()],
    /// One line per question, `A rebind.test -> 203.0.113.10`, in order.
    pub log: Vec<String>,
}

impl Dns {
    /// The answer to the datagram `query`, or `None` when it is too broken to answer at all
    /// (shorter than a header, or itself a response).
    pub fn answer(&mut self, query: &[u8]) -> Option<Vec<u8>> {
        if query.len() < 12 || query[2] & 0x80 != 0 {
            return None;
        }
        let mut out = query[..12].to_vec();
        // QR=1, opcode and RD kept, AA=1; RA=1; counts reset below.
        out[2] = 0x80 | (query[2] & 0x79) | 0x04;
        out[3] = 0x80;
        out[4..12].fill(0);
        let Some((name, qtype, qclass, end)) = question(query) else {
            out[3] |= 1; // FORMERR
            return Some(out);
        };
        out[5] = 1; // QDCOUNT
        out.extend_from_slice(&query[12..end]);
        let known = NAMES
            .iter()
            .position(|(n, ..)| name.eq_ignore_ascii_case(n));
        let Some(i) = known else {
            out[3] |= 3; // NXDOMAIN
            self.log.push(format!("{} {name} -> NXDOMAIN", kind(qtype)));
            return Some(out);
        };
        let address: Option<IpAddr> = match (qtype, qclass) {
            (TYPE_A, CLASS_IN) => {
                let (_, first, later) = NAMES[i];
                self.asked[i] += 1;
                Some(if self.asked[i] == 1 { first } else { later }.into())
            }
            _ => None,
        };
        self.log.push(match address {
            Some(a) => format!("{} {name} -> {a}", kind(qtype)),
            None => format!("{} {name} -> none", kind(qtype)),
        });
        if let Some(IpAddr::V4(v4)) = address {
            out[7] = 1; // ANCOUNT
            out.extend_from_slice(&[0xC0, 12]); // the question's name
            out.extend_from_slice(&TYPE_A.to_be_bytes());
            out.extend_from_slice(&CLASS_IN.to_be_bytes());
            out.extend_from_slice(&0u32.to_be_bytes()); // TTL 0: never cached
            out.extend_from_slice(&4u16.to_be_bytes());
            out.extend_from_slice(&v4.octets());
        }
        Some(out)
    }
}

fn kind(qtype: u16) -> String {
    match qtype {
        TYPE_A => "A".into(),
        TYPE_AAAA => "AAAA".into(),
        other => format!("TYPE{other}"),
    }
}

/// The first question: its name (dotted, no trailing dot), type, class and where it ends.
fn question(msg: &[u8]) -> Option<(String, u16, u16, usize)> {
    if u16::from_be_bytes([msg[4], msg[5]]) != 1 {
        return None;
    }
    let mut at = 12;
    let mut labels = Vec::new();
    loop {
        let len = usize::from(*msg.get(at)?);
        at += 1;
        if len == 0 {
            break;
        }
        // A query's name is never compressed; anything but a plain label is refused.
        if len > 63 {
            return None;
        }
        let label = msg.get(at..at + len)?;
        labels.push(String::from_utf8_lossy(label).into_owned());
        at += len;
    }
    let field = |i: usize| Some(u16::from_be_bytes([*msg.get(i)?, *msg.get(i + 1)?]));
    let (qtype, qclass) = (field(at)?, field(at + 2)?);
    Some((labels.join("."), qtype, qclass, at + 4))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(id: u16, name: &str, qtype: u16) -> Vec<u8> {
        let mut q = id.to_be_bytes().to_vec();
        q.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
        for label in name.split('.') {
            q.push(label.len() as u8);
            q.extend_from_slice(label.as_bytes());
        }
        q.push(0);
        q.extend_from_slice(&qtype.to_be_bytes());
        q.extend_from_slice(&CLASS_IN.to_be_bytes());
        q
    }

    fn answer_of(reply: &[u8]) -> Option<Ipv4Addr> {
        (reply[7] == 1).then(|| {
            let n = reply.len();
            Ipv4Addr::new(reply[n - 4], reply[n - 3], reply[n - 2], reply[n - 1])
        })
    }

    #[test]
    fn the_rebinding_name_is_safe_once_then_the_metadata_address() {
        let mut dns = Dns::default();
        let first = dns.answer(&query(7, "rebind.test", TYPE_A)).unwrap();
        assert_eq!(&first[..2], &7u16.to_be_bytes());
        assert_eq!(first[3] & 0x0f, 0);
        assert_eq!(answer_of(&first), Some(PUBLIC));
        let aaaa = dns.answer(&query(8, "rebind.test", TYPE_AAAA)).unwrap();
        assert_eq!(answer_of(&aaaa), None);
        for _ in 0..2 {
            let later = dns.answer(&query(9, "REBIND.test", TYPE_A)).unwrap();
            assert_eq!(answer_of(&later), Some(METADATA));
        }
        assert_eq!(dns.log[0], "A rebind.test -> 203.0.113.10");
        assert_eq!(dns.log[1], "AAAA rebind.test -> none");
    }

    #[test]
    fn unknown_names_are_nxdomain_and_junk_is_formerr_or_ignored() {
        let mut dns = Dns::default();
        let reply = dns.answer(&query(1, "example.com", TYPE_A)).unwrap();
        assert_eq!(reply[3] & 0x0f, 3);
        let mut broken = query(2, "public.test", TYPE_A);
        broken.truncate(20);
        assert_eq!(dns.answer(&broken).unwrap()[3] & 0x0f, 1);
        assert_eq!(dns.answer(&[0; 5]), None);
        let mut response = query(3, "public.test", TYPE_A);
        response[2] |= 0x80;
        assert_eq!(dns.answer(&response), None);
    }
}
