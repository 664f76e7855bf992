//! The compression codecs version 7 files may use for sections and ring-buffer chunks.
//! zstd frames written by trace-cmd carry no content size, so the expected output size
//! always comes from the chunk or section header.

use crate::error::ErrorKind;
use std::io::Read;

/// Outputs up to this size are decompressed at once into a buffer reserved up front (the
/// fast path for ring-buffer chunks and for sections such as a kernel's kallsyms, which
/// take a few megabytes; the reservation costs memory only where the output is written);
/// larger ones into a buffer that grows with the output.
const EAGER_OUTPUT: usize = 64 << 20;

/// The codec named in a version 7 file header.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Codec {
    None,
    Zstd,
    Zlib,
}

impl Codec {
    /// The codec for the name in the file header (`none`, `zstd`, `zlib`).
    pub fn from_name(name: &str) -> Result<Codec, ErrorKind> {
        match name {
            "none" | "" => Ok(Codec::None),
            "zstd" => Ok(Codec::Zstd),
            "zlib" => Ok(Codec::Zlib),
            other => Err(ErrorKind::UnknownCompression(other.to_string())),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Codec::None => "none",
            Codec::Zstd => "zstd",
            Codec::Zlib => "zlib",
        }
    }

    /// Decompresses `input` into `out` (cleared first), which must come out exactly
    /// `expected_len` bytes long. Only small outputs are allocated up front: a larger
    /// `expected_len` (a damaged header can claim gigabytes) grows `out` with the data
    /// actually produced.
    pub fn decompress(self, input: &[u8], expected_len: usize, out: &mut Vec<u8>) -> Result<(), ErrorKind> {
        out.clear();
        let produced = match self {
            Codec::Zstd if expected_len <= EAGER_OUTPUT => {
                out.reserve(expected_len);
                zstd_decompress(input, out)?
            }
            _ => {
                let limit = expected_len as u64 + 1;
                self.stream(input)?
                    .take(limit)
                    .read_to_end(out)
                    .map_err(|e| ErrorKind::Decompress(format!("{}: {e}", self.name())))?
            }
        };
        if produced != expected_len {
            let got = if produced > expected_len { "more".to_string() } else { produced.to_string() };
            return Err(ErrorKind::Decompress(format!(
                "{} data gave {got} bytes, header says {expected_len}",
                self.name()
            )));
        }
        Ok(())
    }

    /// The decompressed bytes of `input`, as a stream.
    fn stream(self, input: &[u8]) -> Result<Box<dyn Read + '_>, ErrorKind> {
        match self {
            Codec::None => Ok(Box::new(input)),
            Codec::Zstd => zstd_stream(input),
            Codec::Zlib => zlib_stream(input),
        }
    }

    /// Compresses `input` (for the writer).
    pub fn compress(self, input: &[u8]) -> Result<Vec<u8>, ErrorKind> {
        match self {
            Codec::None => Ok(input.to_vec()),
            Codec::Zstd => zstd_compress(input),
            Codec::Zlib => zlib_compress(input),
        }
    }
}

/// Decompresses into `out`'s spare capacity (no zeroing first), returning the length.
#[cfg(feature = "zstd")]
fn zstd_decompress(input: &[u8], out: &mut Vec<u8>) -> Result<usize, ErrorKind> {
    thread_local! {
        static CONTEXT: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    CONTEXT.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new().map_err(|e| ErrorKind::Decompress(e.to_string()))?);
        }
        let decompressor = slot.as_mut().expect("created above");
        decompressor.decompress_to_buffer(input, out).map_err(|e| ErrorKind::Decompress(format!("zstd: {e}")))?;
        Ok(out.len())
    })
}

#[cfg(not(feature = "zstd"))]
fn zstd_decompress(_: &[u8], _: &mut Vec<u8>) -> Result<usize, ErrorKind> {
    Err(ErrorKind::CodecNotBuiltIn("zstd".into()))
}

#[cfg(feature = "zstd")]
fn zstd_compress(input: &[u8]) -> Result<Vec<u8>, ErrorKind> {
    zstd::bulk::compress(input, 3).map_err(|e| ErrorKind::Decompress(format!("zstd compression: {e}")))
}

#[cfg(not(feature = "zstd"))]
fn zstd_compress(_: &[u8]) -> Result<Vec<u8>, ErrorKind> {
    Err(ErrorKind::CodecNotBuiltIn("zstd".into()))
}

#[cfg(feature = "zstd")]
fn zstd_stream(input: &[u8]) -> Result<Box<dyn Read + '_>, ErrorKind> {
    zstd::stream::read::Decoder::with_buffer(input)
        .map(|d| Box::new(d) as Box<dyn Read>)
        .map_err(|e| ErrorKind::Decompress(format!("zstd: {e}")))
}

#[cfg(not(feature = "zstd"))]
fn zstd_stream(_: &[u8]) -> Result<Box<dyn Read + '_>, ErrorKind> {
    Err(ErrorKind::CodecNotBuiltIn("zstd".into()))
}

#[cfg(feature = "zlib")]
fn zlib_stream(input: &[u8]) -> Result<Box<dyn Read + '_>, ErrorKind> {
    Ok(Box::new(flate2::read::ZlibDecoder::new(input)))
}

#[cfg(not(feature = "zlib"))]
fn zlib_stream(_: &[u8]) -> Result<Box<dyn Read + '_>, ErrorKind> {
    Err(ErrorKind::CodecNotBuiltIn("zlib".into()))
}

#[cfg(feature = "zlib")]
fn zlib_compress(input: &[u8]) -> Result<Vec<u8>, ErrorKind> {
    use std::io::Write;
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(input).and_then(|_| encoder.finish()).map_err(|e| ErrorKind::Decompress(e.to_string()))
}

#[cfg(not(feature = "zlib"))]
fn zlib_compress(_: &[u8]) -> Result<Vec<u8>, ErrorKind> {
    Err(ErrorKind::CodecNotBuiltIn("zlib".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_codec() {
        let data: Vec<u8> = (0..10_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
        for codec in [Codec::None, Codec::Zstd, Codec::Zlib] {
            let packed = codec.compress(&data).unwrap();
            let mut out = Vec::new();
            codec.decompress(&packed, data.len(), &mut out).unwrap();
            assert_eq!(out, data, "{codec:?}");
        }
    }

    #[test]
    fn huge_claimed_sizes_allocate_only_what_the_data_fills() {
        let packed = Codec::Zstd.compress(&[7u8; 3 << 20]).unwrap();
        for codec in [Codec::None, Codec::Zstd, Codec::Zlib] {
            let input = if codec == Codec::Zstd { &packed[..] } else { b"tiny" };
            let mut out = Vec::new();
            assert!(codec.decompress(input, u32::MAX as usize, &mut out).is_err());
            assert!(out.capacity() < 64 << 20, "{codec:?}: {}", out.capacity());
        }
        let mut out = Vec::new();
        Codec::Zstd.decompress(&packed, 3 << 20, &mut out).unwrap();
        assert!(out.iter().all(|&b| b == 7));
    }

    #[test]
    fn size_mismatch_and_garbage_are_errors() {
        let packed = Codec::Zstd.compress(b"hello").unwrap();
        let mut out = Vec::new();
        assert!(Codec::Zstd.decompress(&packed, 4, &mut out).is_err());
        assert!(Codec::Zstd.decompress(&packed, 9, &mut out).is_err());
        assert!(Codec::Zlib.decompress(b"garbage", 10, &mut out).is_err());
        assert!(Codec::None.decompress(b"abc", 4, &mut out).is_err());
        Codec::None.decompress(b"abc", 3, &mut out).unwrap();
        assert_eq!(out, b"abc");
        assert!(Codec::from_name("lz4").is_err());
    }
}
