//! Parts of the file written by several threads, in a fixed order, without copying what
//! can go straight to the file: the first unfinished part (the head) writes to the file
//! itself; the others hold their bytes (in memory within a shared budget, beyond it in a
//! scratch file) until they become the head, or hand them over when they finish first.
//! So the bytes never depend on timing and, when parts finish in order, are written once.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

/// Bytes all parts together may hold in memory.
const MEMORY_BUDGET: usize = 64 << 20;

/// The parts `0..` of a file, appended in their order.
pub struct Sequence<'f> {
    file: &'f File,
    path: &'f Path,
    head: AtomicU32,
    finished: Mutex<BTreeMap<u32, Held>>,
    in_memory: AtomicUsize,
}

impl<'f> Sequence<'f> {
    /// Parts appended to `file` (at its current end); scratch files go beside `path`.
    pub fn new(file: &'f File, path: &'f Path) -> Sequence<'f> {
        Sequence { file, path, head: AtomicU32::new(0), finished: Mutex::default(), in_memory: AtomicUsize::new(0) }
    }

    pub fn part(&self, index: u32) -> PartWriter<'_, 'f> {
        PartWriter { sequence: self, index, held: Held::default() }
    }

    fn reserve(&self, len: usize) -> bool {
        self.in_memory
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                (used + len <= MEMORY_BUDGET).then_some(used + len)
            })
            .is_ok()
    }
}

/// What a part holds while it is not the head.
#[derive(Default)]
struct Held {
    memory: Vec<u8>,
    scratch: Option<File>,
}

impl Held {
    fn write_to(&mut self, sequence: &Sequence<'_>) -> io::Result<()> {
        let mut file = sequence.file;
        file.write_all(&self.memory)?;
        sequence.in_memory.fetch_sub(self.memory.len(), Ordering::Relaxed);
        self.memory = Vec::new();
        if let Some(mut scratch) = self.scratch.take() {
            scratch.seek(SeekFrom::Start(0))?;
            io::copy(&mut scratch, &mut file)?;
        }
        Ok(())
    }
}

/// One part's writer.
pub struct PartWriter<'s, 'f> {
    sequence: &'s Sequence<'f>,
    index: u32,
    held: Held,
}

impl PartWriter<'_, '_> {
    /// Ends the part: it and the finished parts after it are written if it is the head,
    /// else it waits for its turn among the finished parts.
    pub fn finish(mut self) -> io::Result<()> {
        let sequence = self.sequence;
        let mut finished = sequence.finished.lock().expect("no part panics holding it");
        if sequence.head.load(Ordering::Acquire) != self.index {
            finished.insert(self.index, std::mem::take(&mut self.held));
            return Ok(());
        }
        self.held.write_to(sequence)?;
        let mut next = self.index + 1;
        while let Some(mut held) = finished.remove(&next) {
            held.write_to(sequence)?;
            next += 1;
        }
        sequence.head.store(next, Ordering::Release);
        Ok(())
    }
}

impl Write for PartWriter<'_, '_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.write_all(data)?;
        Ok(data.len())
    }

    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        let sequence = self.sequence;
        if sequence.head.load(Ordering::Acquire) == self.index {
            self.held.write_to(sequence)?;
            let mut file = sequence.file;
            return file.write_all(data);
        }
        if self.held.scratch.is_none() && sequence.reserve(data.len()) {
            self.held.memory.extend_from_slice(data);
            return Ok(());
        }
        let scratch = match &mut self.held.scratch {
            Some(scratch) => scratch,
            None => self.held.scratch.insert(scratch_file(sequence.path, &format!("part{}", self.index))?),
        };
        scratch.write_all(data)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A scratch file beside `path`, removed at once (it lives while it is open).
pub fn scratch_file(path: &Path, part: &str) -> io::Result<File> {
    let mut name = path.to_path_buf().into_os_string();
    name.push(format!(".{part}.scratch"));
    let path = PathBuf::from(name);
    let file = File::options().read(true).write(true).create(true).truncate(true).open(&path)?;
    let _ = std::fs::remove_file(&path);
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_land_in_order_whatever_order_they_finish_in() {
        let dir = std::env::temp_dir().join(format!("schedlens-sequence-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out");
        let file = File::options().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        let sequence = Sequence::new(&file, &path);
        let mut parts: Vec<_> = (0..4).map(|i| sequence.part(i)).collect();
        for (i, part) in parts.iter_mut().enumerate() {
            part.write_all(format!("<{i}a>").as_bytes()).unwrap();
        }
        let mut parts: Vec<_> = parts.into_iter().map(Some).collect();
        parts[2].take().unwrap().finish().unwrap();
        parts[0].take().unwrap().finish().unwrap();
        let mut one = parts[1].take().unwrap();
        one.write_all(b"<1b>").unwrap();
        one.finish().unwrap();
        let mut three = parts[3].take().unwrap();
        three.write_all(b"<3b>").unwrap();
        three.finish().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "<0a><1a><1b><2a><3a><3b>");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
