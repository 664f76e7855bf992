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

    /// All symbols, sorted by address.
    pub fn symbols(&self) -> &[Symbol] {
        self.sorted.get_or_init(|| {
            let mut symbols: Vec<Symbol> = self.text.lines().filter_map(parse_kallsyms_line).collect();
            symbols.sort_by(|a, b| (a.address, &a.name).cmp(&(b.address, &b.name)));
            symbols
        })
    }

    /// The symbol containing `address` (the nearest one at or below it) and the offset into it.
    pub fn lookup(&self, address: u64) -> Option<(&Symbol, u64)> {
        let symbols = self.symbols();
        let index = symbols.partition_point(|s| s.address <= address).checked_sub(1)?;
        let symbol = &symbols[index];
        Some((symbol, address - symbol.address))
    }
}

fn parse_kallsyms_line(line: &str) -> Option<Symbol> {
    let mut parts = line.split_whitespace();
    let address = u64::from_str_radix(parts.next()?, 16).ok()?;
    let kind = parts.next()?.chars().next()?;
    let name = parts.next()?.to_string();
    let module = parts.next().map(|m| m.trim_matches(|c| c == '[' || c == ']').to_string());
    Some(Symbol { address, kind, name, module })
}

/// `printk_formats` as recorded: the format strings `bprint` events point to by address.
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

    /// The format string stored at `address`, without its quotes.
    pub fn get(&self, address: u64) -> Option<&str> {
        self.by_address
            .get_or_init(|| self.text.lines().filter_map(parse_printk_line).collect())
            .get(&address)
            .map(String::as_str)
    }
}

/// `0xffffffff81234567 : "format\n"`
fn parse_printk_line(line: &str) -> Option<(u64, String)> {
    let (address, format) = line.split_once(':')?;
    let address = u64::from_str_radix(address.trim().trim_start_matches("0x"), 16).ok()?;
    let format = format.trim();
    let format = format.strip_prefix('"').and_then(|f| f.strip_suffix('"')).unwrap_or(format);
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
            "ffffffff81000000 T _stext\nffffffff81000100 t do_thing [mymod]\nzzz\nffffffff81000050 T middle\n".into(),
        );
        let (s, off) = k.lookup(0xffffffff81000060).unwrap();
        assert_eq!((s.name.as_str(), off), ("middle", 0x10));
        let (s, _) = k.lookup(0xffffffff81000101).unwrap();
        assert_eq!(s.module.as_deref(), Some("mymod"));
        assert!(k.lookup(0x10).is_none());
    }

    #[test]
    fn printk_formats_by_address() {
        let p = PrintkFormats::new("0xffffffff82000000 : \"hello %d\\n\"\n".into());
        assert_eq!(p.get(0xffffffff82000000), Some("hello %d\\n"));
        assert_eq!(p.get(1), None);
    }
}
