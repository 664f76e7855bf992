//! Byte order, which every number of a trace.dat file after its header follows: the
//! reader decodes with it and the writer encodes with it.

/// Byte order of all numbers after the file header.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Endian {
    Little,
    Big,
}

impl Endian {
    pub fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }

    pub fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }

    pub fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }

    /// Reads an unsigned number of 1, 2, 4 or 8 bytes from the start of `b`, or `None`
    /// when `b` is too short or the size is not one of those.
    #[inline]
    pub fn read_uint(self, b: &[u8], size: usize) -> Option<u64> {
        Some(match size {
            1 => *b.first()? as u64,
            2 => self.u16(b.get(..2)?.try_into().ok()?) as u64,
            4 => self.u32(b.get(..4)?.try_into().ok()?) as u64,
            8 => self.u64(b.get(..8)?.try_into().ok()?),
            _ => return None,
        })
    }

    pub fn to_bytes_u16(self, v: u16) -> [u8; 2] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }

    pub fn to_bytes_u32(self, v: u32) -> [u8; 4] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }

    pub fn to_bytes_u64(self, v: u64) -> [u8; 8] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }
}
