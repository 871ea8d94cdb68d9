//! JSON matchers: how a case says "a value like this" without spelling out every byte.
//!
//! Rules, applied recursively:
//! - an object matches an object that has at least its members, each matching (extra members
//!   are ignored, since clients and servers may add fields);
//! - an array matches an array of the same length, element by element;
//! - a number matches an equal number (`1` matches `1.0`); other scalars match by equality;
//! - an object whose only member starts with `$` is an operator:
//!   `{"$absent": true}` the member is missing (a member that is there, even `null`, fails);
//!   `{"$absent_or_null": true}` the member is missing or `null`;
//!   `{"$default": v}` the member is missing, or equal to `v`: for a member whose schema
//!   default is `v` (`hasMore: false`, a prompt argument's `required: false`), which a typed
//!   library may drop when it holds the default, or fill in when it was not received;
//!   `{"$present": true}` it exists, any value;
//!   `{"$contains": "text"}` a string that contains `text`;
//!   `{"$words": "a b"}` a string of space-separated words equal, as a set, to the
//!   argument's (OAuth `scope` values: order and repetition carry no meaning);
//!   `{"$type": "string"}` (also `integer`, `number`, `boolean`, `object`, `array`, `null`);
//!   `{"$capture": "name"}` any value, remembered under `name`;
//!   `{"$same": "name"}` equal to the value captured under `name`;
//!   `{"$not": m}` does not match `m`;
//!   `{"$literal": v}` equal to `v` as a whole, taken literally: members starting with `$`
//!   inside are not operators, and objects must have exactly `v`'s members (for JSON Schema
//!   text such as `{"$ref": "#/$defs/a"}`, kept as received);
//!   `{"$one_of": [m1, m2, ...]}` matches at least one of the matchers (e.g. a method among
//!   several; captures are kept from the first that matches);
//!   `{"$unordered": [m1, m2, ...]}` an array of the same length whose elements can be paired
//!   one for one with the matchers, in any order (each matcher with a distinct element; the
//!   items may use captures made before the array, not captures made by each other);
//!   `{"$all_of": [m1, m2, ...]}` matches every one of the matchers;
//!   `{"$distinct": "member"}` an array of objects whose `member` values are all present and
//!   pairwise different (names a client exposes, whatever its naming scheme).
//!
//! A failed match names its first difference ([`Mismatch`]: JSON path, expected, found), and
//! [`closest`] picks, among several candidates, the one a matcher comes nearest to, so a
//! report can show the message the client probably meant and exactly where it differs.

use std::collections::BTreeMap;

use serde_json::Value;

mod validate;
pub use validate::validate;

/// Values captured by `$capture`, shared across the matchers of one check.
pub type Captures = BTreeMap<String, Value>;

/// Why a value did not match: where, and what was expected there.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// JSON path of the first difference, e.g. `$.params.cursor`.
    pub path: String,
    /// What the matcher wanted at that path.
    pub expected: String,
    /// What was there.
    pub actual: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "at {}: expected {}, found {}",
            self.path, self.expected, self.actual
        )
    }
}

/// Checks `actual` against `expected`, adding captures on success. On failure the captures
/// are left as they were.
pub fn matches(expected: &Value, actual: &Value, captures: &mut Captures) -> Result<(), Mismatch> {
    let mut scratch = captures.clone();
    match_at("$", expected, Some(actual), &mut scratch)?;
    *captures = scratch;
    Ok(())
}

/// The names `$type` accepts.
const TYPES: [&str; 7] = [
    "string", "integer", "number", "boolean", "object", "array", "null",
];

/// The operator and its argument, when `matcher` is an operator object.
fn operator(matcher: &Value) -> Option<(&str, &Value)> {
    let map = matcher.as_object()?;
    if map.len() != 1 {
        return None;
    }
    let (key, value) = map.iter().next()?;
    key.starts_with('$').then_some((key.as_str(), value))
}

/// The set of space-separated words of `text` (`$words`).
fn words(text: &str) -> std::collections::BTreeSet<&str> {
    text.split(' ').filter(|w| !w.is_empty()).collect()
}

fn match_at(
    path: &str,
    expected: &Value,
    actual: Option<&Value>,
    captures: &mut Captures,
) -> Result<(), Mismatch> {
    let fail = |expected: String| Mismatch {
        path: path.to_owned(),
        expected,
        actual: actual.map_or_else(|| "nothing (member absent)".to_owned(), found),
    };
    if let Some((op, arg)) = operator(expected) {
        return match op {
            "$absent" => match actual {
                None => Ok(()),
                Some(_) => Err(fail("no member at all".into())),
            },
            "$absent_or_null" => match actual {
                None | Some(Value::Null) => Ok(()),
                Some(_) => Err(fail("no member, or null".into())),
            },
            "$present" => actual.map(|_| ()).ok_or_else(|| fail("a value".into())),
            "$default" => match actual {
                None => Ok(()),
                Some(got) if scalar_eq(arg, got) => Ok(()),
                Some(_) => Err(fail(format!("{}, or no member (its default)", full(arg)))),
            },
            "$type" => {
                let want = arg.as_str().unwrap_or_default();
                match actual {
                    Some(v) if type_name(v) == want || (want == "number" && v.is_number()) => {
                        Ok(())
                    }
                    _ => Err(fail(format!("a value of type {want}"))),
                }
            }
            "$capture" => {
                let value = actual.ok_or_else(|| fail("a value to capture".into()))?;
                captures.insert(arg.as_str().unwrap_or_default().to_owned(), value.clone());
                Ok(())
            }
            "$same" => {
                let name = arg.as_str().unwrap_or_default();
                match (captures.get(name), actual) {
                    (Some(want), Some(got)) if scalar_eq(want, got) => Ok(()),
                    (Some(want), _) => Err(fail(format!("{} (captured as {name})", full(want)))),
                    (None, _) => Err(fail(format!(
                        "the value captured as {name}, never captured"
                    ))),
                }
            }
            "$contains" => {
                let part = arg.as_str().unwrap_or_default();
                match actual {
                    Some(Value::String(got)) if got.contains(part) => Ok(()),
                    _ => Err(fail(format!("a string containing {}", full(arg)))),
                }
            }
            "$words" => {
                let want = words(arg.as_str().unwrap_or_default());
                match actual {
                    Some(Value::String(got)) if words(got) == want => Ok(()),
                    _ => Err(fail(format!(
                        "a string with the space-separated words {} in any order",
                        full(arg)
                    ))),
                }
            }
            "$literal" => match actual {
                Some(got) if literal_eq(arg, got) => Ok(()),
                _ => Err(fail(format!("exactly {}", full(arg)))),
            },
            "$not" => {
                let mut scratch = captures.clone();
                match match_at(path, arg, actual, &mut scratch) {
                    Ok(()) => Err(fail(format!("anything but {}", full(arg)))),
                    Err(_) => Ok(()),
                }
            }
            "$one_of" => {
                let options = arg.as_array().map(Vec::as_slice).unwrap_or_default();
                for option in options {
                    let mut scratch = captures.clone();
                    if match_at(path, option, actual, &mut scratch).is_ok() {
                        *captures = scratch;
                        return Ok(());
                    }
                }
                let shown: Vec<String> = options.iter().map(full).collect();
                Err(fail(format!("one of {}", shown.join(", "))))
            }
            "$all_of" => {
                for each in arg.as_array().map(Vec::as_slice).unwrap_or_default() {
                    match_at(path, each, actual, captures)?;
                }
                Ok(())
            }
            "$distinct" => {
                let member = arg.as_str().unwrap_or_default();
                let Some(Value::Array(items)) = actual else {
                    return Err(fail(format!(
                        "an array of objects with distinct {member:?}"
                    )));
                };
                let mut seen: Vec<&Value> = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let at = format!("{path}[{i}].{member}");
                    let Some(value) = item.get(member) else {
                        return Err(Mismatch {
                            path: at,
                            expected: format!("a {member:?} member"),
                            actual: "nothing (member absent)".into(),
                        });
                    };
                    if seen.contains(&value) {
                        return Err(Mismatch {
                            path: at,
                            expected: format!("a {member:?} no other item has"),
                            actual: format!("{}, already an earlier item's", full(value)),
                        });
                    }
                    seen.push(value);
                }
                Ok(())
            }
            "$unordered" => {
                let want = arg.as_array().map(Vec::as_slice).unwrap_or_default();
                match actual {
                    Some(Value::Array(got)) => unordered(path, want, got, captures),
                    _ => Err(fail(format!(
                        "an array of {} items, in any order",
                        want.len()
                    ))),
                }
            }
            _ => Err(fail(format!("a known operator, not {op}"))),
        };
    }
    let Some(actual) = actual else {
        // `{"params": {"cursor": {"$absent": true}}}` holds when `params` itself is missing:
        // an object whose every member must be absent asks for nothing that absence lacks.
        if absent_only(expected) {
            return Ok(());
        }
        return Err(fail(full(expected)));
    };
    match (expected, actual) {
        (Value::Object(want), Value::Object(got)) => {
            for (key, sub) in want {
                match_at(&format!("{path}.{key}"), sub, got.get(key), captures)?;
            }
            Ok(())
        }
        (Value::Array(want), Value::Array(got)) => {
            if want.len() != got.len() {
                return Err(fail(format!("an array of {} items", want.len())));
            }
            for (i, (w, g)) in want.iter().zip(got).enumerate() {
                match_at(&format!("{path}[{i}]"), w, Some(g), captures)?;
            }
            Ok(())
        }
        _ if scalar_eq(expected, actual) => Ok(()),
        _ => Err(fail(full(expected))),
    }
}

/// `$unordered`: pairs each matcher with a distinct element (a maximum bipartite matching,
/// so the order of either side never decides), then matches the pairs in the matchers' order
/// to keep their captures.
fn unordered(
    path: &str,
    want: &[Value],
    got: &[Value],
    captures: &mut Captures,
) -> Result<(), Mismatch> {
    if want.len() != got.len() {
        return Err(Mismatch {
            path: path.to_owned(),
            expected: format!("an array of {} items, in any order", want.len()),
            actual: found(&Value::Array(got.to_vec())),
        });
    }
    let fits: Vec<Vec<bool>> = want
        .iter()
        .map(|w| {
            got.iter()
                .map(|g| match_at(path, w, Some(g), &mut captures.clone()).is_ok())
                .collect()
        })
        .collect();
    // element index -> the matcher it is paired with
    let mut owner: Vec<Option<usize>> = vec![None; got.len()];
    for w in 0..want.len() {
        let mut seen = vec![false; got.len()];
        if !augment(w, &fits, &mut seen, &mut owner) {
            let element = fits[w].iter().position(|&f| f);
            return Err(Mismatch {
                path: path.to_owned(),
                expected: match element {
                    None => format!("an element matching {} (any order)", full(&want[w])),
                    Some(_) => format!(
                        "an element matching {} (any order) besides those the other items need",
                        full(&want[w])
                    ),
                },
                actual: found(&Value::Array(got.to_vec())),
            });
        }
    }
    let mut pairs: Vec<(usize, usize)> = owner
        .iter()
        .enumerate()
        .filter_map(|(g, w)| w.map(|w| (w, g)))
        .collect();
    pairs.sort_unstable();
    for (w, g) in pairs {
        match_at(&format!("{path}[{g}]"), &want[w], Some(&got[g]), captures)?;
    }
    Ok(())
}

/// One step of Kuhn's algorithm: finds an element for matcher `w`, moving earlier pairs along
/// when that frees one.
fn augment(w: usize, fits: &[Vec<bool>], seen: &mut [bool], owner: &mut [Option<usize>]) -> bool {
    for g in 0..owner.len() {
        if fits[w][g] && !seen[g] {
            seen[g] = true;
            if owner[g].is_none_or(|other| augment(other, fits, seen, owner)) {
                owner[g] = Some(w);
                return true;
            }
        }
    }
    false
}

fn absent_only(expected: &Value) -> bool {
    let Some(members) = expected.as_object() else {
        return false;
    };
    !members.is_empty()
        && operator(expected).is_none()
        && members.values().all(|m| {
            matches!(
                operator(m),
                Some(("$absent" | "$absent_or_null" | "$default", _))
            )
        })
}

fn scalar_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || matches!((x.as_f64(), y.as_f64()), (Some(p), Some(q)) if p == q)
        }
        _ => a == b,
    }
}

/// Equal as JSON values at every depth: the same members and items, numbers by value (`1`
/// and `1.0` are one number, as [`scalar_eq`] has it at the top).
fn literal_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| literal_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| literal_eq(v, w)))
        }
        _ => scalar_eq(a, b),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The candidate `expected` comes nearest to, by index, with its first mismatch; `None` when
/// there is no candidate or one matches (then there is nothing to explain).
///
/// Nearness is the number of the matcher's leaves (scalars and operators) a candidate
/// satisfies, each counted wherever it is, not only up to the first difference; ties go to
/// the earlier candidate. Captures are read, never changed.
pub fn closest(
    expected: &Value,
    candidates: &[&Value],
    captures: &Captures,
) -> Option<(usize, Mismatch)> {
    let mut best: Option<(usize, usize)> = None;
    for (i, candidate) in candidates.iter().enumerate() {
        if matches(expected, candidate, &mut captures.clone()).is_ok() {
            return None;
        }
        let score = nearness(expected, Some(candidate), &mut captures.clone());
        if best.is_none_or(|(_, s)| score > s) {
            best = Some((i, score));
        }
    }
    let (index, _) = best?;
    let mismatch = matches(expected, candidates[index], &mut captures.clone()).err()?;
    Some((index, mismatch))
}

/// How many leaves of `expected` hold for `actual` (see [`closest`]).
fn nearness(expected: &Value, actual: Option<&Value>, captures: &mut Captures) -> usize {
    let leaf = |captures: &mut Captures| {
        usize::from(match actual {
            Some(v) => match_at("$", expected, Some(v), captures).is_ok(),
            None => match_at("$", expected, None, captures).is_ok(),
        })
    };
    if operator(expected).is_some() {
        return leaf(captures);
    }
    match (expected, actual) {
        (Value::Object(want), Some(Value::Object(got))) => want
            .iter()
            .map(|(key, sub)| nearness(sub, got.get(key), captures))
            .sum(),
        (Value::Object(want), _) => want.values().map(|sub| nearness(sub, None, captures)).sum(),
        (Value::Array(want), Some(Value::Array(got))) => {
            let items: usize = want
                .iter()
                .enumerate()
                .map(|(i, w)| nearness(w, got.get(i), captures))
                .sum();
            items + usize::from(want.len() == got.len())
        }
        _ => leaf(captures),
    }
}

/// A value in full, on one line: what an `Expected:` line shows, never cut.
pub fn full(v: &Value) -> String {
    v.to_string()
}

/// What was found at a mismatch: whole when reasonably short, else cut with its length.
fn found(v: &Value) -> String {
    let text = v.to_string();
    let n = text.chars().count();
    if n > 400 {
        let cut: String = text.chars().take(397).collect();
        format!("{cut}... ({n} characters)")
    } else {
        text
    }
}

/// A one-line rendering of a value, cut to a readable length.
pub fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > 120 {
        let cut: String = text.chars().take(117).collect();
        format!("{cut}...")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(m: Value, v: Value) -> bool {
        matches(&m, &v, &mut Captures::new()).is_ok()
    }

    #[test]
    fn a_default_matches_its_value_or_an_absent_member() {
        let m = json!({"hasMore": {"$default": false}});
        assert!(ok(m.clone(), json!({"hasMore": false})));
        assert!(ok(m.clone(), json!({})));
        assert!(!ok(m.clone(), json!({"hasMore": true})));
        assert!(!ok(m.clone(), json!({"hasMore": null})));
        assert!(ok(json!({"c": {"n": {"$default": 0}}}), json!({})));
        assert!(validate(&json!({"a": {"$default": false}})).is_ok());
        assert!(validate(&json!({"a": {"$default": {"x": 1}}})).is_err());
    }

    #[test]
    fn objects_are_subsets_and_arrays_are_exact() {
        assert!(ok(json!({"a": 1}), json!({"a": 1.0, "b": 2})));
        assert!(!ok(json!({"a": 1}), json!({"b": 1})));
        assert!(ok(json!([{"n": "x"}]), json!([{"n": "x", "extra": true}])));
        assert!(!ok(json!([{"n": "x"}]), json!([{"n": "x"}, {"n": "y"}])));
        assert!(!ok(json!("1"), json!(1)));
    }

    #[test]
    fn literal_values_may_hold_dollar_members() {
        let schema = json!({"$ref": "#/$defs/a", "$defs": {"a": {"type": "string"}}});
        assert!(ok(
            json!({"s": {"$literal": schema.clone()}}),
            json!({"s": schema})
        ));
        assert!(!ok(
            json!({"s": {"$literal": {"$ref": "#a"}}}),
            json!({"s": {"$ref": "#a", "extra": 1}})
        ));
        assert!(!ok(json!({"s": {"$literal": 1}}), json!({})));
        // Numbers are compared by value at any depth, as at the top: a client that reads
        // `1.0` into a double and writes it back as `1` kept the schema.
        assert!(ok(
            json!({"s": {"$literal": {"minimum": 1.0, "enum": [2.0]}}}),
            json!({"s": {"minimum": 1, "enum": [2]}})
        ));
        assert!(!ok(
            json!({"s": {"$literal": {"enum": [1, 2]}}}),
            json!({"s": {"enum": [2, 1]}})
        ));
        assert_eq!(validate(&json!({"$literal": {"$schema": "x"}})), Ok(()));
    }

    #[test]
    fn words_compare_scope_strings_as_sets() {
        let m = json!({"scope": {"$words": "mcp:read mcp:write"}});
        assert!(ok(m.clone(), json!({"scope": "mcp:read mcp:write"})));
        assert!(ok(m.clone(), json!({"scope": "mcp:write mcp:read"})));
        assert!(ok(
            m.clone(),
            json!({"scope": "mcp:write  mcp:read mcp:write"})
        ));
        assert!(!ok(m.clone(), json!({"scope": "mcp:write"})));
        assert!(!ok(
            m.clone(),
            json!({"scope": "mcp:read mcp:write mcp:admin"})
        ));
        assert!(!ok(m.clone(), json!({"scope": ["mcp:read", "mcp:write"]})));
        assert!(!ok(m, json!({})));
        assert_eq!(validate(&json!({"$words": "a"})), Ok(()));
        assert!(validate(&json!({"$words": " "})).is_err());
        assert!(validate(&json!({"$words": ["a"]})).is_err());
    }

    #[test]
    fn contains_looks_inside_strings_only() {
        let m = json!({"line": {"$contains": "hunter2"}});
        assert!(ok(
            m.clone(),
            json!({"line": "content: {\"pw\":\"hunter2\"}"})
        ));
        assert!(!ok(
            m.clone(),
            json!({"line": "content: {\"pw\":\"[hidden]\"}"})
        ));
        assert!(!ok(m.clone(), json!({"line": ["hunter2"]})));
        assert!(!ok(m, json!({})));
    }

    #[test]
    fn operators() {
        assert!(ok(json!({"cursor": {"$absent": true}}), json!({})));
        assert!(!ok(
            json!({"cursor": {"$absent": true}}),
            json!({"cursor": null})
        ));
        assert!(ok(
            json!({"cursor": {"$absent_or_null": true}}),
            json!({"cursor": null})
        ));
        assert!(ok(json!({"cursor": {"$absent_or_null": true}}), json!({})));
        assert!(!ok(
            json!({"cursor": {"$absent_or_null": true}}),
            json!({"cursor": "c"})
        ));
        assert!(ok(
            json!({"params": {"cursor": {"$absent_or_null": true}}}),
            json!({})
        ));
        assert!(!ok(
            json!({"cursor": {"$absent": true}}),
            json!({"cursor": ""})
        ));
        assert!(ok(json!({"id": {"$present": true}}), json!({"id": null})));
        assert!(!ok(json!({"id": {"$present": true}}), json!({})));
        assert!(ok(json!({"$type": "integer"}), json!(3)));
        assert!(!ok(json!({"$type": "integer"}), json!(3.5)));
        assert!(ok(json!({"$type": "number"}), json!(3)));
        assert!(ok(json!({"$not": "a"}), json!("b")));
        assert!(!ok(json!({"$not": "a"}), json!("a")));
        let either = json!({"method": {"$one_of": ["a", {"$type": "integer"}]}});
        assert!(ok(either.clone(), json!({"method": "a"})));
        assert!(ok(either.clone(), json!({"method": 3})));
        assert!(!ok(either.clone(), json!({"method": "b"})));
        assert!(!ok(either, json!({})));
        assert!(validate(&json!({"$one_of": "a"})).is_err());
        assert!(validate(&json!({"$one_of": [{"$nope": 1}]})).is_err());
    }

    #[test]
    fn captures_bind_across_matches_and_roll_back_on_failure() {
        let mut caps = Captures::new();
        matches(
            &json!({"id": {"$capture": "call"}}),
            &json!({"id": 4}),
            &mut caps,
        )
        .unwrap();
        assert!(
            matches(
                &json!({"requestId": {"$same": "call"}}),
                &json!({"requestId": 4}),
                &mut caps
            )
            .is_ok()
        );
        let miss = matches(
            &json!({"requestId": {"$same": "call"}}),
            &json!({"requestId": "4"}),
            &mut caps,
        )
        .unwrap_err();
        assert_eq!(miss.path, "$.requestId");
        let before = caps.clone();
        let _ = matches(
            &json!({"a": {"$capture": "x"}, "b": 1}),
            &json!({"a": 1, "b": 2}),
            &mut caps,
        );
        assert_eq!(caps, before);
    }

    #[test]
    fn a_null_where_absence_is_required_is_named_with_its_path() {
        let miss = matches(
            &json!({"params": {"requestState": {"$absent": true}}}),
            &json!({"params": {"requestState": null}}),
            &mut Captures::new(),
        )
        .unwrap_err();
        assert_eq!(miss.path, "$.params.requestState");
        assert_eq!(miss.expected, "no member at all");
        assert_eq!(miss.actual, "null");
    }

    #[test]
    fn the_closest_candidate_is_the_one_matching_most_members() {
        let want =
            json!({"method": "tools/call", "params": {"name": "scan", "requestState": "s1"}});
        let init = json!({"method": "initialize", "params": {"protocolVersion": "x"}});
        let call =
            json!({"method": "tools/call", "params": {"name": "scan", "requestState": "s2"}});
        let other = json!({"method": "tools/call", "params": {"name": "other"}});
        let (index, miss) = closest(&want, &[&init, &call, &other], &Captures::new()).unwrap();
        assert_eq!(index, 1);
        assert_eq!(miss.path, "$.params.requestState");
        assert_eq!(miss.expected, "\"s1\"");
        assert_eq!(miss.actual, "\"s2\"");
        // A candidate that matches leaves nothing to explain; no candidate neither.
        assert!(closest(&want, &[&init, &want], &Captures::new()).is_none());
        assert!(closest(&want, &[], &Captures::new()).is_none());
        // Ties go to the earlier candidate.
        let (index, _) = closest(
            &json!({"a": 1}),
            &[&json!({"a": 2}), &json!({"a": 3})],
            &Captures::new(),
        )
        .unwrap();
        assert_eq!(index, 0);
    }

    #[test]
    fn expected_values_are_never_cut() {
        let long = "x".repeat(300);
        let miss =
            matches(&json!({"a": long}), &json!({"a": 1}), &mut Captures::new()).unwrap_err();
        assert!(miss.expected.contains(&long), "{}", miss.expected);
        assert_eq!(full(&json!({"a": long})), format!("{{\"a\":\"{long}\"}}"));
    }

    #[test]
    fn unordered_arrays_pair_items_in_any_order() {
        let want = json!({"$unordered": [{"name": "a"}, {"name": "b"}, {"name": "c"}]});
        assert!(ok(
            want.clone(),
            json!([{"name": "c"}, {"name": "a"}, {"name": "b"}])
        ));
        assert!(ok(
            want.clone(),
            json!([{"name": "a"}, {"name": "b"}, {"name": "c"}])
        ));
        // Same length, each matcher a distinct element.
        assert!(!ok(want.clone(), json!([{"name": "a"}, {"name": "b"}])));
        assert!(!ok(
            want.clone(),
            json!([{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "d"}])
        ));
        assert!(!ok(
            want.clone(),
            json!([{"name": "a"}, {"name": "a"}, {"name": "b"}])
        ));
        assert!(!ok(want, json!({"name": "a"})));
        assert!(ok(json!({"$unordered": []}), json!([])));
        // A greedy pairing would give the element both could take to the first matcher and
        // leave the second without one; the pairing is searched for.
        assert!(ok(
            json!({"$unordered": [{"$type": "object"}, {"name": "x"}]}),
            json!([{"name": "x"}, {"name": "y"}])
        ));
        // Nested, and beside plain members.
        assert!(ok(
            json!({"tools": {"$unordered": [{"name": "p"}, {"name": "q"}]}, "more": false}),
            json!({"tools": [{"name": "q", "extra": 1}, {"name": "p"}], "more": false})
        ));
    }

    #[test]
    fn distinct_and_all_of_judge_exposed_names_whatever_the_scheme() {
        let want = json!({"$all_of": [
            {"$distinct": "name"},
            {"$unordered": [{"tool": "search", "name": {"$contains": "search"}},
                            {"tool": "search", "name": {"$contains": "search"}}]}
        ]});
        let exposed = |a: &str, b: &str| json!([{"tool": "search", "name": a}, {"tool": "search", "name": b}]);
        assert!(ok(want.clone(), exposed("a__search", "b__search")));
        assert!(ok(want.clone(), exposed("search", "search_2")));
        let twice = matches(&want, &exposed("search", "search"), &mut Captures::new());
        assert_eq!(twice.unwrap_err().path, "$[1].name");
        assert!(!ok(want.clone(), exposed("a__search", "b__find")));
        assert!(!ok(json!({"$distinct": "name"}), json!([{"n": 1}])));
        assert!(!ok(json!({"$distinct": "name"}), json!({"name": 1})));
        assert!(validate(&json!({"$distinct": "name"})).is_ok());
        assert!(validate(&json!({"$distinct": ""})).is_err());
        assert!(validate(&json!({"$all_of": []})).is_err());
        assert!(validate(&json!({"$all_of": [{"$nope": 1}]})).is_err());
    }

    #[test]
    fn unordered_mismatches_name_the_missing_item_and_keep_captures() {
        let miss = matches(
            &json!({"tools": {"$unordered": [{"name": "a"}, {"name": "z"}]}}),
            &json!({"tools": [{"name": "b"}, {"name": "a"}]}),
            &mut Captures::new(),
        )
        .unwrap_err();
        assert_eq!(miss.path, "$.tools");
        assert!(
            miss.expected.contains(r#"{"name":"z"}"#),
            "{}",
            miss.expected
        );
        let miss = matches(
            &json!({"$unordered": [{"name": "a"}]}),
            &json!([]),
            &mut Captures::new(),
        )
        .unwrap_err();
        assert_eq!(miss.expected, "an array of 1 items, in any order");
        let mut caps = Captures::new();
        matches(
            &json!({"$unordered": [{"id": {"$capture": "x"}, "n": 2}, {"n": 1}]}),
            &json!([{"n": 1, "id": 7}, {"n": 2, "id": 9}]),
            &mut caps,
        )
        .unwrap();
        assert_eq!(caps.get("x"), Some(&json!(9)));
        assert!(ok(
            json!([{"$capture": "v"}, {"$unordered": [{"$same": "v"}, 2]}]),
            json!([1, [2, 1]])
        ));
    }
}
