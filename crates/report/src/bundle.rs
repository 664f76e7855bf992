//! The report's data as one binary block: named parts (tiles, the page's JSON document),
//! each compressed on its own with zlib so the page inflates only the tiles it shows
//! (with the browser's `DecompressionStream`), laid end to end, and written into the
//! HTML as base64. Sizes are counted as they are added, so the tile selection can stop
//! at the size budget and take back a level that does not fit.

use base64::Engine;
use flate2::Compression;
use flate2::write::ZlibEncoder;
use std::io::Write;

/// Compressed parts laid end to end.
#[derive(Default)]
pub struct Bundle {
    bytes: Vec<u8>,
    /// (name, offset, length) in order of addition.
    parts: Vec<(String, usize, usize)>,
}

/// A point to roll back to.
#[derive(Copy, Clone, Debug)]
pub struct Mark {
    bytes: usize,
    parts: usize,
}

impl Bundle {
    /// Compresses and appends a part; its compressed length.
    pub fn add(&mut self, name: String, raw: &[u8]) -> usize {
        self.add_compressed(name, &compress(raw))
    }

    /// Appends a part compressed with [`compress`]; its length.
    pub fn add_compressed(&mut self, name: String, compressed: &[u8]) -> usize {
        let offset = self.bytes.len();
        self.bytes.extend_from_slice(compressed);
        self.parts.push((name, offset, compressed.len()));
        compressed.len()
    }

    pub fn contains(&self, name: &str) -> bool {
        self.parts.iter().rev().any(|(n, _, _)| n == name)
    }

    /// Compressed bytes so far.
    pub fn size(&self) -> usize {
        self.bytes.len()
    }

    pub fn mark(&self) -> Mark {
        Mark { bytes: self.bytes.len(), parts: self.parts.len() }
    }

    /// Forgets every part added since `mark`.
    pub fn roll_back(&mut self, mark: Mark) {
        self.bytes.truncate(mark.bytes);
        self.parts.truncate(mark.parts);
    }

    /// Every part: (name, offset, length).
    pub fn parts(&self) -> &[(String, usize, usize)] {
        &self.parts
    }

    pub fn base64(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.bytes)
    }
}

/// A part as the bundle stores it: a zlib stream of its own.
pub fn compress(raw: &[u8]) -> Vec<u8> {
    let mut encoder = ZlibEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(raw).expect("writing to memory cannot fail");
    encoder.finish().expect("writing to memory cannot fail")
}

/// Length of the base64 text of `n` bytes.
pub fn base64_len(n: usize) -> usize {
    n.div_ceil(3) * 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::ZlibDecoder;
    use std::io::Read;

    #[test]
    fn parts_inflate_on_their_own_and_roll_back() {
        let mut bundle = Bundle::default();
        bundle.add("a".into(), b"hello hello hello");
        let mark = bundle.mark();
        bundle.add("b".into(), &[7u8; 1000]);
        assert!(bundle.contains("b"));
        bundle.roll_back(mark);
        assert!(!bundle.contains("b"));
        bundle.add("c".into(), b"world");
        for (name, expected) in [("a", &b"hello hello hello"[..]), ("c", b"world")] {
            let &(_, offset, length) = bundle.parts().iter().find(|p| p.0 == name).unwrap();
            let mut out = Vec::new();
            ZlibDecoder::new(&bundle.bytes[offset..offset + length]).read_to_end(&mut out).unwrap();
            assert_eq!(out, expected);
        }
        assert_eq!(base64_len(bundle.size()), bundle.base64().len());
    }
}
