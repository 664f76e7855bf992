//! The text tables a trace carries besides events: saved command lines (pid → comm),
//! kernel symbols (`/proc/kallsyms`) and `trace_printk` formats. Kept as the recorded text
//! and parsed on first use, since most analyses never need symbols.

use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Saved command lines: the comm the kernel last saw for each pid.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cmdlines {
    by_pid: BTreeMap<i32, String>,
}

impl Cmdlines {
    /// Parses `saved_cmdlines` text: one `PID COMM` per line (comms may contain spaces).
    pub fn parse(text: &str) -> Cmdlines {
        let by_pid = text
            .lines()
            .filter_map(|line| {
                let (pid, comm) = line.trim_start().split_once(' ')?;
                Some((pid.parse().ok()?, comm.to_string()))
            })
            .collect();
        Cmdlines { by_pid }
    }

    pub fn get(&self, pid: i32) -> Option<&str> {
        self.by_pid.get(&pid).map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.by_pid.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_pid.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (i32, &str)> {
        self.by_pid.iter().map(|(&pid, comm)| (pid, comm.as_str()))
    }
}

/// A kernel symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub address: u64,
    pub kind: char,
    pub name: String,
    pub module: Option<String>,
}

/// `/proc/kallsyms` as recorded, parsed on first lookup.
///
/// Lookups give what `trace-cmd report` prints, so they follow libtraceevent's rules:
/// lines are read until the first one that is not `ADDRESS TYPE NAME[\t[MODULE]]`;
/// names starting with `$` (Arm mapping symbols) and absolute symbols (type `a`/`A`) are
/// left out; an address belongs to the symbol at or below it only if the next symbol
/// starts above it (an address past the last symbol, or in a table whose addresses were
/// hidden as 0, resolves to nothing); symbols sharing an address are found by the same
/// binary search over the same order (sorted by address, ties in reverse file order).
#[derive(Debug, Default)]
pub struct Kallsyms {
    text: String,
    sorted: OnceLock<Vec<Symbol>>,
}

impl Kallsyms {
    pub fn new(text: String) -> Kallsyms {
        Kallsyms { text, sorted: OnceLock::new() }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The symbols lookups use, sorted by address.
    pub fn symbols(&self) -> &[Symbol] {
        self.sorted.get_or_init(|| {
            let mut symbols: Vec<Symbol> =
                self.text.split('\n').filter(|l| !l.is_empty()).map_while(parse_kallsyms_line).flatten().collect();
            // libtraceevent prepends each symbol to a list, then sorts it stably by address.
            symbols.reverse();
            symbols.sort_by_key(|s| s.address);
            symbols
        })
    }

    /// The symbol `address` belongs to and the offset into it, as libtraceevent finds it.
    pub fn lookup(&self, address: u64) -> Option<(&Symbol, u64)> {
        let symbols = self.symbols();
        let next_start = |i: usize| symbols.get(i + 1).map_or(0, |s| s.address);
        // The same probes as glibc's bsearch with libtraceevent's comparison, so that of
        // several symbols at one address the same one is found.
        let (mut low, mut high) = (0, symbols.len());
        while low < high {
            let i = (low + high) / 2;
            let start = symbols[i].address;
            if address == start || (address > start && address < next_start(i)) {
                return Some((&symbols[i], address - start));
            }
            if address < start {
                high = i;
            } else {
                low = i + 1;
            }
        }
        None
    }
}

/// One kallsyms line: `Some(None)` for a symbol lookups skip, `None` for a line that
/// ends the table.
fn parse_kallsyms_line(line: &str) -> Option<Option<Symbol>> {
    let rest = line.trim_start();
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_hexdigit()).len();
    let digits = digits.min(16);
    let address = u64::from_str_radix(rest.get(..digits).filter(|d| !d.is_empty())?, 16).ok()?;
    let rest = rest[digits..].trim_start();
    let kind = rest.chars().next()?;
    let rest = rest[kind.len_utf8()..].trim_start();
    let name_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    if name_end == 0 {
        return None;
    }
    let name = &rest[..name_end];
    let module = rest[name_end..]
        .strip_prefix("\t[")
        .filter(|m| !m.is_empty() && !m.starts_with(char::is_whitespace))
        .map(|m| {
            let m = &m[..m.find(char::is_whitespace).unwrap_or(m.len())];
            m[..m.len() - 1].to_string()
        });
    if name.starts_with('$') || kind == 'a' || kind == 'A' {
        return Some(None);
    }
    Some(Some(Symbol { address, kind, name: name.to_string(), module }))
}

/// `printk_formats` as recorded: the format strings `bprint` events (and `%s` of string
/// pointers) refer to by address.
#[derive(Debug, Default)]
pub struct PrintkFormats {
    text: String,
    by_address: OnceLock<BTreeMap<u64, String>>,
}

impl PrintkFormats {
    pub fn new(text: String) -> PrintkFormats {
        PrintkFormats { text, by_address: OnceLock::new() }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The format string stored at `address` as libtraceevent keeps it: without its
    /// quotes, and without a final `\n` when it was quoted.
    pub fn get(&self, address: u64) -> Option<&str> {
        self.by_address
            .get_or_init(|| {
                let mut map = BTreeMap::new();
                for (address, format) in self.text.split('\n').filter(|l| !l.is_empty()).filter_map(parse_printk_line) {
                    map.entry(address).or_insert(format);
                }
                map
            })
            .get(&address)
            .map(String::as_str)
    }
}

/// `0xffffffff81234567 : "format\n"`: the address (hex) before the first `:`, the
/// format after the one character that follows it.
fn parse_printk_line(line: &str) -> Option<(u64, String)> {
    let (address, format) = line.split_once(':')?;
    let address = address.trim_start();
    let address = address.strip_prefix("0x").or_else(|| address.strip_prefix("0X")).unwrap_or(address);
    let digits = address.len() - address.trim_start_matches(|c: char| c.is_ascii_hexdigit()).len();
    let address = u64::from_str_radix(&address[..digits], 16).ok()?;
    let mut format = format.get(1..).unwrap_or("");
    format = format.strip_prefix('"').unwrap_or(format);
    if let Some(unquoted) = format.strip_suffix('"') {
        format = unquoted.strip_suffix("\\n").unwrap_or(unquoted);
    }
    Some((address, format.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmdlines_keep_spaces_in_comms() {
        let c = Cmdlines::parse("4435 trace-cmd\n166654 C1 CompilerThre\nbad line\n");
        assert_eq!(c.get(166654), Some("C1 CompilerThre"));
        assert_eq!(c.get(4435), Some("trace-cmd"));
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn kallsyms_lookup_finds_the_enclosing_symbol() {
        let k = Kallsyms::new(
            "ffffffff81000000 T _stext\nffffffff81000100 t do_thing\t[mymod]\n\
             ffffffff81000050 T middle\nffffffff81000200 T end\n"
                .into(),
        );
        let (s, off) = k.lookup(0xffffffff81000060).unwrap();
        assert_eq!((s.name.as_str(), off), ("middle", 0x10));
        let (s, _) = k.lookup(0xffffffff81000101).unwrap();
        assert_eq!((s.name.as_str(), s.module.as_deref()), ("do_thing", Some("mymod")));
        assert!(k.lookup(0x10).is_none());
        // Past the last symbol only its own address resolves.
        assert_eq!(k.lookup(0xffffffff81000200).unwrap().0.name, "end");
        assert!(k.lookup(0xffffffff81000201).is_none());
    }

    #[test]
    fn kallsyms_are_read_like_libtraceevent() {
        let k = Kallsyms::new(
            "ffffffc000080000 t $x\nffffffc000080000 T _text\n0000000000000010 A absolute\n\
             ffffffc000080100 T alias_b\nffffffc000080100 T alias_a\nffffffc000080200 T after\n\
             not a line\nffffffc000090000 T never\n"
                .into(),
        );
        let names: Vec<_> = k.symbols().iter().map(|s| s.name.as_str()).collect();
        // `$x` and absolute symbols are skipped, reading stops at the bad line, and
        // symbols sharing an address come in reverse file order.
        assert_eq!(names, ["_text", "alias_a", "alias_b", "after"]);
        // Inside a shared address's range, the last of the group (the first in the file).
        assert_eq!(k.lookup(0xffffffc000080104).unwrap().0.name, "alias_b");
        // Hidden addresses (kptr_restrict): every symbol at 0 and nothing resolves.
        let hidden = Kallsyms::new("00000000 t a\n00000000 T b\n".into());
        assert!(hidden.lookup(0xc0001234).is_none());
    }

    #[test]
    fn printk_formats_by_address() {
        let p = PrintkFormats::new("0xffffffff82000000 : \"hello %d\\n\"\n0xc0700000 : \"plain\"\n".into());
        assert_eq!(p.get(0xffffffff82000000), Some("hello %d"));
        assert_eq!(p.get(0xc0700000), Some("plain"));
        assert_eq!(p.get(1), None);
    }
}
