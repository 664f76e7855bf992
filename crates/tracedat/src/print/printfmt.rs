//! An event's `print fmt:` read the way libtraceevent (1.7, the reference decoder's
//! library) reads it, as far as showing fields needs: the format string cut into pieces
//! (literal text and conversions, each conversion with the argument it consumes), and
//! which arguments are plain fields (`REC->ip`, maybe behind casts such as `(void *)`).
//!
//! `trace-cmd report -R` prints a field through the conversion whose argument is that
//! field (`target_cpu=%03d` gives `target_cpu=001`, `%ps` a symbol name), so reading the
//! print format exactly as libtraceevent does decides what the text looks like. Its
//! quirks are kept on purpose: `%c` and `%+d` are not conversions for it (they become
//! literal text and consume no argument), a conversion without an argument, or a call of
//! a function it does not know, makes the whole event print raw.

/// One piece of a print format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub kind: ChunkKind,
    /// Literal text (escapes resolved), or the conversion as written (`%03d`, `%ps`).
    pub text: String,
    pub arg: Option<Arg>,
    /// The argument a `*` in the conversion takes as width or precision.
    pub len_arg: Option<Arg>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum ChunkKind {
    Literal,
    /// `d i u x X o`; `ls` counts length modifiers (`h` -1, `l` +1, `ll`/`L` 2).
    Number {
        ls: i8,
    },
    /// `%p` with its extension letters (`%ps`, `%pS`, `%pM`, ...).
    Pointer,
    Str,
}

/// A print-format argument, as far as printing fields needs to know it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Arg {
    /// `REC->name`, with the casts in front of it, outermost first.
    Field { name: String, casts: Vec<String> },
    /// A number (or another single token).
    Atom(String),
    /// Text (a `bprint` string argument).
    Text(Vec<u8>),
    /// Any other expression.
    Other,
}

/// A print format split into pieces.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PrintFormat {
    pub chunks: Vec<Chunk>,
    /// libtraceevent could not use it: every field prints raw.
    pub failed: bool,
}

/// Functions libtraceevent knows in print formats (its own and those its plugins add).
const KNOWN_FUNCTIONS: &[&str] = &[
    "__print_flags",
    "__print_symbolic",
    "__print_hex",
    "__print_hex_str",
    "__print_array",
    "__get_str",
    "__get_rel_str",
    "__get_bitmask",
    "__get_rel_bitmask",
    "__get_cpumask",
    "__get_rel_cpumask",
    "__get_dynamic_array",
    "__get_rel_dynamic_array",
    "__get_sockaddr",
    "__get_sockaddr_rel",
    "__get_dynamic_array_len",
    "__get_rel_dynamic_array_len",
    "__builtin_expect",
    "sizeof",
    // plugins
    "__le16_to_cpup",
    "is_writable_pte",
    "jbd2_dev_to_name",
    "jiffies_to_msecs",
    "scsi_trace_parse_cdb",
    "xen_hypercall_name",
];

impl PrintFormat {
    /// Reads the text after `print fmt: ` of an event. `fields` are the event's own field
    /// names (old ftrace formats without arguments print every field in order).
    pub fn parse(print_fmt: &str, is_ftrace: bool, fields: &[&str]) -> PrintFormat {
        let tokens = tokenize(print_fmt);
        let mut rest = &tokens[..];
        let Some((Token::Quoted(format), after)) = rest.split_first() else {
            return PrintFormat { chunks: Vec::new(), failed: true };
        };
        rest = after;
        let mut args = Vec::new();
        let mut failed = false;
        match rest.split_first() {
            None if is_ftrace => {
                args = fields.iter().map(|name| Arg::Field { name: name.to_string(), casts: Vec::new() }).collect()
            }
            None => {}
            Some((Token::Delim(','), list)) => {
                failed = calls_unknown_function(list);
                args = split_args(list).into_iter().map(classify).collect();
            }
            Some(_) => failed = true,
        }
        let (chunks, bad_args) = parse_chunks(format, args);
        PrintFormat { chunks, failed: failed || bad_args }
    }
}

/// Cuts a format string into pieces, giving each conversion its argument (and a `*` its
/// own). `true` when a conversion has no argument left or a length is out of range.
pub(crate) fn parse_chunks(format: &str, args: Vec<Arg>) -> (Vec<Chunk>, bool) {
    let bytes = format.as_bytes();
    let mut args = args.into_iter();
    let mut chunks = Vec::new();
    let mut failed = false;
    let mut at = 0;
    while at < bytes.len() {
        let consumed = if bytes[at] == b'%' && bytes.get(at + 1) != Some(&b'%') {
            conversion(&bytes[at..], &mut args, &mut chunks, &mut failed)
        } else {
            literal(&bytes[at..], &mut chunks)
        };
        at += consumed.max(1);
    }
    (chunks, failed)
}

/// Literal text up to the next conversion, with `\n`, `\t`, `\r`, `\\` and `%%` resolved;
/// returns the bytes consumed.
fn literal(bytes: &[u8], chunks: &mut Vec<Chunk>) -> usize {
    let mut text = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if i + 1 < bytes.len() => {
                i += 1;
                text.push(match bytes[i] {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    other => other,
                });
            }
            b'%' if bytes.get(i + 1) == Some(&b'%') => {
                text.push(b'%');
                i += 1;
            }
            b'%' => break,
            other => text.push(other),
        }
        i += 1;
    }
    chunks.push(Chunk {
        kind: ChunkKind::Literal,
        text: String::from_utf8_lossy(&text).into_owned(),
        arg: None,
        len_arg: None,
    });
    i
}

/// One conversion starting at `%`; returns the bytes consumed.
fn conversion(bytes: &[u8], args: &mut impl Iterator<Item = Arg>, chunks: &mut Vec<Chunk>, failed: &mut bool) -> usize {
    let mut ls: i32 = 0;
    let mut len_arg = None;
    let mut i = 1;
    while i < bytes.len() {
        let kind = match bytes[i] {
            b'#' | b'.' | b'0'..=b'9' | b'-' => None,
            b'h' => {
                ls -= 1;
                None
            }
            b'l' => {
                ls += 1;
                None
            }
            b'L' => {
                ls = 2;
                None
            }
            b'z' | b'Z' => {
                ls = 1;
                None
            }
            b'*' => {
                match args.next() {
                    Some(arg) if len_arg.is_none() => len_arg = Some(arg),
                    _ => {
                        *failed = true;
                        return i;
                    }
                }
                None
            }
            b'p' => {
                i += pointer_extension(&bytes[i + 1..]);
                Some(ChunkKind::Pointer)
            }
            b'd' | b'u' | b'i' | b'x' | b'X' | b'o' => {
                if !(-2..=2).contains(&ls) {
                    *failed = true;
                }
                Some(ChunkKind::Number { ls: ls.clamp(-2, 2) as i8 })
            }
            b's' => Some(ChunkKind::Str),
            other => {
                chunks.push(Chunk {
                    kind: ChunkKind::Literal,
                    text: format!(">{}<", other as char),
                    arg: None,
                    len_arg: None,
                });
                return i + 1;
            }
        };
        if let Some(kind) = kind {
            let Some(arg) = args.next() else {
                *failed = true;
                return i;
            };
            let text = String::from_utf8_lossy(&bytes[..(i + 1).min(31)]).into_owned();
            chunks.push(Chunk { kind, text, arg: Some(arg), len_arg });
            return i + 1;
        }
        i += 1;
    }
    i
}

/// How many letters after `%p` belong to the conversion (`%pS`, `%pMR`, `%pI4`, ...).
fn pointer_extension(after: &[u8]) -> usize {
    let at = |i: usize| after.get(i).copied().unwrap_or(0);
    match at(0) {
        b'F' | b'S' | b'f' | b's' => 1,
        b'M' | b'm' => 1 + usize::from(matches!(at(1), b'R' | b'F')),
        b'I' | b'i' => {
            let mut n = 0;
            let mut index = 2;
            let family = at(1);
            if family == b'S' {
                while matches!(at(index), b'p' | b'f' | b's') {
                    n += 1;
                    index += 1;
                }
            }
            if matches!(family, b'S' | b'4') {
                if matches!(at(index), b'h' | b'n' | b'l' | b'b') {
                    n += 1;
                    index += 1;
                }
                if family == b'4' {
                    return n + 2;
                }
            }
            if matches!(family, b'S' | b'6') {
                n += usize::from(at(index) == b'c') + 1;
            }
            n + 1
        }
        b'U' => 1 + usize::from(matches!(at(1), b'L' | b'l' | b'B' | b'b')),
        b'h' => 1 + usize::from(matches!(at(1), b'C' | b'D' | b'N')),
        _ => 0,
    }
}

/// A token of a print format, as libtraceevent's tokenizer cuts them.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Item(String),
    Op(String),
    Delim(char),
    /// A double-quoted string (adjacent ones joined), escapes kept as written.
    Quoted(String),
    /// A single-quoted character constant.
    Char(String),
}

fn tokenize(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() {
            i += 1;
        } else if b.is_ascii_alphanumeric() || b == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            tokens.push(Token::Item(text[start..i].to_string()));
        } else if b == b'"' || b == b'\'' {
            let (content, end) = quoted(bytes, i);
            i = end;
            match (b, tokens.last_mut()) {
                (b'"', Some(Token::Quoted(previous))) => previous.push_str(&content),
                (b'"', _) => tokens.push(Token::Quoted(content)),
                _ => tokens.push(Token::Char(content)),
            }
        } else if !(0x20..0x7f).contains(&b) {
            break;
        } else if matches!(b, b'(' | b')' | b',') {
            tokens.push(Token::Delim(b as char));
            i += 1;
        } else {
            let len = operator_len(&bytes[i..]);
            tokens.push(Token::Op(text[i..i + len].to_string()));
            i += len;
        }
    }
    tokens
}

/// A quoted string starting at `start`: its content (escapes kept) and the index after
/// the closing quote.
fn quoted(bytes: &[u8], start: usize) -> (String, usize) {
    let quote = bytes[start];
    let mut i = start + 1;
    let mut escaped = false;
    while i < bytes.len() && (bytes[i] != quote || escaped) {
        escaped = bytes[i] == b'\\' && !escaped;
        i += 1;
    }
    (String::from_utf8_lossy(&bytes[start + 1..i.min(bytes.len())]).into_owned(), i + 1)
}

fn operator_len(bytes: &[u8]) -> usize {
    let next = bytes.get(1).copied();
    let equal_after = |n: usize| n + usize::from(bytes.get(n) == Some(&b'='));
    match bytes[0] {
        b'-' if next == Some(b'>') => 2,
        c @ (b'-' | b'+' | b'|' | b'&') if next == Some(c) => 2,
        b'-' | b'+' | b'|' | b'&' | b'!' | b'=' => equal_after(1),
        c @ (b'<' | b'>') if next == Some(c) => equal_after(2),
        b'<' | b'>' => equal_after(1),
        _ => 1,
    }
}

/// A call of a function libtraceevent does not know makes it give up on the format.
fn calls_unknown_function(tokens: &[Token]) -> bool {
    tokens.windows(2).any(|pair| match pair {
        [Token::Item(name), Token::Delim('(')] => !KNOWN_FUNCTIONS.contains(&name.as_str()),
        _ => false,
    })
}

/// The top-level, comma-separated arguments.
fn split_args(tokens: &[Token]) -> Vec<&[Token]> {
    let mut args = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Token::Delim('(') => depth += 1,
            Token::Delim(')') => depth = depth.saturating_sub(1),
            Token::Delim(',') if depth == 0 => {
                args.push(&tokens[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    args.push(&tokens[start..]);
    args
}

/// What an argument is: a field behind casts and parentheses, a single token, or else.
fn classify(tokens: &[Token]) -> Arg {
    match tokens {
        [Token::Item(rec), Token::Op(arrow), Token::Item(name)] if rec == "REC" && arrow == "->" => {
            Arg::Field { name: name.clone(), casts: Vec::new() }
        }
        [Token::Item(atom)] => Arg::Atom(atom.clone()),
        [Token::Delim('('), ..] => {
            let Some(close) = matching_paren(tokens) else { return Arg::Other };
            let (inner, rest) = (&tokens[1..close], &tokens[close + 1..]);
            if rest.is_empty() {
                return classify(inner);
            }
            match (type_name(inner), classify(rest)) {
                (Some(cast), Arg::Field { name, mut casts }) => {
                    casts.insert(0, cast);
                    Arg::Field { name, casts }
                }
                _ => Arg::Other,
            }
        }
        _ => Arg::Other,
    }
}

fn matching_paren(tokens: &[Token]) -> Option<usize> {
    let mut depth = 0usize;
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Token::Delim('(') => depth += 1,
            Token::Delim(')') => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The type of a cast (`unsigned long`, `void *`), or `None` if the tokens are not one.
fn type_name(tokens: &[Token]) -> Option<String> {
    let mut words = Vec::new();
    for token in tokens {
        match token {
            Token::Item(word) => words.push(word.as_str()),
            Token::Op(star) if star == "*" => words.push("*"),
            _ => return None,
        }
    }
    (!words.is_empty()).then(|| words.join(" "))
}

/// libtraceevent's evaluation of a cast: masks to the width of `u8`..`s32`, `char`,
/// `short` and `int` (signed or not: it never sign-extends); every other type, and every
/// pointer, leaves the value as it is.
pub(crate) fn apply_cast(value: u64, cast: &str) -> u64 {
    if cast.len() < 2 || cast.ends_with('*') || cast.starts_with("struct") {
        return value;
    }
    let base = cast.strip_prefix("unsigned ").unwrap_or(cast);
    match base {
        "u8" | "s8" | "char" => value & 0xff,
        "u16" | "s16" | "short" => value & 0xffff,
        "u32" | "s32" | "int" => value & 0xffff_ffff,
        _ => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, casts: &[&str]) -> Option<Arg> {
        Some(Arg::Field { name: name.into(), casts: casts.iter().map(|c| c.to_string()).collect() })
    }

    #[test]
    fn sched_waking_format() {
        let p = PrintFormat::parse(
            r#""comm=%s pid=%d prio=%d target_cpu=%03d", REC->comm, REC->pid, REC->prio, REC->target_cpu"#,
            false,
            &[],
        );
        assert!(!p.failed);
        let kinds: Vec<_> = p.chunks.iter().map(|c| (c.kind, c.text.as_str())).collect();
        assert_eq!(
            kinds,
            [
                (ChunkKind::Literal, "comm="),
                (ChunkKind::Str, "%s"),
                (ChunkKind::Literal, " pid="),
                (ChunkKind::Number { ls: 0 }, "%d"),
                (ChunkKind::Literal, " prio="),
                (ChunkKind::Number { ls: 0 }, "%d"),
                (ChunkKind::Literal, " target_cpu="),
                (ChunkKind::Number { ls: 0 }, "%03d"),
            ]
        );
        assert_eq!(p.chunks[7].arg, field("target_cpu", &[]));
    }

    #[test]
    fn casts_pointers_and_concatenated_strings() {
        let p = PrintFormat::parse(
            r#""\t=> %ps\n" "\t=> %pS\n", (void *)REC->caller[0], ((unsigned long)(REC->ip))"#,
            true,
            &[],
        );
        assert!(!p.failed);
        assert_eq!(p.chunks[0].text, "\t=> ");
        assert_eq!((p.chunks[1].kind, p.chunks[1].text.as_str()), (ChunkKind::Pointer, "%ps"));
        assert_eq!(p.chunks[1].arg, Some(Arg::Other), "an indexed array element is not a field");
        assert_eq!(p.chunks[2].text, "\n\t=> ");
        assert_eq!(p.chunks[3].arg, field("ip", &["unsigned long"]));
        let p = PrintFormat::parse(r#""%pf: %s", (void *)REC->ip, REC->buf"#, true, &[]);
        assert_eq!(p.chunks[0].arg, field("ip", &["void *"]));
        assert_eq!(p.chunks[0].text, "%pf");
    }

    #[test]
    fn libtraceevent_quirks() {
        // `%c` and `%+d` are literal text and take no argument.
        let p = PrintFormat::parse(r#""%c%d %+d", REC->a, REC->b"#, false, &[]);
        let texts: Vec<_> = p.chunks.iter().map(|c| c.text.as_str()).collect();
        assert_eq!(texts, [">c<", "%d", " ", ">+<", "d"]);
        assert_eq!(p.chunks[1].arg, field("a", &[]));
        assert!(!p.failed);
        // More conversions than arguments, or an unknown function: the event prints raw.
        assert!(PrintFormat::parse(r#""%d %d", REC->a"#, false, &[]).failed);
        assert!(PrintFormat::parse(r#""%s", my_helper(REC->a)"#, false, &[]).failed);
        assert!(!PrintFormat::parse(r#""%s", __get_str(name)"#, false, &[]).failed);
        // Old ftrace formats without arguments print their fields in order.
        let p = PrintFormat::parse(r#""%lx <- %lx""#, true, &["ip", "parent_ip"]);
        assert_eq!(p.chunks[2].arg, field("parent_ip", &[]));
        // `%*d` takes the width first; `%%` is a literal percent.
        let p = PrintFormat::parse(r#""%*d%%", REC->w, REC->v"#, false, &[]);
        assert_eq!(p.chunks[0].len_arg, field("w", &[]));
        assert_eq!(p.chunks[0].arg, field("v", &[]));
        assert_eq!(p.chunks[1].text, "%");
    }

    #[test]
    fn expressions_are_not_fields() {
        let p = PrintFormat::parse(
            r#""%d %s %lu", REC->a + 1, REC->ret ? "handled" : "unhandled", (unsigned long)REC->x >> 2"#,
            false,
            &[],
        );
        assert!(p.chunks.iter().filter_map(|c| c.arg.as_ref()).all(|a| *a == Arg::Other));
    }

    #[test]
    fn casts_mask_without_sign_extension() {
        assert_eq!(apply_cast(0x1_ffff_ffff, "int"), 0xffff_ffff);
        assert_eq!(apply_cast(0x1ff, "unsigned char"), 0xff);
        assert_eq!(apply_cast(u64::MAX, "s16"), 0xffff);
        assert_eq!(apply_cast(u64::MAX, "void *"), u64::MAX);
        assert_eq!(apply_cast(u64::MAX, "long"), u64::MAX);
    }
}
