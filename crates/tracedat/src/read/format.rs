//! Event format files (`events/<system>/<event>/format`) as the kernel writes them: the
//! event's id, its fields with C type, offset, size and signedness, and its print format.
//! Field layouts are never assumed: vendor kernels add fields, 32-bit kernels shrink
//! `long`s, and fields come and go between versions.

use std::fmt;

/// How a field's bytes are laid out in the record.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A plain number (or an unknown type of fixed size).
    Scalar,
    /// An array inside the record (`char comm[16]`). With size 0 it is a flexible array
    /// member that runs to the end of the record (`char buf[]`, or `char buf` on old
    /// kernels, which declare it without brackets).
    StaticArray,
    /// `__data_loc`: a 32-bit word holding offset (low 16 bits) and length (high 16 bits)
    /// of data elsewhere in the record; the pre-2012 form is a 16-bit offset of a
    /// NUL-terminated string.
    DataLoc,
    /// `__rel_loc`: like `__data_loc`, with the offset counted from the end of the field.
    RelLoc,
}

/// The element type of arrays and dynamic fields.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Element {
    /// Characters: decoded as text up to the first NUL.
    Char,
    /// Integers of the given size in bytes.
    Int { size: u8, signed: bool },
    /// Unknown element type: decoded as raw bytes.
    Byte,
}

/// One `field:` line of a format file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// The C type without the name, brackets kept: `char[16]`, `__data_loc char[]`,
    /// `unsigned long`, `const char *`.
    pub type_name: String,
    pub name: String,
    /// The declared array length, when the brackets hold a number.
    pub array_len: Option<u32>,
    pub offset: u32,
    pub size: u32,
    pub signed: bool,
    pub kind: FieldKind,
    pub element: Element,
    /// For an array whose element count is held by another field: that field's index in
    /// the event's `fields`. Only ftrace's `kernel_stack` has one: `caller` holds `size`
    /// entries whatever its declared length.
    pub count_field: Option<usize>,
}

impl Field {
    pub fn is_pointer(&self) -> bool {
        self.type_name.contains('*')
    }

    /// libtraceevent's notion: the type mentions `long` (pointers are usually stored in longs).
    pub fn is_long(&self) -> bool {
        self.type_name.contains("long")
    }

    pub fn is_dynamic(&self) -> bool {
        matches!(self.kind, FieldKind::DataLoc | FieldKind::RelLoc)
    }
}

/// A parsed event format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventFormat {
    /// The event system (`sched`, `irq`, `ftrace`, ...).
    pub system: String,
    pub name: String,
    pub id: u32,
    /// Fields every event of this kernel carries (`common_type`, `common_pid`, ...).
    pub common_fields: Vec<Field>,
    /// The event's own fields, in declaration order.
    pub fields: Vec<Field>,
    /// The text after `print fmt: `.
    pub print_fmt: String,
}

impl EventFormat {
    /// Finds a field by name, the event's own fields first, then the common ones.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().chain(&self.common_fields).find(|f| f.name == name)
    }
}

/// Why a format file could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for FormatError {}

/// Parses one format file of `system`. `long_size` is the kernel's long size, used for
/// dynamic arrays of `long`.
pub fn parse_event_format(system: &str, text: &str, long_size: u8) -> Result<EventFormat, FormatError> {
    let mut name = None;
    let mut id = None;
    let mut common_fields = Vec::new();
    let mut fields = Vec::new();
    let mut print_fmt = String::new();
    let mut in_common_block = true;
    let mut seen_field = false;

    for (index, raw_line) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = raw_line.trim();
        let err = |message: String| FormatError { line: line_no, message };
        if let Some(rest) = line.strip_prefix("name:") {
            name = Some(rest.trim().to_string());
        } else if let Some(rest) = line.strip_prefix("ID:") {
            id = Some(rest.trim().parse::<u32>().map_err(|_| err(format!("bad ID {:?}", rest.trim())))?);
        } else if line.starts_with("field") {
            let field = parse_field_line(line, long_size).map_err(err)?;
            seen_field = true;
            if in_common_block && field.name.starts_with("common_") {
                common_fields.push(field);
            } else {
                in_common_block = false;
                fields.push(field);
            }
        } else if line.is_empty() {
            if seen_field {
                in_common_block = false;
            }
        } else if let Some(rest) = line.strip_prefix("print fmt:") {
            print_fmt = rest.trim().to_string();
        }
    }
    let name = name.ok_or(FormatError { line: 1, message: "no name: line".into() })?;
    let id = id.ok_or(FormatError { line: 1, message: format!("event {name} has no ID: line") })?;
    if system == "ftrace" && name == "kernel_stack" {
        count_array_by(&mut fields, "caller", "size");
    }
    Ok(EventFormat { system: system.to_string(), name, id, common_fields, fields, print_fmt })
}

/// Records that the array `array` holds as many elements as the number in `count` says.
fn count_array_by(fields: &mut [Field], array: &str, count: &str) {
    let count_index = fields.iter().position(|f| f.name == count && f.kind == FieldKind::Scalar);
    if let (Some(count_index), Some(array)) =
        (count_index, fields.iter_mut().find(|f| f.name == array && f.kind == FieldKind::StaticArray))
    {
        array.count_field = Some(count_index);
    }
}

/// Parses the field lines of a header file (`header_page`), which have no name or ID.
pub fn parse_field_list(text: &str, long_size: u8) -> Result<Vec<Field>, FormatError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim().starts_with("field"))
        .map(|(i, l)| parse_field_line(l.trim(), long_size).map_err(|message| FormatError { line: i + 1, message }))
        .collect()
}

/// Parses `field:DECL;\toffset:N;\tsize:N;\tsigned:N;` (signed is absent on old kernels).
fn parse_field_line(line: &str, long_size: u8) -> Result<Field, String> {
    let mut parts = line.split(';').map(str::trim);
    let decl = parts
        .next()
        .and_then(|p| p.strip_prefix("field"))
        .map(|p| p.trim_start_matches(|c: char| c == ':' || c.is_whitespace()))
        .ok_or_else(|| format!("not a field line: {line:?}"))?;
    let (mut offset, mut size, mut signed) = (None, None, None);
    for part in parts.filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once(':').ok_or_else(|| format!("bad attribute {part:?}"))?;
        let number = parse_c_number(value.trim()).ok_or_else(|| format!("bad number in {part:?}"))?;
        match key.trim() {
            "offset" => offset = Some(number),
            "size" => size = Some(number),
            "signed" => signed = Some(number != 0),
            _ => {}
        }
    }
    let offset = offset.ok_or_else(|| format!("no offset in {line:?}"))?;
    let size = size.ok_or_else(|| format!("no size in {line:?}"))?;
    let declared = parse_declaration(decl)?;
    let signed = signed.unwrap_or_else(|| type_is_signed(&declared.type_name));
    Ok(declared.into_field(offset, size, signed, long_size))
}

fn parse_c_number(text: &str) -> Option<u32> {
    match text.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

/// A field declaration split into its parts.
struct Declaration {
    type_name: String,
    name: String,
    /// `Some(text)` when the name carried brackets: `comm[16]` gives `16`.
    brackets: Option<String>,
}

impl Declaration {
    fn into_field(self, offset: u32, size: u32, signed: bool, long_size: u8) -> Field {
        let kind = if self.type_name.starts_with("__data_loc") {
            FieldKind::DataLoc
        } else if self.type_name.starts_with("__rel_loc") {
            FieldKind::RelLoc
        } else if self.brackets.is_some() || size == 0 {
            FieldKind::StaticArray
        } else {
            FieldKind::Scalar
        };
        let array_len = self.brackets.as_deref().and_then(|b| b.trim().parse::<u32>().ok());
        let element = element_of(&self.type_name, kind, array_len, size, signed, long_size);
        Field {
            type_name: self.type_name,
            name: self.name,
            array_len,
            offset,
            size,
            signed,
            kind,
            element,
            count_field: None,
        }
    }
}

fn parse_declaration(decl: &str) -> Result<Declaration, String> {
    let decl = decl.trim();
    let (head, brackets) = match decl.strip_suffix(']') {
        Some(without) => {
            let open = without.rfind('[').ok_or_else(|| format!("unbalanced brackets in {decl:?}"))?;
            (&without[..open], Some(without[open + 1..].to_string()))
        }
        None => (decl, None),
    };
    let head = head.trim_end();
    let name_start = head
        .char_indices()
        .rfind(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let name = &head[name_start..];
    if name.is_empty() {
        return Err(format!("no field name in {decl:?}"));
    }
    let mut type_name = head[..name_start].trim().to_string();
    if type_name.is_empty() {
        return Err(format!("no type in {decl:?}"));
    }
    if let Some(b) = &brackets {
        type_name.push('[');
        type_name.push_str(b);
        type_name.push(']');
    }
    Ok(Declaration { type_name, name: name.to_string(), brackets })
}

/// The base C type of an array or dynamic field: no `__data_loc`, brackets or `const`.
fn base_type(type_name: &str) -> String {
    let without_loc = type_name.trim_start_matches("__data_loc").trim_start_matches("__rel_loc");
    let without_brackets = without_loc.split('[').next().unwrap_or("");
    without_brackets.split_whitespace().filter(|w| *w != "const" && *w != "volatile").collect::<Vec<_>>().join(" ")
}

fn element_of(
    type_name: &str,
    kind: FieldKind,
    array_len: Option<u32>,
    size: u32,
    signed: bool,
    long_size: u8,
) -> Element {
    let base = base_type(type_name);
    let is_array = kind != FieldKind::Scalar;
    if is_array && base.split_whitespace().any(|w| w == "char") && !base.contains('*') {
        return Element::Char;
    }
    match kind {
        FieldKind::Scalar => Element::Int { size: size.min(255) as u8, signed },
        FieldKind::StaticArray => match array_len {
            Some(n) if n > 0 && size % n == 0 && matches!(size / n, 1 | 2 | 4 | 8) => {
                Element::Int { size: (size / n) as u8, signed }
            }
            _ if size == 0 => match named_int_type(&base, long_size) {
                Some((size, signed)) => Element::Int { size, signed },
                None => Element::Byte,
            },
            _ => Element::Byte,
        },
        FieldKind::DataLoc | FieldKind::RelLoc => match named_int_type(&base, long_size) {
            Some((size, signed)) => Element::Int { size, signed },
            None => Element::Byte,
        },
    }
}

/// Size and signedness of the integer types dynamic arrays use.
fn named_int_type(base: &str, long_size: u8) -> Option<(u8, bool)> {
    Some(match base {
        "u8" | "unsigned char" | "__u8" => (1, false),
        "s8" | "signed char" | "__s8" => (1, true),
        "u16" | "unsigned short" | "__u16" => (2, false),
        "s16" | "short" | "__s16" => (2, true),
        "u32" | "unsigned int" | "unsigned" | "__u32" => (4, false),
        "s32" | "int" | "__s32" | "pid_t" => (4, true),
        "u64" | "unsigned long long" | "__u64" => (8, false),
        "s64" | "long long" | "__s64" => (8, true),
        "unsigned long" => (long_size, false),
        "long" => (long_size, true),
        _ => return None,
    })
}

/// Signedness when an old kernel's format has no `signed:` attribute.
fn type_is_signed(type_name: &str) -> bool {
    let base = base_type(type_name);
    !(base.contains("unsigned") || base.starts_with('u') || base.contains('*') || base.starts_with("__u"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHED_SWITCH: &str = "name: sched_switch
ID: 316
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;
\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;
\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;
\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;
\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;

print fmt: \"prev_comm=%s prev_pid=%d\", REC->prev_comm, REC->prev_pid
";

    #[test]
    fn parses_sched_switch() {
        let f = parse_event_format("sched", SCHED_SWITCH, 8).unwrap();
        assert_eq!((f.name.as_str(), f.id, f.system.as_str()), ("sched_switch", 316, "sched"));
        assert_eq!(f.common_fields.len(), 4);
        let names: Vec<_> = f.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid", "next_prio"]);
        let comm = f.field("prev_comm").unwrap();
        assert_eq!(comm.type_name, "char[16]");
        assert_eq!((comm.kind, comm.element, comm.array_len), (FieldKind::StaticArray, Element::Char, Some(16)));
        let state = f.field("prev_state").unwrap();
        assert_eq!((state.offset, state.size, state.signed), (32, 8, true));
        assert!(state.is_long());
        assert!(f.print_fmt.starts_with("\"prev_comm=%s"));
        assert_eq!(f.field("common_pid").unwrap().offset, 4);
    }

    #[test]
    fn parses_dynamic_and_pointer_fields() {
        let text = "name: x\nID: 7\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\n\
                    \tfield:__data_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;\n\
                    \tfield:__rel_loc u32[] vals;\toffset:12;\tsize:4;\tsigned:0;\n\
                    \tfield:const char * fmt;\toffset:16;\tsize:8;\tsigned:0;\n\
                    \tfield:unsigned long caller[8];\toffset:24;\tsize:64;\tsigned:0;\n\
                    \tfield:char comm[TASK_COMM_LEN];\toffset:88;\tsize:16;\tsigned:0;\n";
        let f = parse_event_format("ftrace", text, 8).unwrap();
        let name = f.field("name").unwrap();
        assert_eq!((name.kind, name.element), (FieldKind::DataLoc, Element::Char));
        assert_eq!(name.type_name, "__data_loc char[]");
        let vals = f.field("vals").unwrap();
        assert_eq!((vals.kind, vals.element), (FieldKind::RelLoc, Element::Int { size: 4, signed: false }));
        let fmt = f.field("fmt").unwrap();
        assert!(fmt.is_pointer());
        assert_eq!(fmt.kind, FieldKind::Scalar);
        let caller = f.field("caller").unwrap();
        assert_eq!(caller.element, Element::Int { size: 8, signed: false });
        let comm = f.field("comm").unwrap();
        assert_eq!((comm.array_len, comm.element), (None, Element::Char));
    }

    #[test]
    fn header_page_fields_have_a_space_after_the_colon() {
        let text = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
                    \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
                    \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
                    \tfield: char data;\toffset:16;\tsize:4080;\tsigned:1;\n";
        let fields = parse_field_list(text, 8).unwrap();
        assert_eq!(fields.len(), 4);
        assert_eq!((fields[1].name.as_str(), fields[1].size), ("commit", 8));
        assert_eq!(fields[3].offset, 16);
    }

    #[test]
    fn old_kernels_without_signed_attribute() {
        let fields =
            parse_field_list("\tfield:int x;\toffset:0;\tsize:4;\n\tfield:u32 y;\toffset:4;\tsize:4;\n", 4).unwrap();
        assert!(fields[0].signed);
        assert!(!fields[1].signed);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for text in ["", "name: a\n", "ID: 3\n", "name: a\nID: x\n", "name: a\nID: 1\n\tfield:;offset:0;size:1;\n"] {
            assert!(parse_event_format("s", text, 8).is_err(), "{text:?}");
        }
        assert!(parse_field_list("\tfield:int x[;\toffset:0;\tsize:4;\n", 8).is_err());
        // A damaged byte turned into U+FFFD right before the name.
        let f = parse_field_list("\tfield:char prev_c\u{fffd}mm;\toffset:0;\tsize:4;\n", 8).unwrap();
        assert_eq!(f[0].name, "mm");
    }
}
