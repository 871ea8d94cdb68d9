//! The trace context keys of `_meta` (2026-07-28 § General fields › `_meta`): `traceparent`,
//! `tracestate` and `baggage` are reserved for OpenTelemetry, and when present their values
//! MUST follow W3C Trace Context and W3C Baggage. Always on, made in a trial where the client
//! sent one of them at 2026-07-28 (no earlier revision reserves the keys, so what a legacy
//! message carries under them is the client's own business).
//!
//! The grammars are small enough to read here; each function names the first thing wrong, so
//! a report says why a value is refused.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use mcp_harness_scenarios::matcher;
use mcp_harness_scenarios::model::era;
use mcp_harness_scenarios::transcript::{Event, Record};

use super::Checker;
use crate::conformance::trial::TrialRun;

/// Checks every trace context key the client sent at 2026-07-28.
pub(super) fn trace_rules(c: &mut Checker<'_>, run: &TrialRun) {
    let records: &[Record] = run.records.as_deref().unwrap_or_default();
    let mut context = (false, None);
    let mut baggage = (false, None);
    for (message, meta) in modern_metas(records) {
        for key in ["traceparent", "tracestate"] {
            if let Some(value) = meta.get(key) {
                context.0 = true;
                let problem = as_text(value).and_then(|v| match key {
                    "traceparent" => traceparent_problem(v),
                    _ => tracestate_problem(v),
                });
                if let Err(why) = problem {
                    context.1.get_or_insert_with(|| refusal(key, &why, message));
                }
            }
        }
        if let Some(value) = meta.get("baggage") {
            baggage.0 = true;
            if let Err(why) = as_text(value).and_then(baggage_problem) {
                baggage
                    .1
                    .get_or_insert_with(|| refusal("baggage", &why, message));
            }
        }
    }
    if context.0 {
        c.cite(
            "a traceparent or tracestate in _meta follows W3C Trace Context (2026-07-28)",
            "TRACE-01",
            context.1.map_or(Ok(()), Err),
        );
    }
    if baggage.0 {
        c.cite(
            "a baggage in _meta follows W3C Baggage (2026-07-28)",
            "TRACE-02",
            baggage.1.map_or(Ok(()), Err),
        );
    }
}

fn refusal(key: &str, why: &str, message: &Value) -> (String, String) {
    (
        format!("a {key} value of the W3C format"),
        format!("{why}, in {}", matcher::short(message)),
    )
}

/// Each message the client sent at 2026-07-28 with its `_meta` (a request's or a
/// notification's `params._meta`, a response's `result._meta`). A message is at 2026-07-28
/// when it names that version in `_meta`, or (a notification or a response, which need not)
/// when the last message that named a version on its connection did, with no `initialize`
/// since (a dual-era client falls back through one).
fn modern_metas(records: &[Record]) -> Vec<(&Value, &serde_json::Map<String, Value>)> {
    let mut modern: HashMap<u32, bool> = HashMap::new();
    let mut out = Vec::new();
    for r in records {
        let Event::Received { message } = &r.event else {
            continue;
        };
        let params = message.get("params");
        if message.get("method").and_then(Value::as_str) == Some("initialize") {
            modern.insert(r.pid, false);
        } else if let Some(version) = era::meta_version(params) {
            modern.insert(r.pid, era::is_modern(version));
        }
        if !modern.get(&r.pid).copied().unwrap_or(false) {
            continue;
        }
        let meta = params
            .or_else(|| message.get("result"))
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object);
        out.extend(meta.map(|m| (message, m)));
    }
    out
}

fn as_text(value: &Value) -> Result<&str, String> {
    value
        .as_str()
        .ok_or_else(|| format!("{} is not a string", matcher::short(value)))
}

fn lower_hex(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Why `v` is not a W3C `traceparent`, if it is not: `version-traceid-parentid-flags`, two,
/// 32, 16 and two lower-case hex digits; version `ff` is invalid, and neither id may be all
/// zeros. A later version may append fields after a `-`, which a version-00 reader ignores.
pub(crate) fn traceparent_problem(v: &str) -> Result<(), String> {
    let fields: Vec<&str> = v.split('-').collect();
    let [version, trace_id, parent_id, flags, rest @ ..] = fields.as_slice() else {
        return Err(format!(
            "{v:?} does not have the four fields version-traceid-parentid-flags"
        ));
    };
    let sizes = [
        (version, 2, "version"),
        (trace_id, 32, "trace id"),
        (parent_id, 16, "parent id"),
        (flags, 2, "flags"),
    ];
    for (field, size, name) in sizes {
        if field.len() != size || !lower_hex(field) {
            return Err(format!(
                "{v:?}: the {name} is not {size} lower-case hex digits"
            ));
        }
    }
    if *version == "ff" {
        return Err(format!("{v:?}: version ff is invalid"));
    }
    if *version == "00" && !rest.is_empty() {
        return Err(format!("{v:?}: version 00 has exactly four fields"));
    }
    for (id, name) in [(trace_id, "trace id"), (parent_id, "parent id")] {
        if id.bytes().all(|b| b == b'0') {
            return Err(format!("{v:?}: the {name} is all zeros"));
        }
    }
    Ok(())
}

/// Why `v` is not a W3C `tracestate`, if it is not: at most 32 `key=value` members separated
/// by commas (spaces and tabs around them allowed, empty members too), no key twice.
pub(crate) fn tracestate_problem(v: &str) -> Result<(), String> {
    let members: Vec<&str> = v
        .split(',')
        .map(|m| m.trim_matches([' ', '\t']))
        .filter(|m| !m.is_empty())
        .collect();
    if members.len() > 32 {
        return Err(format!("{} members, more than 32", members.len()));
    }
    let mut keys = HashSet::new();
    for member in members {
        let Some((key, value)) = member.split_once('=') else {
            return Err(format!("the member {member:?} is not key=value"));
        };
        if !tracestate_key(key) {
            return Err(format!("the key {key:?} is not a tracestate key"));
        }
        let printable = |b: u8| (0x20..=0x7e).contains(&b) && b != b',' && b != b'=';
        let value_ok = !value.is_empty()
            && value.len() <= 256
            && value.bytes().all(printable)
            && !value.ends_with(' ');
        if !value_ok {
            return Err(format!(
                "the value {value:?} of {key} is not a tracestate value"
            ));
        }
        if !keys.insert(key) {
            return Err(format!("the key {key:?} twice"));
        }
    }
    Ok(())
}

/// `simple-key` (a lower-case letter, then up to 255 of `a-z0-9_-*/`) or `tenant@system`.
fn tracestate_key(key: &str) -> bool {
    let tail = |s: &str, max: usize| {
        s.len() <= max
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-*/".contains(&b))
    };
    let starts = |s: &str, digit: bool| {
        s.bytes()
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || (digit && b.is_ascii_digit()))
    };
    match key.split_once('@') {
        None => starts(key, false) && tail(&key[1..], 255),
        Some((tenant, system)) => {
            starts(tenant, true)
                && tail(&tenant[1..], 240)
                && starts(system, false)
                && tail(&system[1..], 13)
        }
    }
}

/// RFC 9110 `tchar`: what a baggage key (a token) is made of.
fn tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// `baggage-octet`: printable ASCII but space, `"`, `,`, `;` and `\`.
fn baggage_octet(b: u8) -> bool {
    (0x21..=0x7e).contains(&b) && ![b'"', b',', b';', b'\\'].contains(&b)
}

/// Why `v` is not a W3C `baggage`, if it is not: members `key=value` with optional
/// `;property` (a key, or `key=value`), separated by commas; spaces and tabs allowed around
/// the separators.
pub(crate) fn baggage_problem(v: &str) -> Result<(), String> {
    let ows = [' ', '\t'];
    for member in v.split(',') {
        let mut parts = member.split(';');
        let pair = parts.next().unwrap_or_default();
        let Some((key, value)) = pair.split_once('=') else {
            return Err(format!("the member {:?} is not key=value", member.trim()));
        };
        let (key, value) = (key.trim_matches(ows), value.trim_matches(ows));
        if key.is_empty() || !key.bytes().all(tchar) {
            return Err(format!("the key {key:?} is not a token"));
        }
        if !value.bytes().all(baggage_octet) {
            return Err(format!(
                "the value {value:?} of {key} has a character baggage does not allow"
            ));
        }
        for property in parts {
            let (pkey, pvalue) = property.split_once('=').unwrap_or((property, ""));
            let (pkey, pvalue) = (pkey.trim_matches(ows), pvalue.trim_matches(ows));
            if pkey.is_empty() || !pkey.bytes().all(tchar) || !pvalue.bytes().all(baggage_octet) {
                return Err(format!(
                    "the property {:?} of {key} is not key or key=value",
                    property.trim()
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_follows_the_w3c_examples() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assert_eq!(traceparent_problem(good), Ok(()));
        assert_eq!(
            traceparent_problem("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"),
            Ok(())
        );
        for bad in [
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "",
        ] {
            assert!(traceparent_problem(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn tracestate_is_a_list_of_vendor_entries() {
        for good in [
            "rojo=00f067aa0ba902b7",
            "congo=t61rcWkgMzE, rojo=00f067aa0ba902b7",
            "a@b=1,,c=2",
            "",
        ] {
            assert_eq!(tracestate_problem(good), Ok(()), "{good}");
        }
        for bad in [
            "Rojo=1",
            "rojo",
            "rojo=1,rojo=2",
            "rojo=a,b",
            "1abc=x",
            "rojo=x=",
        ] {
            assert!(tracestate_problem(bad).is_err(), "{bad} accepted");
        }
        let many: Vec<String> = (0..33).map(|i| format!("k{i}=v")).collect();
        assert!(tracestate_problem(&many.join(",")).is_err());
    }

    #[test]
    fn baggage_is_a_list_of_members_with_properties() {
        for good in [
            "userId=alice",
            "userId=alice, isProduction=false",
            "k=v;p1;p2=x",
            "k=",
            "k=%20a",
        ] {
            assert_eq!(baggage_problem(good), Ok(()), "{good}");
        }
        for bad in [
            "userId",
            "user id=alice",
            "k=a b",
            "k=\"q\"",
            "k=v;",
            "=v",
            "",
        ] {
            assert!(baggage_problem(bad).is_err(), "{bad} accepted");
        }
    }
}
