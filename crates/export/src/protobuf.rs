//! The few protobuf wire-format writes the hot paths need: fields appended straight to a
//! byte buffer, without building message structs for millions of events, and nested
//! messages whose length is patched in once their content is written. Field numbers
//! come from the message modules that use them (see `perfetto::proto`).

const VARINT: u32 = 0;
const LENGTH_DELIMITED: u32 = 2;

/// Appends a base-128 varint.
#[inline(always)]
pub fn varint(buf: &mut Vec<u8>, mut value: u64) {
    if value < 0x80 {
        buf.push(value as u8);
        return;
    }
    let mut bytes = [0u8; 10];
    let mut n = 0;
    while value >= 0x80 {
        bytes[n] = value as u8 | 0x80;
        value >>= 7;
        n += 1;
    }
    bytes[n] = value as u8;
    // All ten bytes, then the unused ones dropped: a copy of fixed size is two moves, one
    // of the varint's own length a call to memcpy.
    let len = buf.len();
    buf.extend_from_slice(&bytes);
    buf.truncate(len + n + 1);
}

/// Bytes `value` takes as a varint.
#[inline]
pub fn varint_len(value: u64) -> usize {
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

#[inline(always)]
fn key(buf: &mut Vec<u8>, tag: u32, wire_type: u32) {
    varint(buf, u64::from(tag << 3 | wire_type));
}

/// Appends an integer field (`int32`, `int64`, `uint32`, `uint64`, `bool`, enums):
/// negative numbers as ten-byte two's-complement varints, as protobuf's `int` types are.
#[inline]
pub fn int(buf: &mut Vec<u8>, tag: u32, value: i64) {
    uint(buf, tag, value as u64);
}

#[inline]
pub fn uint(buf: &mut Vec<u8>, tag: u32, value: u64) {
    key(buf, tag, VARINT);
    varint(buf, value);
}

/// Appends a `string` or `bytes` field. Text that is not UTF-8 is replaced lossily so that
/// every protobuf reader accepts it.
#[inline]
pub fn text(buf: &mut Vec<u8>, tag: u32, bytes: &[u8]) {
    if bytes.is_ascii() {
        return raw(buf, tag, bytes);
    }
    match std::str::from_utf8(bytes) {
        Ok(_) => raw(buf, tag, bytes),
        Err(_) => raw(buf, tag, String::from_utf8_lossy(bytes).as_bytes()),
    }
}

/// Appends a length-delimited field holding `bytes` as they are (an encoded message).
#[inline]
pub fn raw(buf: &mut Vec<u8>, tag: u32, bytes: &[u8]) {
    header(buf, tag, bytes.len());
    buf.extend_from_slice(bytes);
}

/// The key and length of a length-delimited field whose `len` bytes follow.
#[inline]
pub fn header(buf: &mut Vec<u8>, tag: u32, len: usize) {
    key(buf, tag, LENGTH_DELIMITED);
    varint(buf, len as u64);
}

/// Starts a nested message field whose length is not known yet: one byte is kept for the
/// length (most events are short), [`end_message`] fixes it. Returns where the content
/// starts.
#[inline(always)]
pub fn begin_message(buf: &mut Vec<u8>, tag: u32) -> usize {
    key(buf, tag, LENGTH_DELIMITED);
    buf.push(0);
    buf.len()
}

/// Writes the length of the message begun at `start`, moving its content when the length
/// needs more than the byte kept for it.
#[inline(always)]
pub fn end_message(buf: &mut Vec<u8>, start: usize) {
    let len = buf.len() - start;
    if len < 0x80 {
        buf[start - 1] = len as u8;
        return;
    }
    let extra = varint_len(len as u64) - 1;
    let end = buf.len();
    buf.resize(end + extra, 0);
    buf.copy_within(start..end, start + extra);
    let mut length = Vec::with_capacity(10);
    varint(&mut length, len as u64);
    buf[start - 1..start + extra].copy_from_slice(&length);
}

/// Bytes a padded length takes (see [`begin_padded`]).
pub const PADDED_LEN: usize = 4;

/// Starts a length-delimited field whose length is written later in [`PADDED_LEN`] bytes
/// (a varint with redundant continuation bytes, as Perfetto's own writer pads message
/// lengths; every protobuf reader accepts it). For large messages, where moving the
/// content would cost more than the padding. Returns where the content starts.
pub fn begin_padded(buf: &mut Vec<u8>, tag: u32) -> usize {
    key(buf, tag, LENGTH_DELIMITED);
    buf.extend_from_slice(&[0x80, 0x80, 0x80, 0x00]);
    buf.len()
}

/// Writes the length of the field begun at `start` by [`begin_padded`].
pub fn end_padded(buf: &mut [u8], start: usize) {
    let len = buf.len() - start;
    assert!(len < 1 << 28, "a padded length holds less than 256 MiB");
    for (i, byte) in buf[start - PADDED_LEN..start].iter_mut().enumerate() {
        let bits = (len >> (7 * i)) as u8 & 0x7f;
        *byte = if i + 1 < PADDED_LEN { bits | 0x80 } else { bits };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, PartialEq, prost::Message)]
    struct Inner {
        #[prost(bytes = "vec", tag = "1")]
        b: Vec<u8>,
    }

    #[derive(Clone, PartialEq, prost::Message)]
    struct M {
        #[prost(int32, tag = "1")]
        a: i32,
        #[prost(string, tag = "2")]
        s: String,
        #[prost(uint64, tag = "9")]
        u: u64,
        #[prost(message, optional, tag = "300")]
        inner: Option<Inner>,
        #[prost(message, optional, tag = "4")]
        padded: Option<Inner>,
    }

    #[test]
    fn matches_prost_for_the_same_message() {
        let mut buf = Vec::new();
        int(&mut buf, 1, -5);
        text(&mut buf, 2, b"caf\xc3\xa9");
        uint(&mut buf, 9, 300);
        let decoded = <M as prost::Message>::decode(&buf[..]).unwrap();
        assert_eq!(decoded, M { a: -5, s: "café".into(), u: 300, inner: None, padded: None });
    }

    #[test]
    fn nested_lengths_are_patched_short_and_long() {
        for len in [0, 1, 100, 125, 126, 127, 128, 200, 20_000] {
            let mut buf = vec![7u8];
            buf.clear();
            let start = begin_message(&mut buf, 300);
            let inner = begin_message(&mut buf, 1);
            buf.extend(std::iter::repeat_n(b'x', len));
            end_message(&mut buf, inner);
            end_message(&mut buf, start);
            let padded = begin_padded(&mut buf, 4);
            raw(&mut buf, 1, b"yz");
            end_padded(&mut buf, padded);
            let decoded = <M as prost::Message>::decode(&buf[..]).unwrap();
            assert_eq!(decoded.inner.unwrap().b.len(), len);
            assert_eq!(decoded.padded.unwrap().b, b"yz");
        }
    }

    #[test]
    fn varint_lengths() {
        for value in [0u64, 1, 127, 128, 16_383, 16_384, u64::MAX] {
            let mut buf = Vec::new();
            varint(&mut buf, value);
            assert_eq!(buf.len(), varint_len(value), "{value}");
        }
    }
}
