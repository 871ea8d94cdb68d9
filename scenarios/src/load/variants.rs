//! A family of cases in one file: `variants` maps each variant's name to values, and every
//! `{"$var": "<name>"}` in the file (outside `variants`) is replaced by the variant's value.

use serde_json::{Map, Value};

use super::is_kebab;

/// One step of a JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// A member of an object.
    Key(String),
    /// An element of an array.
    Index(usize),
}

/// Shows a path as `a.b[2].c`.
pub fn show(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if out.is_empty() => out.push_str(k),
            Seg::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The name of a `{"$var": "name"}` placeholder.
fn placeholder(value: &Value) -> Option<&str> {
    let map = value.as_object()?;
    match (map.len(), map.get("$var")) {
        (1, Some(Value::String(name))) => Some(name),
        _ => None,
    }
}

/// Every placeholder of `value` outside its top-level `variants`: its path and the placeholder.
pub fn placeholders(value: &Value) -> Vec<(Vec<Seg>, Value)> {
    fn walk(v: &Value, path: &mut Vec<Seg>, out: &mut Vec<(Vec<Seg>, Value)>) {
        if placeholder(v).is_some() {
            out.push((path.clone(), v.clone()));
            return;
        }
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    if path.is_empty() && k == "variants" {
                        continue;
                    }
                    path.push(Seg::Key(k.clone()));
                    walk(child, path, out);
                    path.pop();
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    path.push(Seg::Index(i));
                    walk(child, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, &mut Vec::new(), &mut out);
    out
}

/// The value at `path`, for writing.
pub fn at_mut<'a>(value: &'a mut Value, path: &[Seg]) -> Option<&'a mut Value> {
    let mut here = value;
    for seg in path {
        here = match seg {
            Seg::Key(k) => here.as_object_mut()?.get_mut(k)?,
            Seg::Index(i) => here.as_array_mut()?.get_mut(*i)?,
        };
    }
    Some(here)
}

/// One case of a file: its variant's name (`None` without variants) and its JSON.
pub type Member = (Option<String>, Value);

/// The cases of one file: `(None, value)` for a file without `variants`, else one
/// `(Some(name), value with the variant's values substituted)` per variant, in file order.
pub fn expand(value: &Value) -> Result<Vec<Member>, (String, String)> {
    let found = placeholders(value);
    let Some(variants) = value.get("variants") else {
        if let Some((path, _)) = found.first() {
            return Err((
                show(path),
                "`$var` stands for a variant's value, but the case has no `variants`".into(),
            ));
        }
        return Ok(vec![(None, value.clone())]);
    };
    let Some(variants) = variants.as_object().filter(|v| !v.is_empty()) else {
        return Err((
            "variants".into(),
            "expected an object mapping each variant's name to its values".into(),
        ));
    };
    let mut out = Vec::new();
    for (name, values) in variants {
        let at = format!("variants.{name}");
        if !is_kebab(name) {
            return Err((
                at,
                "a variant's name becomes part of the case id: expected kebab-case".into(),
            ));
        }
        let Some(values) = values.as_object() else {
            return Err((
                at,
                "expected an object of values, each replacing `{\"$var\": \"<name>\"}`".into(),
            ));
        };
        out.push((Some(name.clone()), substitute(value, &found, values, &at)?));
    }
    Ok(out)
}

fn substitute(
    value: &Value,
    found: &[(Vec<Seg>, Value)],
    values: &Map<String, Value>,
    at: &str,
) -> Result<Value, (String, String)> {
    let mut out = value.clone();
    let mut used = Vec::new();
    for (path, holder) in found {
        let name = placeholder(holder).unwrap_or_default();
        let Some(v) = values.get(name) else {
            return Err((
                show(path),
                format!("`{{\"$var\": {name:?}}}` has no value in {at}"),
            ));
        };
        if let Some(slot) = at_mut(&mut out, path) {
            *slot = v.clone();
        }
        used.push(name);
    }
    if let Some(unused) = values.keys().find(|k| !used.contains(&k.as_str())) {
        return Err((
            format!("{at}.{unused}"),
            format!("no `{{\"$var\": {unused:?}}}` uses this value"),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_variant_substitutes_its_values() {
        let file = json!({
            "variants": {"a": {"n": 1}, "b": {"n": 2}},
            "x": [{"y": {"$var": "n"}}]
        });
        let cases = expand(&file).unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[1].0.as_deref(), Some("b"));
        assert_eq!(cases[1].1["x"][0]["y"], 2);
        let missing = json!({"variants": {"a": {}}, "x": {"$var": "n"}});
        assert_eq!(expand(&missing).unwrap_err().0, "x");
        let unused = json!({"variants": {"a": {"n": 1, "m": 2}}, "x": {"$var": "n"}});
        assert_eq!(expand(&unused).unwrap_err().0, "variants.a.m");
        let stray = json!({"x": {"$var": "n"}});
        assert_eq!(expand(&stray).unwrap_err().0, "x");
    }
}
