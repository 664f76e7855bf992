//! Where `latency` keeps its waits' records while the model is built: in memory up to a
//! budget, the rest in a scratch file in the temporary directory (`$TMPDIR`, else /tmp),
//! removed as soon as it is open, so nothing is left behind on any exit. A trace of ten
//! million waits then costs `latency` the segments' memory and its percentiles', not the
//! waits' 400 MB. Where no scratch file can be written, the records stay in memory (said
//! once on stderr).

use analysis::latency::{RECORD_BYTES, RecordStore};
use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;

/// Records kept in memory before the rest goes to the scratch file: 0.8M waits.
const MEMORY_BUDGET: usize = 800_000 * RECORD_BYTES;
/// Records read back from the file at once.
const CHUNK: usize = 200_000 * RECORD_BYTES;

pub struct Spill {
    /// Bytes of records kept in memory before the scratch file is used.
    budget: usize,
    memory: Vec<u8>,
    file: Option<BufWriter<File>>,
    /// The scratch file could not be made or written: everything stays in memory.
    in_memory_only: bool,
    /// The first write error, reported when the records are read back.
    error: Option<io::Error>,
}

impl Spill {
    pub fn new() -> Spill {
        Spill::with_budget(MEMORY_BUDGET)
    }

    fn with_budget(budget: usize) -> Spill {
        Spill { budget, memory: Vec::new(), file: None, in_memory_only: false, error: None }
    }

    /// Hands the records to `each` a chunk at a time (whole records): the memory's, then
    /// the file's.
    pub fn read_back(mut self, mut each: impl FnMut(&[u8])) -> io::Result<()> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        each(&std::mem::take(&mut self.memory));
        let Some(writer) = self.file.take() else { return Ok(()) };
        let mut file = writer.into_inner().map_err(|e| e.into_error())?;
        file.seek(SeekFrom::Start(0))?;
        let mut chunk = vec![0u8; CHUNK];
        loop {
            let filled = fill(&mut file, &mut chunk)?;
            if filled == 0 {
                return Ok(());
            }
            each(&chunk[..filled - filled % RECORD_BYTES]);
        }
    }

    fn spill(&mut self, record: &[u8]) {
        if self.file.is_none() {
            match scratch_file() {
                Ok(file) => self.file = Some(BufWriter::with_capacity(1 << 20, file)),
                Err(error) => {
                    eprintln!(
                        "schedlens: warning: no scratch file in {} ({error}): latency keeps every wait in memory",
                        std::env::temp_dir().display()
                    );
                    self.in_memory_only = true;
                    self.memory.extend_from_slice(record);
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
        if self.in_memory_only || (self.file.is_none() && self.memory.len() < self.budget) {
            self.memory.extend_from_slice(record);
        } else if self.error.is_none() {
            self.spill(record);
        }
    }
}

/// Reads until `buffer` is full or the file ends; returns the bytes read.
fn fill(file: &mut File, buffer: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(filled)
}

/// A new file in the temporary directory, already removed (it lives while it is open).
fn scratch_file() -> io::Result<File> {
    let path: PathBuf = std::env::temp_dir().join(format!("schedlens-latency-{}.scratch", std::process::id()));
    let file = File::options().read(true).write(true).create_new(true).open(&path)?;
    let _ = std::fs::remove_file(&path);
    Ok(file)
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
        let scratch = std::env::temp_dir().join(format!("schedlens-latency-{}.scratch", std::process::id()));
        assert!(!scratch.exists(), "the scratch file is removed once open");
        let mut back = Vec::new();
        spill.read_back(|chunk| back.extend_from_slice(chunk)).unwrap();
        assert_eq!(back, records.concat());
    }
}
