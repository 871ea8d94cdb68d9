//! `x-mcp-header`: tool parameters a server asks to see mirrored into `Mcp-Param-{Name}` HTTP
//! headers (revision 2026-07-28, Streamable HTTP only).
//!
//! A listing over modern HTTP goes through [`admit`]: every tool's `inputSchema` is searched
//! for `x-mcp-header` annotations, a tool with an invalid one is left out of the result (with a
//! warning on stderr), and the valid tools' annotations are remembered in the transport's
//! [`ParamHeaders`]. A later `tools/call` of such a tool reads each annotated property's
//! value at its exact path in the arguments and mirrors it (see `transport/http/modern.rs`,
//! which encodes unsafe values in the `=?base64?…?=` form). Over stdio the annotations are
//! ignored, as the revision allows.
//!
//! An annotation is valid when its value is a non-empty HTTP token (`1*tchar`), it sits on a
//! property reached from the root through `properties` keys only (never through `items`,
//! `anyOf`, `$ref`, …), that property's `type` is `string`, `integer` or `boolean` (a list of
//! those, `null` allowed beside them; `number` or no type at all is refused), and no other
//! annotation of the schema names the same header in another case.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Map, Value};

/// One annotated parameter: the header's name part and the property path it mirrors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Annotation {
    /// The `{Name}` of `Mcp-Param-{Name}`, as the schema spells it.
    pub(crate) name: String,
    /// The chain of `properties` keys from the schema root to the annotated property.
    pub(crate) path: Vec<String>,
}

/// The annotations of the tools of the last complete listing, by tool name. Shared by the
/// client (which fills it) and the HTTP transport (which reads it for every `tools/call`).
#[derive(Debug, Clone, Default)]
pub(crate) struct ParamHeaders(Arc<Mutex<HashMap<String, Vec<Annotation>>>>);

impl ParamHeaders {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Vec<Annotation>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The annotations of the tool `name`, if it was listed (valid) by the last listing.
    pub(crate) fn of(&self, name: &str) -> Option<Vec<Annotation>> {
        self.lock().get(name).cloned()
    }

    /// The headers of a `tools/call` of `name` with `arguments`: each annotation's header
    /// name (`Mcp-Param-{Name}`) and the value's text, `None` when the value is absent or null
    /// (or not a string, integer or boolean, which the schema does not allow).
    pub(crate) fn values(
        &self,
        name: &str,
        arguments: Option<&Value>,
    ) -> Vec<(String, Option<String>)> {
        let Some(annotations) = self.of(name) else {
            return Vec::new();
        };
        annotations
            .iter()
            .map(|a| {
                let found = a
                    .path
                    .iter()
                    .try_fold(arguments, |at, key| at?.get(key).map(Some))
                    .flatten();
                (format!("Mcp-Param-{}", a.name), found.and_then(text))
            })
            .collect()
    }

    /// Replaces what is known with one complete listing's valid tools.
    pub(crate) fn replace(&self, tools: HashMap<String, Vec<Annotation>>) {
        *self.lock() = tools;
    }
}

/// The tools of a complete listing that may be used: over modern HTTP (`known`: where the
/// annotations are kept), those whose
/// `x-mcp-header` annotations are all valid (the others are reported on stderr and left out;
/// `keep_invalid` is the seam's decision to keep them), remembering their annotations for the
/// calls to come. Elsewhere, every tool.
pub(crate) fn admit(
    known: Option<&ParamHeaders>,
    keep_invalid: bool,
    tools: Vec<Value>,
) -> Vec<Value> {
    let Some(known) = known else {
        return tools;
    };
    let mut annotated = HashMap::new();
    let mut kept = Vec::with_capacity(tools.len());
    for tool in tools {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
        match annotations(tool.get("inputSchema")) {
            Ok(found) => {
                annotated.insert(name.to_owned(), found);
                kept.push(tool);
            }
            Err(reason) => {
                eprintln!(
                    "mcp-harness-client: warning: tool {name:?} left out of the listing: its \
                     x-mcp-header annotation is invalid ({reason})"
                );
                if keep_invalid {
                    kept.push(tool);
                }
            }
        }
    }
    known.replace(annotated);
    kept
}

/// Every `x-mcp-header` annotation of an input schema, or why the schema's annotations make
/// the tool invalid.
pub(crate) fn annotations(schema: Option<&Value>) -> Result<Vec<Annotation>, String> {
    let mut found = Vec::new();
    let mut path = Vec::new();
    if let Some(schema) = schema {
        walk(schema, &mut path, Place::Root, &mut found)?;
    }
    for (i, a) in found.iter().enumerate() {
        if let Some(b) = found[..i]
            .iter()
            .find(|b| b.name.eq_ignore_ascii_case(&a.name))
        {
            return Err(format!(
                "{:?} and {:?} name the same header (names compare case-insensitively)",
                b.name, a.name
            ));
        }
    }
    Ok(found)
}

/// Where a subschema sits, for the reachability rule.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    /// The root schema.
    Root,
    /// A property reached from the root through `properties` keys only.
    Property,
    /// Anywhere else (under `items`, `anyOf`, `$defs`, …).
    Elsewhere,
}

fn walk(
    value: &Value,
    path: &mut Vec<String>,
    place: Place,
    found: &mut Vec<Annotation>,
) -> Result<(), String> {
    match value {
        Value::Object(schema) => {
            if let Some(name) = schema.get("x-mcp-header") {
                found.push(check(schema, name, path, place)?);
            }
            for (key, child) in schema {
                let inner = match place {
                    Place::Elsewhere => Place::Elsewhere,
                    Place::Root | Place::Property => Place::Property,
                };
                match (key.as_str(), child) {
                    ("properties", Value::Object(properties)) => {
                        for (property, sub) in properties {
                            path.push(property.clone());
                            let walked = walk(sub, path, inner, found);
                            path.pop();
                            walked?;
                        }
                    }
                    // Instance values, not schemas: a member named x-mcp-header there is data.
                    ("const" | "enum" | "default" | "examples" | "x-mcp-header", _) => {}
                    _ => walk(child, path, Place::Elsewhere, found)?,
                }
            }
            Ok(())
        }
        Value::Array(items) => items
            .iter()
            .try_for_each(|item| walk(item, path, Place::Elsewhere, found)),
        _ => Ok(()),
    }
}

/// One annotation on `schema` at `path`, if it is valid there.
fn check(
    schema: &Map<String, Value>,
    name: &Value,
    path: &[String],
    place: Place,
) -> Result<Annotation, String> {
    let shown = || format!("at /{}", path.join("/"));
    let Value::String(name) = name else {
        return Err(format!("{}: the value {name} is not a string", shown()));
    };
    if name.is_empty() {
        return Err(format!("{}: the header name is empty", shown()));
    }
    if let Some(c) = name.chars().find(|c| !is_tchar(*c)) {
        return Err(format!(
            "{}: {name:?} is not an HTTP token (it holds {c:?})",
            shown()
        ));
    }
    if place != Place::Property {
        return Err(format!(
            "{}: {name:?} is not on a property reached through `properties` alone",
            shown()
        ));
    }
    let primitive = |t: &Value| matches!(t.as_str(), Some("string" | "integer" | "boolean"));
    let typed = match schema.get("type") {
        Some(t @ Value::String(_)) => primitive(t),
        Some(Value::Array(types)) => {
            types.iter().any(primitive)
                && types
                    .iter()
                    .all(|t| primitive(t) || t.as_str() == Some("null"))
        }
        _ => false,
    };
    if !typed {
        return Err(format!(
            "{}: {name:?} is on a property whose type is not string, integer or boolean ({})",
            shown(),
            schema
                .get("type")
                .map_or("none".to_owned(), Value::to_string)
        ));
    }
    Ok(Annotation {
        name: name.clone(),
        path: path.to_vec(),
    })
}

/// RFC 9110 `tchar`.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// A parameter value as header text: strings as they are, integers in decimal (a float with
/// no fraction counts, `42.0` → `42`), booleans `true`/`false`; `None` for null or any other
/// type.
fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Some(i.to_string()),
            (None, Some(u), _) => Some(u.to_string()),
            (None, None, Some(f)) if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
                Some(format!("{f:.0}"))
            }
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(schema: Value) -> Result<Vec<(String, String)>, String> {
        annotations(Some(&schema)).map(|found| {
            found
                .into_iter()
                .map(|a| (a.name, a.path.join(".")))
                .collect()
        })
    }

    #[test]
    fn valid_annotations_are_found_at_their_paths() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "dry": {"type": ["boolean", "null"], "x-mcp-header": "Dry-Run"},
            "target": {"type": "object", "properties": {
                "zone": {"type": "string", "x-mcp-header": "Zone"}
            }},
            "query": {"type": "string"}
        }});
        let mut found = names(schema).unwrap();
        found.sort();
        assert_eq!(
            found,
            [
                ("Count".into(), "count".into()),
                ("Dry-Run".into(), "dry".into()),
                ("Region".into(), "region".into()),
                ("Zone".into(), "target.zone".into()),
            ]
        );
        assert_eq!(names(json!({"type": "object"})).unwrap(), []);
        assert_eq!(annotations(None).unwrap(), []);
    }

    #[test]
    fn invalid_annotations_are_refused() {
        let on = |property: Value| json!({"type": "object", "properties": {"p": property}});
        for bad in [
            on(json!({"type": "string", "x-mcp-header": ""})),
            on(json!({"type": "string", "x-mcp-header": "Has Space"})),
            on(json!({"type": "string", "x-mcp-header": "Line\r\nBreak"})),
            on(json!({"type": "string", "x-mcp-header": "Ünïcode"})),
            on(json!({"type": "string", "x-mcp-header": 7})),
            on(json!({"type": "number", "x-mcp-header": "Num"})),
            on(json!({"x-mcp-header": "Untyped"})),
            on(json!({"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}})),
            on(json!({"anyOf": [{"type": "string", "x-mcp-header": "Any"}]})),
            json!({"type": "object", "x-mcp-header": "Root"}),
            json!({"$defs": {"d": {"type": "string", "x-mcp-header": "Def"}},
                   "properties": {"p": {"$ref": "#/$defs/d"}}}),
            json!({"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "Region"},
                "b": {"type": "string", "x-mcp-header": "region"}
            }}),
        ] {
            assert!(names(bad.clone()).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn values_follow_the_exact_path() {
        let known = ParamHeaders::default();
        let schema = json!({"properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "ok": {"type": "boolean", "x-mcp-header": "Ok"},
            "t": {"properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}}
        }});
        known.replace(HashMap::from([(
            "tool".to_owned(),
            annotations(Some(&schema)).unwrap(),
        )]));
        let args = json!({"region": "us-west1", "n": -7, "ok": false, "t": {"zone": null}});
        let mut got = known.values("tool", Some(&args));
        got.sort();
        assert_eq!(
            got,
            [
                ("Mcp-Param-N".into(), Some("-7".into())),
                ("Mcp-Param-Ok".into(), Some("false".into())),
                ("Mcp-Param-Region".into(), Some("us-west1".into())),
                ("Mcp-Param-Zone".into(), None),
            ]
        );
        assert_eq!(known.values("other", Some(&args)), []);
        assert!(
            known
                .values("tool", None)
                .iter()
                .all(|(_, value)| value.is_none())
        );
        assert_eq!(text(&json!(42.0)), Some("42".into()));
        assert_eq!(text(&json!(1.5)), None);
    }
}
