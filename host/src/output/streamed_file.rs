//! A file of the output folder written as it grows: a chain's draws, line
//! by line, while the chain makes them.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::OutputError;

/// Bytes of whole lines held before they are written to the file.
const BUFFER_BYTES: usize = 1 << 16;

/// A file opened by [`OutputDir::stream`](super::OutputDir::stream). Lines
/// are held in a buffer and written whole, so that the file never ends in
/// part of a line when the run is killed between two writes;
/// [`finish`](Self::finish) writes the rest and syncs the file to disk.
/// Dropped without `finish`, the buffer is lost: a run that stops keeps
/// what was written (at most 64 KiB less than was given).
#[derive(Debug)]
pub struct StreamedFile {
    path: PathBuf,
    file: File,
    buffer: Vec<u8>,
}

impl StreamedFile {
    pub(crate) fn new(path: PathBuf, file: File) -> StreamedFile {
        StreamedFile {
            path,
            file,
            buffer: Vec::with_capacity(BUFFER_BYTES),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `text` and a line break.
    pub fn line(&mut self, text: &str) -> Result<(), OutputError> {
        if !self.buffer.is_empty() && self.buffer.len() + text.len() + 1 > BUFFER_BYTES {
            self.flush()?;
        }
        self.buffer.extend_from_slice(text.as_bytes());
        self.buffer.push(b'\n');
        Ok(())
    }

    /// Writes out the buffered lines, so that a reader of the file sees
    /// every line given so far.
    pub fn flush(&mut self) -> Result<(), OutputError> {
        let written = self.file.write_all(&self.buffer);
        self.buffer.clear();
        written.map_err(|e| OutputError::io(&self.path, "write", e))
    }

    /// Writes out the buffered lines and syncs the file to disk.
    pub fn finish(mut self) -> Result<(), OutputError> {
        self.flush()?;
        self.file
            .sync_all()
            .map_err(|e| OutputError::io(&self.path, "write", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever is flushed is whole lines, in order; a line longer than
    /// the buffer is written whole too.
    #[test]
    fn the_file_holds_whole_lines_after_every_flush() {
        let path = std::env::temp_dir().join(format!("qnmc-streamed-file-{}", std::process::id()));
        let mut streamed = StreamedFile::new(path.clone(), File::create(&path).unwrap());
        let long = "x".repeat(BUFFER_BYTES + 10);
        let mut expected = String::new();
        for k in 0..20_000 {
            let text = if k == 777 {
                long.clone()
            } else {
                format!("{k},{}", k * k)
            };
            streamed.line(&text).unwrap();
            expected.push_str(&text);
            expected.push('\n');
            let on_disk = std::fs::read_to_string(&path).unwrap();
            if k % 1000 == 0 {
                assert!(on_disk.is_empty() || on_disk.ends_with('\n'));
                assert!(expected.starts_with(&on_disk));
            }
        }
        streamed.finish().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), expected);
        std::fs::remove_file(path).unwrap();
    }
}
