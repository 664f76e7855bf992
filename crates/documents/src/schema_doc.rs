//! Renders the catalogue's schemas as one Markdown page (`docs/json.md`): per document a
//! tree of its fields with their types and descriptions, so the documentation of every
//! field comes from its definition.

use crate::{Entry, catalogue};
#[cfg(test)]
use schemars::SchemaGenerator;
use serde_json::{Map, Value};
use std::fmt::Write;

/// `docs/json.md`: every document of [`catalogue`].
pub fn markdown() -> String {
    let mut text = String::from(
        "# JSON documents\n\n\
         Generated from `crates/documents` (`SCHEDLENS_BLESS=1 cargo test -p documents` \
         rewrites this file); each field's text is its definition's doc comment. Fields \
         appear in this order in the output. `?` marks a field that may be `null`.\n",
    );
    for entry in catalogue() {
        document(&mut text, &entry);
    }
    text
}

fn document(text: &mut String, entry: &Entry) {
    let root = entry.schema.as_value();
    let defs = root.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default();
    let _ = write!(text, "\n## {}\n\n{}.", entry.name, entry.where_);
    if let Some(description) = root.get("description").and_then(Value::as_str) {
        let _ = write!(text, " {}", one_line(description));
    }
    text.push_str("\n\n");
    let mut out = String::new();
    fields(&mut out, root, &defs, 0, &mut Vec::new());
    if out.is_empty() {
        let _ = writeln!(text, "A value of type {}.", type_name(root, &defs));
    }
    text.push_str(&out);
}

/// The object fields of `schema` (following `$ref`s, arrays' items and nullable
/// wrappers), as an indented list.
fn fields(out: &mut String, schema: &Value, defs: &Map<String, Value>, depth: usize, seen: &mut Vec<String>) {
    let (schema, reference) = resolve(schema, defs);
    if let Some(name) = &reference {
        if seen.contains(name) || depth > 8 {
            return;
        }
        seen.push(name.clone());
    }
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            let indent = "  ".repeat(depth);
            let _ = write!(out, "{indent}- `{name}` ({})", type_name(property, defs));
            if let Some(description) = description(property, defs) {
                let _ = write!(out, ": {}", one_line(&description));
            }
            out.push('\n');
            fields(out, property, defs, depth + 1, seen);
        }
    } else if let Some(items) = schema.get("items") {
        fields(out, items, defs, depth, seen);
    } else if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        fields(out, values, defs, depth, seen);
    } else if let Some(inner) = nullable_inner(schema) {
        fields(out, inner, defs, depth, seen);
    } else if let Some(variants) = schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array) {
        for variant in variants {
            fields(out, variant, defs, depth, seen);
        }
    }
    if reference.is_some() {
        seen.pop();
    }
}

/// `schema` with a top-level `$ref` followed, and the name it referred to.
fn resolve<'a>(schema: &'a Value, defs: &'a Map<String, Value>) -> (&'a Value, Option<String>) {
    match schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
        Some(name) => (defs.get(name).unwrap_or(schema), Some(name.to_string())),
        None => (schema, None),
    }
}

/// The one non-null alternative of an `anyOf`/`oneOf` of it and `null`.
fn nullable_inner(schema: &Value) -> Option<&Value> {
    let variants = schema.get("anyOf").or_else(|| schema.get("oneOf"))?.as_array()?;
    let mut others = variants.iter().filter(|v| v.get("type").and_then(Value::as_str) != Some("null"));
    let inner = others.next()?;
    (others.next().is_none() && variants.len() == 2).then_some(inner)
}

fn description(schema: &Value, defs: &Map<String, Value>) -> Option<String> {
    if let Some(text) = schema.get("description").and_then(Value::as_str) {
        return Some(text.to_string());
    }
    let (resolved, reference) = resolve(nullable_inner(schema).unwrap_or(schema), defs);
    reference.and_then(|_| resolved.get("description").and_then(Value::as_str).map(str::to_string))
}

/// A short type: `integer`, `string?`, `[Incident]`, `"a" | "b"`, `{string: integer}`.
fn type_name(schema: &Value, defs: &Map<String, Value>) -> String {
    if let Some(inner) = nullable_inner(schema) {
        return format!("{}?", type_name(inner, defs));
    }
    if let Some(name) = schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
        let resolved = defs.get(name).unwrap_or(schema);
        if resolved.get("properties").is_none() {
            return type_name(resolved, defs);
        }
        return name.to_string();
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values.iter().map(Value::to_string).collect::<Vec<_>>().join(" | ");
    }
    if let Some(value) = schema.get("const") {
        return value.to_string();
    }
    if let Some(variants) = schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array) {
        return variants.iter().map(|v| type_name(v, defs)).collect::<Vec<_>>().join(" | ");
    }
    match schema.get("type") {
        Some(Value::String(kind)) if kind == "array" => match schema.get("items") {
            Some(Value::Array(tuple)) => {
                format!("[{}]", tuple.iter().map(|v| type_name(v, defs)).collect::<Vec<_>>().join(", "))
            }
            Some(items) => format!("[{}]", type_name(items, defs)),
            None => match schema.get("prefixItems").and_then(Value::as_array) {
                Some(tuple) => {
                    format!("[{}]", tuple.iter().map(|v| type_name(v, defs)).collect::<Vec<_>>().join(", "))
                }
                None => "array".to_string(),
            },
        },
        Some(Value::String(kind)) if kind == "object" => match schema.get("additionalProperties") {
            Some(values @ Value::Object(_)) => format!("{{string: {}}}", type_name(values, defs)),
            _ => "object".to_string(),
        },
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => {
            let names: Vec<&str> = kinds.iter().filter_map(Value::as_str).filter(|k| *k != "null").collect();
            let nullable = kinds.iter().any(|k| k == "null");
            let shown = match names.as_slice() {
                // One type besides null (an `Option` of an array or map): shown as that type.
                [only] => {
                    let mut single = schema.clone();
                    single["type"] = Value::from(*only);
                    type_name(&single, defs)
                }
                _ => names.join(" | "),
            };
            format!("{shown}{}", if nullable { "?" } else { "" })
        }
        _ => "any".to_string(),
    }
}

/// Doc comments wrap; the page reads them as one line each paragraph.
fn one_line(text: &str) -> String {
    text.split("\n\n").map(|p| p.split_whitespace().collect::<Vec<_>>().join(" ")).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use schemars::JsonSchema;
    use std::collections::BTreeMap;

    /// An example.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Outer {
        /// How many.
        count: u64,
        /// Maybe a name.
        name: Option<String>,
        /// The parts.
        parts: Vec<Inner>,
        /// Per kind.
        kinds: BTreeMap<String, u32>,
        kind: Kind,
        pair: (u32, i64),
    }

    /// A part.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        /// Where it starts, in ns.
        start_ns: i64,
        inner: Option<Box<Inner>>,
    }

    /// What it is.
    #[derive(JsonSchema)]
    #[serde(rename_all = "kebab-case")]
    #[allow(dead_code)]
    enum Kind {
        WorkConservation,
        Overload,
    }

    /// Optional compound values.
    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Optional {
        /// An interval.
        interval: Option<(f64, f64)>,
        /// Names.
        names: Option<Vec<String>>,
    }

    #[test]
    fn an_optional_array_shows_its_items() {
        let entry = Entry {
            name: "optional",
            where_: "nowhere",
            schema: SchemaGenerator::default().root_schema_for::<Optional>(),
        };
        let mut text = String::new();
        document(&mut text, &entry);
        assert!(text.contains("- `interval` ([number, number]?): An interval.\n"), "{text}");
        assert!(text.contains("- `names` ([string]?): Names.\n"), "{text}");
    }

    #[test]
    fn renders_fields_types_and_descriptions() {
        let entry =
            Entry { name: "example", where_: "nowhere", schema: SchemaGenerator::default().root_schema_for::<Outer>() };
        let mut text = String::new();
        document(&mut text, &entry);
        let expected = "\n## example\n\nnowhere. An example.\n\n\
            - `count` (integer): How many.\n\
            - `name` (string?): Maybe a name.\n\
            - `parts` ([Inner]): The parts.\n\
            \x20\x20- `start_ns` (integer): Where it starts, in ns.\n\
            \x20\x20- `inner` (Inner?): A part.\n\
            - `kinds` ({string: integer}): Per kind.\n\
            - `kind` (\"work-conservation\" | \"overload\"): What it is.\n\
            - `pair` ([integer, integer])\n";
        assert_eq!(text, expected, "{text}");
    }
}
