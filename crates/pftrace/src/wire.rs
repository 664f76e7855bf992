//! The protobuf wire format, read by hand over a byte slice: keys, varints, fixed-width
//! values and length-delimited fields, each bounds-checked against the message that holds
//! it, so a damaged trace gives an error at a byte offset instead of a read past the end.
//! Messages are read field by field where they are used (no structs built per event).

/// A field's value as the wire holds it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    /// A length-delimited field: bytes, a string, a message or a packed array; with the
    /// file offset of its first byte.
    Bytes(&'a [u8], u64),
}

impl Value<'_> {
    /// The value as an integer (`int32`, `int64`, `uint32`, `uint64`, `bool`, fixed
    /// types), `None` for a length-delimited field.
    pub fn int(self) -> Option<u64> {
        match self {
            Value::Varint(v) | Value::Fixed64(v) => Some(v),
            Value::Fixed32(v) => Some(u64::from(v)),
            Value::Bytes(..) => None,
        }
    }
}

/// What is wrong with the bytes of a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireError {
    /// File offset of the field that could not be read.
    pub offset: u64,
    pub message: String,
}

impl WireError {
    fn new(offset: u64, message: impl Into<String>) -> WireError {
        WireError { offset, message: message.into() }
    }
}

/// Reads the fields of one message in order.
#[derive(Clone, Debug)]
pub struct Fields<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// File offset of `bytes[0]`.
    base: u64,
}

impl<'a> Fields<'a> {
    pub fn new(bytes: &'a [u8], base: u64) -> Fields<'a> {
        Fields { bytes, pos: 0, base }
    }

    /// File offset of the next field.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// The next field's number and value; `None` at the end of the message.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Result<(u32, Value<'a>), WireError>> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        let start = self.offset();
        let result = self.field();
        if result.is_err() {
            // Nothing after a damaged field can be trusted: the message ends here.
            self.pos = self.bytes.len();
        }
        Some(result.map_err(|message| WireError::new(start, message)))
    }

    fn field(&mut self) -> Result<(u32, Value<'a>), String> {
        let key = self.varint().ok_or("a field key that is not a varint")?;
        let (number, wire_type) = (key >> 3, key & 7);
        if number == 0 || number > u64::from(u32::MAX >> 3) {
            return Err(format!("field number {number}"));
        }
        let value = match wire_type {
            0 => Value::Varint(self.varint().ok_or_else(|| format!("field {number}: a bad varint"))?),
            1 => Value::Fixed64(u64::from_le_bytes(self.take(8, number)?.try_into().expect("8 bytes"))),
            5 => Value::Fixed32(u32::from_le_bytes(self.take(4, number)?.try_into().expect("4 bytes"))),
            2 => {
                let len = self.varint().ok_or_else(|| format!("field {number}: a bad length"))?;
                let at = self.offset();
                let left = (self.bytes.len() - self.pos) as u64;
                if len > left {
                    return Err(format!("field {number} claims {len} bytes, its message holds {left} more"));
                }
                Value::Bytes(self.take(len as usize, number)?, at)
            }
            other => return Err(format!("field {number} has wire type {other}, which this reader does not know")),
        };
        Ok((number as u32, value))
    }

    fn take(&mut self, len: usize, number: u64) -> Result<&'a [u8], String> {
        let end = self.pos.checked_add(len).filter(|&end| end <= self.bytes.len());
        let end = end.ok_or_else(|| format!("field {number} ends past its message"))?;
        let taken = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(taken)
    }

    fn varint(&mut self) -> Option<u64> {
        let (value, len) = varint(&self.bytes[self.pos..])?;
        self.pos += len;
        Some(value)
    }
}

/// A base-128 varint at the start of `bytes`, and its length; `None` when it is cut off
/// or longer than ten bytes.
#[inline]
pub fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (index, &byte) in bytes.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f) << (7 * index);
        if byte < 0x80 {
            return Some((value, index + 1));
        }
    }
    None
}

/// The varints of a packed repeated field; an error at the first that is cut off.
pub fn packed(bytes: &[u8], base: u64) -> Result<Vec<u64>, WireError> {
    let mut values = Vec::with_capacity(bytes.len().min(1 << 20));
    let mut pos = 0;
    while pos < bytes.len() {
        let (value, len) =
            varint(&bytes[pos..]).ok_or_else(|| WireError::new(base + pos as u64, "a packed varint cut off"))?;
        values.push(value);
        pos += len;
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_their_damage() {
        // field 1 varint 300, field 2 bytes "ab", field 3 fixed32.
        let bytes = [0x08, 0xac, 0x02, 0x12, 0x02, b'a', b'b', 0x1d, 1, 0, 0, 0];
        let mut fields = Fields::new(&bytes, 100);
        assert_eq!(fields.next(), Some(Ok((1, Value::Varint(300)))));
        assert_eq!(fields.next(), Some(Ok((2, Value::Bytes(b"ab", 105)))));
        assert_eq!(fields.next(), Some(Ok((3, Value::Fixed32(1)))));
        assert_eq!(fields.next(), None);

        let overrun = [0x12, 0x05, b'a'];
        let error = Fields::new(&overrun, 10).next().unwrap().unwrap_err();
        assert_eq!(error.offset, 10);
        assert!(error.message.contains("claims 5 bytes"), "{}", error.message);

        let group = [0x0b];
        assert!(Fields::new(&group, 0).next().unwrap().unwrap_err().message.contains("wire type 3"));
        let endless = [0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert!(Fields::new(&endless, 0).next().unwrap().is_err());
        assert_eq!(packed(&[1, 0x80, 1], 0), Ok(vec![1, 128]));
        assert!(packed(&[0x80], 7).unwrap_err().offset == 7);
    }
}
