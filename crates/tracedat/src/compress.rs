//! The compression codecs version 7 files may use for sections and ring-buffer chunks.
//! zstd frames written by trace-cmd carry no content size, so the expected output size
//! always comes from the chunk or section header.

use crate::error::ErrorKind;

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
    /// `expected_len` bytes long.
    pub fn decompress(
        self,
        input: &[u8],
        expected_len: usize,
        out: &mut Vec<u8>,
    ) -> Result<(), ErrorKind> {
        out.clear();
        out.resize(expected_len, 0);
        let produced = match self {
            Codec::None => {
                let n = input.len().min(expected_len);
                out[..n].copy_from_slice(&input[..n]);
                n
            }
            Codec::Zstd => zstd_decompress(input, out)?,
            Codec::Zlib => zlib_decompress(input, out)?,
        };
        if produced != expected_len {
            return Err(ErrorKind::Decompress(format!(
                "{} data gave {produced} bytes, header says {expected_len}",
                self.name()
            )));
        }
        Ok(())
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

#[cfg(feature = "zstd")]
fn zstd_decompress(input: &[u8], out: &mut [u8]) -> Result<usize, ErrorKind> {
    thread_local! {
        static CONTEXT: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    CONTEXT.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(
                zstd::bulk::Decompressor::new()
                    .map_err(|e| ErrorKind::Decompress(e.to_string()))?,
            );
        }
        let decompressor = slot.as_mut().expect("created above");
        decompressor
            .decompress_to_buffer(input, out)
            .map_err(|e| ErrorKind::Decompress(format!("zstd: {e}")))
    })
}

#[cfg(not(feature = "zstd"))]
fn zstd_decompress(_: &[u8], _: &mut [u8]) -> Result<usize, ErrorKind> {
    Err(ErrorKind::CodecNotBuiltIn("zstd".into()))
}

#[cfg(feature = "zstd")]
fn zstd_compress(input: &[u8]) -> Result<Vec<u8>, ErrorKind> {
    zstd::bulk::compress(input, 3)
        .map_err(|e| ErrorKind::Decompress(format!("zstd compression: {e}")))
}

#[cfg(not(feature = "zstd"))]
fn zstd_compress(_: &[u8]) -> Result<Vec<u8>, ErrorKind> {
    Err(ErrorKind::CodecNotBuiltIn("zstd".into()))
}

#[cfg(feature = "zlib")]
fn zlib_decompress(input: &[u8], out: &mut [u8]) -> Result<usize, ErrorKind> {
    let mut inflater = flate2::Decompress::new(true);
    let status = inflater
        .decompress(input, out, flate2::FlushDecompress::Finish)
        .map_err(|e| ErrorKind::Decompress(format!("zlib: {e}")))?;
    if status != flate2::Status::StreamEnd {
        return Err(ErrorKind::Decompress(format!(
            "zlib stream does not end within {} bytes",
            out.len()
        )));
    }
    Ok(inflater.total_out() as usize)
}

#[cfg(not(feature = "zlib"))]
fn zlib_decompress(_: &[u8], _: &mut [u8]) -> Result<usize, ErrorKind> {
    Err(ErrorKind::CodecNotBuiltIn("zlib".into()))
}

#[cfg(feature = "zlib")]
fn zlib_compress(input: &[u8]) -> Result<Vec<u8>, ErrorKind> {
    use std::io::Write;
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    encoder
        .write_all(input)
        .and_then(|_| encoder.finish())
        .map_err(|e| ErrorKind::Decompress(e.to_string()))
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
        let data: Vec<u8> = (0..10_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        for codec in [Codec::None, Codec::Zstd, Codec::Zlib] {
            let packed = codec.compress(&data).unwrap();
            let mut out = Vec::new();
            codec.decompress(&packed, data.len(), &mut out).unwrap();
            assert_eq!(out, data, "{codec:?}");
        }
    }

    #[test]
    fn size_mismatch_and_garbage_are_errors() {
        let packed = Codec::Zstd.compress(b"hello").unwrap();
        let mut out = Vec::new();
        assert!(Codec::Zstd.decompress(&packed, 4, &mut out).is_err());
        assert!(Codec::Zstd.decompress(&packed, 9, &mut out).is_err());
        assert!(Codec::Zlib.decompress(b"garbage", 10, &mut out).is_err());
        assert!(Codec::from_name("lz4").is_err());
    }
}
