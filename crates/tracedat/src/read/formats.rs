//! The set of event formats of a trace, indexed by the id every record starts with.
//! Formats the parser cannot read are kept aside with the reason, so their events are
//! counted as undecodable rather than stopping the whole trace.

use crate::endian::Endian;
use crate::read::format::{EventFormat, FormatError, parse_event_format};

/// A format file that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RejectedFormat {
    pub system: String,
    pub error: FormatError,
}

/// Where every record keeps its type id and pid (the `common_type` / `common_pid` fields).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CommonLayout {
    pub type_offset: usize,
    pub type_size: usize,
    pub pid_offset: usize,
    pub pid_size: usize,
}

impl Default for CommonLayout {
    fn default() -> Self {
        CommonLayout { type_offset: 0, type_size: 2, pid_offset: 4, pid_size: 4 }
    }
}

impl CommonLayout {
    #[inline]
    pub fn event_id(&self, data: &[u8], endian: Endian) -> Option<u32> {
        endian.read_uint(data.get(self.type_offset..)?, self.type_size).map(|v| v as u32)
    }

    #[inline]
    pub fn pid(&self, data: &[u8], endian: Endian) -> Option<i32> {
        endian.read_uint(data.get(self.pid_offset..)?, self.pid_size).map(|v| v as i32)
    }
}

const NO_FORMAT: u32 = u32::MAX;
/// Ids below this are looked up in a dense table; `common_type` is 16 bits on every kernel.
const DENSE_IDS: u32 = 1 << 16;

/// All event formats of a trace.
#[derive(Clone, Debug, Default)]
pub struct Formats {
    list: Vec<EventFormat>,
    dense: Vec<u32>,
    pub common: CommonLayout,
    pub rejected: Vec<RejectedFormat>,
}

impl Formats {
    /// Parses format files given as (system, text) pairs, in file order.
    pub fn parse<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>, long_size: u8) -> Formats {
        let mut formats = Formats::default();
        for (system, text) in files {
            match parse_event_format(system, text, long_size) {
                Ok(format) => formats.insert(format),
                Err(error) => formats.rejected.push(RejectedFormat { system: system.to_string(), error }),
            }
        }
        formats.common = formats.list.first().map(common_layout_of).unwrap_or_default();
        formats
    }

    fn insert(&mut self, format: EventFormat) {
        let index = self.list.len() as u32;
        if format.id < DENSE_IDS {
            let slot = format.id as usize;
            if self.dense.len() <= slot {
                self.dense.resize(slot + 1, NO_FORMAT);
            }
            self.dense[slot] = index;
        }
        self.list.push(format);
    }

    /// The format for an event id.
    #[inline]
    pub fn by_id(&self, id: u32) -> Option<&EventFormat> {
        if id < DENSE_IDS {
            let index = *self.dense.get(id as usize)?;
            return self.list.get(index as usize);
        }
        self.list.iter().rev().find(|f| f.id == id)
    }

    /// The format of an event by name, optionally `system:name`.
    pub fn by_name(&self, name: &str) -> Option<&EventFormat> {
        match name.split_once(':') {
            Some((system, event)) => self.list.iter().find(|f| f.system == system && f.name == event),
            None => self.list.iter().find(|f| f.name == name),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &EventFormat> {
        self.list.iter()
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

fn common_layout_of(format: &EventFormat) -> CommonLayout {
    let default = CommonLayout::default();
    let find = |name: &str| format.common_fields.iter().find(|f| f.name == name);
    let (type_offset, type_size) =
        find("common_type").map_or((default.type_offset, default.type_size), |f| (f.offset as usize, f.size as usize));
    let (pid_offset, pid_size) =
        find("common_pid").map_or((default.pid_offset, default.pid_size), |f| (f.offset as usize, f.size as usize));
    CommonLayout { type_offset, type_size, pid_offset, pid_size }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "name: a\nID: 5\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
                     \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n";

    #[test]
    fn indexes_by_id_and_name_and_keeps_rejects() {
        let big = "name: big\nID: 70000\nformat:\n";
        let f = Formats::parse([("s", A), ("t", "garbage"), ("u", big)], 8);
        assert_eq!(f.len(), 2);
        assert_eq!(f.by_id(5).unwrap().name, "a");
        assert_eq!(f.by_id(70000).unwrap().name, "big");
        assert!(f.by_id(6).is_none());
        assert_eq!(f.by_name("s:a").unwrap().id, 5);
        assert!(f.by_name("t:a").is_none());
        assert_eq!(f.rejected.len(), 1);
        assert_eq!(f.common, CommonLayout::default());
    }
}
