//! C `printf` conversions of one value, byte for byte as glibc writes them: the print
//! formats of trace events are C format strings (`%03d`, `%#lx`, `%-10s`, `%.*s`), and
//! `trace-cmd report` shows event fields through them.

use std::io::Write;

/// One conversion specification (`%[flags][width][.precision][length]conversion`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Spec {
    left: bool,
    zero: bool,
    alternate: bool,
    plus: bool,
    space: bool,
    width: Option<usize>,
    precision: Option<usize>,
    width_from_arg: bool,
    precision_from_arg: bool,
    pub conversion: u8,
}

impl Spec {
    /// Reads the specification that starts at `%`; `None` if `text` is not one.
    pub fn parse(text: &str) -> Option<Spec> {
        let mut bytes = text.as_bytes().strip_prefix(b"%")?.iter().copied().peekable();
        let mut spec = Spec::default();
        while let Some(&b) = bytes.peek() {
            match b {
                b'-' => spec.left = true,
                b'0' => spec.zero = true,
                b'#' => spec.alternate = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                _ => break,
            }
            bytes.next();
        }
        let number = |bytes: &mut std::iter::Peekable<std::iter::Copied<std::slice::Iter<'_, u8>>>| {
            let mut n: Option<usize> = None;
            while let Some(&d) = bytes.peek().filter(|d| d.is_ascii_digit()) {
                n = Some(n.unwrap_or(0).saturating_mul(10).saturating_add(usize::from(d - b'0')));
                bytes.next();
            }
            n
        };
        if bytes.peek() == Some(&b'*') {
            spec.width_from_arg = true;
            bytes.next();
        } else {
            spec.width = number(&mut bytes);
        }
        if bytes.peek() == Some(&b'.') {
            bytes.next();
            if bytes.peek() == Some(&b'*') {
                spec.precision_from_arg = true;
                bytes.next();
            } else {
                spec.precision = Some(number(&mut bytes).unwrap_or(0));
            }
        }
        for b in bytes {
            if !matches!(b, b'h' | b'l' | b'L' | b'q' | b'j' | b'z' | b'Z' | b't') {
                spec.conversion = b;
                return Some(spec);
            }
        }
        None
    }

    /// Fills a `*` width or precision with the argument given for it. A negative width
    /// means left alignment; a negative precision, none.
    pub fn with_star(mut self, star: i32) -> Spec {
        if self.width_from_arg {
            self.left |= star < 0;
            self.width = Some(star.unsigned_abs() as usize);
        } else if self.precision_from_arg {
            self.precision = (star >= 0).then_some(star as usize);
        }
        self
    }

    /// Writes an integer: `value` already has the C type of the conversion (signed for
    /// `d`/`i`, unsigned for `u`/`x`/`X`/`o`, truncated to the length modifier's width).
    pub fn write_int(&self, out: &mut Vec<u8>, value: i128) {
        let negative = value < 0;
        let magnitude = value.unsigned_abs();
        let mut digits = match self.conversion {
            b'x' => format!("{magnitude:x}"),
            b'X' => format!("{magnitude:X}"),
            b'o' => format!("{magnitude:o}"),
            _ => magnitude.to_string(),
        };
        if let Some(precision) = self.precision {
            if precision == 0 && magnitude == 0 {
                digits.clear();
            }
            while digits.len() < precision {
                digits.insert(0, '0');
            }
        }
        let prefix = match self.conversion {
            b'd' | b'i' if negative => "-",
            b'd' | b'i' if self.plus => "+",
            b'd' | b'i' if self.space => " ",
            b'x' if self.alternate && magnitude != 0 => "0x",
            b'X' if self.alternate && magnitude != 0 => "0X",
            b'o' if self.alternate && !digits.starts_with('0') => "0",
            _ => "",
        };
        let zero_pad = self.zero && !self.left && self.precision.is_none();
        self.pad(out, prefix.as_bytes(), digits.as_bytes(), zero_pad);
    }

    /// Writes a string (`%s`): at most `precision` bytes, padded to the width.
    pub fn write_str(&self, out: &mut Vec<u8>, text: &[u8]) {
        let text = &text[..self.precision.map_or(text.len(), |p| p.min(text.len()))];
        self.pad(out, b"", text, false);
    }

    fn pad(&self, out: &mut Vec<u8>, prefix: &[u8], body: &[u8], zero_pad: bool) {
        let fill = self.width.unwrap_or(0).saturating_sub(prefix.len() + body.len());
        if self.left {
            out.extend_from_slice(prefix);
            out.extend_from_slice(body);
            out.resize(out.len() + fill, b' ');
        } else if zero_pad {
            out.extend_from_slice(prefix);
            out.resize(out.len() + fill, b'0');
            out.extend_from_slice(body);
        } else {
            out.resize(out.len() + fill, b' ');
            out.extend_from_slice(prefix);
            out.extend_from_slice(body);
        }
    }
}

/// glibc's `%p`: `(nil)` for 0, else `0x` and hex digits.
pub(crate) fn write_pointer(out: &mut Vec<u8>, value: u64) {
    if value == 0 {
        out.extend_from_slice(b"(nil)");
    } else {
        let _ = write!(out, "{value:#x}");
    }
}

/// The bytes of a C string: up to the first NUL.
pub(crate) fn c_string(bytes: &[u8]) -> &[u8] {
    &bytes[..bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len())]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(spec: &str, value: i128) -> String {
        let mut out = Vec::new();
        Spec::parse(spec).unwrap().write_int(&mut out, value);
        String::from_utf8(out).unwrap()
    }

    fn string(spec: &str, star: Option<i32>, text: &str) -> String {
        let mut out = Vec::new();
        let spec = Spec::parse(spec).unwrap();
        let spec = star.map_or(spec.clone(), |s| spec.with_star(s));
        spec.write_str(&mut out, text.as_bytes());
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn integers_like_glibc() {
        assert_eq!(int("%03d", 1), "001");
        assert_eq!(int("%03d", -1), "-01");
        assert_eq!(int("%d", -2147483648), "-2147483648");
        assert_eq!(int("%lu", 18446744073709551615), "18446744073709551615");
        assert_eq!(int("%llx", 0xffffffc0000fbb98), "ffffffc0000fbb98");
        assert_eq!(int("%#lx", 0x1f), "0x1f");
        assert_eq!(int("%#lx", 0), "0");
        assert_eq!(int("%#o", 8), "010");
        assert_eq!(int("%08X", 0xbeef), "0000BEEF");
        assert_eq!(int("%-5d", 42), "42   ");
        assert_eq!(int("%5.3d", 7), "  007");
        assert_eq!(int("%.0d", 0), "");
        assert_eq!(int("%010.3d", 7), "       007");
        assert_eq!(int("%+d", 3), "+3");
        assert_eq!(int("%2d", 5), " 5");
    }

    #[test]
    fn strings_and_stars() {
        assert_eq!(string("%s", None, "abc"), "abc");
        assert_eq!(string("%-6s", None, "ab"), "ab    ");
        assert_eq!(string("%6s", None, "ab"), "    ab");
        assert_eq!(string("%.2s", None, "abc"), "ab");
        assert_eq!(string("%.*s", Some(1), "abc"), "a");
        assert_eq!(string("%.*s", Some(-1), "abc"), "abc");
        assert_eq!(string("%*s", Some(-4), "ab"), "ab  ");
        assert_eq!(Spec::parse("%lld").unwrap().conversion, b'd');
        assert!(Spec::parse("%ll").is_none());
        let mut out = Vec::new();
        write_pointer(&mut out, 0);
        write_pointer(&mut out, 0xc0de);
        assert_eq!(out, b"(nil)0xc0de");
    }
}
