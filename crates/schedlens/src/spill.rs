//! Where `latency` and `critical-path` keep their waits' records while the model is
//! built: in memory up to a budget, the rest in a scratch file in the temporary directory
//! (`$TMPDIR`, else /tmp), removed as soon as it is open, so nothing is left behind on any
//! exit. A trace of ten million waits then costs them the segments' memory and their
//! own, not the waits' 450 MB. Where no scratch file can be written, the records stay in
//! memory (said once on stderr).

use analysis::records::{RECORD_BYTES, RecordStore};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Records kept in memory before the rest goes to the scratch file: 0.8M waits.
const MEMORY_BUDGET: usize = 800_000 * RECORD_BYTES;

pub struct Spill {
    /// Bytes of records kept in memory before the scratch file is used.
    budget: usize,
    memory: Vec<u8>,
    file: Option<BufWriter<File>>,
    /// The scratch file could not be made or written: everything stays in memory.
    in_memory_only: bool,
    /// The first write error, reported when the records are read back.
    error: Option<io::Error>,
    /// Records appended.
    records: usize,
    /// Records kept in memory (held there, or handed over by `take_held`).
    memory_records: usize,
}

impl Spill {
    pub fn new() -> Spill {
        Spill::with_budget(MEMORY_BUDGET)
    }

    fn with_budget(budget: usize) -> Spill {
        Spill {
            budget,
            memory: Vec::new(),
            file: None,
            in_memory_only: false,
            error: None,
            records: 0,
            memory_records: 0,
        }
    }

    fn keep_in_memory(&mut self, record: &[u8]) {
        self.memory.extend_from_slice(record);
        self.memory_records += 1;
    }

    fn spill(&mut self, record: &[u8]) {
        if self.file.is_none() {
            match scratch_file() {
                Ok((file, _)) => self.file = Some(BufWriter::with_capacity(1 << 20, file)),
                Err(error) => {
                    eprintln!(
                        "schedlens: warning: no scratch file in {} ({error}): every wait is kept in memory",
                        std::env::temp_dir().display()
                    );
                    self.in_memory_only = true;
                    self.keep_in_memory(record);
                    return;
                }
            }
        }
        if let Some(Err(error)) = self.file.as_mut().map(|file| file.write_all(record)) {
            self.error.get_or_insert(error);
        }
    }
}

impl RecordStore for Spill {
    fn append(&mut self, record: &[u8; RECORD_BYTES]) {
        self.records += 1;
        if self.in_memory_only || (self.file.is_none() && self.memory.len() < self.budget) {
            self.keep_in_memory(record);
        } else if self.error.is_none() {
            self.spill(record);
        }
    }

    fn count(&self) -> usize {
        self.records
    }

    fn held(&self) -> &[u8] {
        &self.memory
    }

    fn take_held(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.memory)
    }

    /// The memory's records first, then the file's (written out before the first read).
    fn read(&mut self, first: usize, into: &mut [u8]) -> io::Result<()> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        let (at, memory_bytes) = (first * RECORD_BYTES, self.memory_records * RECORD_BYTES);
        let in_memory = memory_bytes.saturating_sub(at).min(into.len());
        if in_memory > 0 {
            let held = self.memory.get(at..at + in_memory).ok_or(io::ErrorKind::UnexpectedEof)?;
            into[..in_memory].copy_from_slice(held);
        }
        if in_memory == into.len() {
            return Ok(());
        }
        let Some(writer) = self.file.as_mut() else { return Err(io::ErrorKind::UnexpectedEof.into()) };
        writer.flush()?;
        let offset = (at + in_memory - memory_bytes) as u64;
        writer.get_ref().read_exact_at(&mut into[in_memory..], offset)
    }
}

/// The context of an error reading back `trace`'s waits: where the scratch file was.
pub fn scratch_context(trace: &Path) -> String {
    format!("{}: the waits' scratch file in {}", trace.display(), std::env::temp_dir().display())
}

/// A new file in the temporary directory, already removed (it lives while it is open),
/// and where it was.
fn scratch_file() -> io::Result<(File, PathBuf)> {
    static MADE: AtomicU32 = AtomicU32::new(0);
    let name = format!("schedlens-waits-{}-{}.scratch", std::process::id(), MADE.fetch_add(1, Ordering::Relaxed));
    let path: PathBuf = std::env::temp_dir().join(name);
    let file = File::options().read(true).write(true).create_new(true).open(&path)?;
    let _ = std::fs::remove_file(&path);
    Ok((file, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_past_the_budget_come_back_from_the_file_in_order() {
        let records: Vec<[u8; RECORD_BYTES]> = (0..1000u32).map(|i| [i as u8; RECORD_BYTES]).collect();
        let mut spill = Spill::with_budget(3 * RECORD_BYTES);
        records.iter().for_each(|record| spill.append(record));
        assert!(spill.file.is_some(), "the records past 3 went to the file");
        let (_file, path) = scratch_file().unwrap();
        assert!(!path.exists(), "the scratch file is removed once open");
        let mut back = vec![0u8; 1000 * RECORD_BYTES];
        spill.read(0, &mut back).unwrap();
        assert_eq!(back, records.concat());
    }

    #[test]
    fn any_run_of_records_reads_across_memory_and_file() {
        let records: Vec<[u8; RECORD_BYTES]> = (0..100u32).map(|i| [i as u8; RECORD_BYTES]).collect();
        let mut spill = Spill::with_budget(10 * RECORD_BYTES);
        records.iter().for_each(|record| spill.append(record));
        assert_eq!(spill.count(), 100);
        for (first, count) in [(0, 10), (0, 11), (7, 30), (10, 90), (99, 1), (55, 0)] {
            let mut read = vec![0u8; count * RECORD_BYTES];
            spill.read(first, &mut read).unwrap();
            assert_eq!(read, records[first..first + count].concat(), "{first} {count}");
        }
        assert!(spill.read(99, &mut [0u8; 2 * RECORD_BYTES]).is_err(), "past the end");
        assert_eq!(spill.take_held(), records[..10].concat());
        let mut read = vec![0u8; 5 * RECORD_BYTES];
        spill.read(10, &mut read).unwrap();
        assert_eq!(read, records[10..15].concat(), "the file's records stay where they were");
        assert!(spill.read(8, &mut read).is_err(), "the memory's are gone");
    }
}
