//! A request's path and query string, decoded and checked: every value the server uses
//! comes through here, typed and bounded, so a malformed or outlandish request becomes a
//! `400 Bad Request` with a message instead of a panic or an unbounded computation.

use std::collections::BTreeMap;

/// Why a request cannot be answered: the client's fault.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadRequest(pub String);

impl From<tiles::tile::TileError> for BadRequest {
    fn from(error: tiles::tile::TileError) -> BadRequest {
        BadRequest(error.to_string())
    }
}

impl BadRequest {
    pub fn new(message: impl Into<String>) -> BadRequest {
        BadRequest(message.into())
    }
}

/// A decoded request target: `/path?key=value&...`.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Query {
    pub path: String,
    values: BTreeMap<String, String>,
}

/// Longest request target accepted (a tile request is about 100 bytes; a CPU list for
/// 4096 CPUs written one by one is about 20 KB).
const MAX_TARGET: usize = 32 * 1024;

impl Query {
    /// Parses a request target. Percent-escapes are decoded (invalid UTF-8 is refused);
    /// a key given twice is refused, so no value is silently ignored.
    pub fn parse(target: &str) -> Result<Query, BadRequest> {
        if target.len() > MAX_TARGET {
            return Err(BadRequest::new("request target too long"));
        }
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let path = percent_decode(path)?;
        if !path.starts_with('/') {
            return Err(BadRequest::new("the path must start with /"));
        }
        let mut values = BTreeMap::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let key = percent_decode(&key.replace('+', " "))?;
            let value = percent_decode(&value.replace('+', " "))?;
            if values.insert(key.clone(), value).is_some() {
                return Err(BadRequest(format!("parameter {key} given twice")));
            }
        }
        Ok(Query { path, values })
    }

    /// A parameter's raw value, if given.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// A required parameter.
    pub fn require(&self, key: &str) -> Result<&str, BadRequest> {
        self.get(key).ok_or_else(|| BadRequest(format!("missing parameter {key}")))
    }

    /// A required integer within `range`.
    pub fn int(&self, key: &str, range: std::ops::RangeInclusive<i64>) -> Result<i64, BadRequest> {
        parse_int(key, self.require(key)?, &range)
    }

    /// An optional integer within `range`, else `default`.
    pub fn int_or(&self, key: &str, range: std::ops::RangeInclusive<i64>, default: i64) -> Result<i64, BadRequest> {
        self.get(key).map_or(Ok(default), |value| parse_int(key, value, &range))
    }

    /// A flag: absent, `0` or `1`.
    pub fn flag(&self, key: &str) -> Result<bool, BadRequest> {
        match self.get(key) {
            None | Some("0") => Ok(false),
            Some("1") => Ok(true),
            Some(other) => Err(BadRequest(format!("{key}={other}: expected 0 or 1"))),
        }
    }

    /// A list of non-negative integers written `0-3,8,10-11`, each below `limit`; at most
    /// `limit` values in all.
    pub fn int_list(&self, key: &str, limit: u32) -> Result<Option<Vec<u32>>, BadRequest> {
        let Some(text) = self.get(key) else { return Ok(None) };
        let mut out = Vec::new();
        for part in text.split(',').filter(|p| !p.is_empty()) {
            let (first, last) = match part.split_once('-') {
                Some((a, b)) => (parse_u32(key, a)?, parse_u32(key, b)?),
                None => (parse_u32(key, part)?, parse_u32(key, part)?),
            };
            if first > last || last >= limit {
                return Err(BadRequest(format!("{key}: {part} is not a range below {limit}")));
            }
            if out.len() + (last - first) as usize >= limit as usize {
                return Err(BadRequest(format!("{key}: more than {limit} values")));
            }
            out.extend(first..=last);
        }
        Ok(Some(out))
    }
}

fn parse_int(key: &str, value: &str, range: &std::ops::RangeInclusive<i64>) -> Result<i64, BadRequest> {
    let number: i64 = value.parse().map_err(|_| BadRequest(format!("{key}={value}: not an integer")))?;
    if !range.contains(&number) {
        return Err(BadRequest(format!("{key}={number}: out of range {} to {}", range.start(), range.end())));
    }
    Ok(number)
}

fn parse_u32(key: &str, value: &str) -> Result<u32, BadRequest> {
    value.parse().map_err(|_| BadRequest(format!("{key}: {value} is not a non-negative integer")))
}

/// Decodes `%XX` escapes; refuses broken escapes and invalid UTF-8.
fn percent_decode(text: &str) -> Result<String, BadRequest> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
            let byte = hex.and_then(|h| u8::from_str_radix(h, 16).ok());
            out.push(byte.ok_or_else(|| BadRequest::new("broken %-escape in the request"))?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| BadRequest::new("the request is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_paths_values_and_lists() {
        let q = Query::parse("/api/tile?trace=0&cpus=0-2,5&target=a%20b&x=1").unwrap();
        assert_eq!(q.path, "/api/tile");
        assert_eq!(q.int("trace", 0..=3), Ok(0));
        assert_eq!(q.int_list("cpus", 8), Ok(Some(vec![0, 1, 2, 5])));
        assert_eq!(q.get("target"), Some("a b"));
        assert_eq!(q.flag("x"), Ok(true));
        assert_eq!(q.flag("absent"), Ok(false));
    }

    #[test]
    fn refuses_what_it_cannot_trust() {
        assert!(Query::parse("/a?x=%zz").is_err());
        assert!(Query::parse("/a?x=%ff").is_err(), "invalid UTF-8");
        assert!(Query::parse("/a?x=1&x=2").is_err());
        assert!(Query::parse("nopath").is_err());
        assert!(Query::parse(&format!("/a?x={}", "9".repeat(40_000))).is_err());
        let q = Query::parse("/a?n=12345678901234567890&m=-1&c=3-1&d=0-9999999&f=2").unwrap();
        assert!(q.int("n", 0..=10).is_err());
        assert!(q.int("m", 0..=10).is_err());
        assert!(q.int("missing", 0..=10).is_err());
        assert!(q.int_list("c", 8).is_err());
        assert!(q.int_list("d", 4096).is_err());
        assert!(q.flag("f").is_err());
    }
}
