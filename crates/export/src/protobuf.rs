//! The few protobuf wire-format writes the hot paths need, on top of prost's encoding
//! primitives: fields appended straight to a byte buffer, without building message
//! structs for millions of events. Field numbers come from the message modules that use
//! them (see `perfetto::proto`).

use prost::encoding::{WireType, encode_key, encode_varint, encoded_len_varint, key_len};

/// Appends an integer field (`int32`, `int64`, `uint32`, `uint64`, `bool`, enums):
/// negative numbers as ten-byte two's-complement varints, as protobuf's `int` types are.
#[inline]
pub fn int(buf: &mut Vec<u8>, tag: u32, value: i64) {
    encode_key(tag, WireType::Varint, buf);
    encode_varint(value as u64, buf);
}

#[inline]
pub fn uint(buf: &mut Vec<u8>, tag: u32, value: u64) {
    encode_key(tag, WireType::Varint, buf);
    encode_varint(value, buf);
}

/// Appends a `string` or `bytes` field. Text that is not UTF-8 is replaced lossily so that
/// every protobuf reader accepts it.
#[inline]
pub fn text(buf: &mut Vec<u8>, tag: u32, bytes: &[u8]) {
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
    encode_key(tag, WireType::LengthDelimited, buf);
    encode_varint(len as u64, buf);
}

/// Bytes a length-delimited field of `len` bytes takes, header included.
#[inline]
pub fn field_len(tag: u32, len: usize) -> usize {
    key_len(tag) + encoded_len_varint(len as u64) + len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_prost_for_the_same_message() {
        #[derive(Clone, PartialEq, prost::Message)]
        struct M {
            #[prost(int32, tag = "1")]
            a: i32,
            #[prost(string, tag = "2")]
            s: String,
            #[prost(uint64, tag = "9")]
            u: u64,
        }
        let mut buf = Vec::new();
        int(&mut buf, 1, -5);
        text(&mut buf, 2, b"caf\xc3\xa9");
        uint(&mut buf, 9, 300);
        let decoded = <M as prost::Message>::decode(&buf[..]).unwrap();
        assert_eq!(decoded, M { a: -5, s: "café".into(), u: 300 });
        assert_eq!(field_len(2, 10), 12);
    }
}
