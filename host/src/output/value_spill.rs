//! [`ValueSpills`]: each chain's values written to a scratch file as the
//! chain draws them and read back in blocks of columns, so that `qnmc run`
//! holds no more of its draws' values in memory than one block
//! ([`draw_values`](crate::draw_values)).

use std::fs::{self, File};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{OutputDir, OutputError};
use crate::draw_values::{DrawValues, InMemory, infallible};
use crate::draws::{ChainDraws, RunDraws};
use crate::run::{ChainSink, DrawSink, RunSettings, SinkError};

/// The scratch folder [`ValueSpills::beside`] makes in a run's output
/// folder. It is the spills' alone: a run removes it when it ends, and a
/// later run into the folder removes one a killed run left behind.
pub const SPILL_FOLDER: &str = ".qnmc-values";

/// Bytes a spill is written and read in.
const BUFFER_BYTES: usize = 1 << 20;

/// Distinguishes the temporary spill folders of one process.
static TEMPORARY_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The values of every chain of a run, one scratch file per chain
/// (`chain_<id>.f64`: the kept draws' values row after row, each an f64 in
/// little-endian order), in a folder removed when this is dropped.
///
/// As a [`DrawSink`] it keeps the values ([`DrawSink::keeps_values`]): the
/// chains drop theirs from memory once given. As [`DrawValues`] it reads
/// them back, bit for bit.
#[derive(Debug)]
pub struct ValueSpills {
    folder: PathBuf,
    /// The file of each chain opened so far: (chain id, path).
    files: Mutex<Vec<(usize, PathBuf)>>,
}

impl ValueSpills {
    /// Spills in [`SPILL_FOLDER`] inside `dir` (what a killed run left there
    /// is removed first).
    pub fn beside(dir: &OutputDir) -> Result<ValueSpills, OutputError> {
        ValueSpills::in_folder(dir.path().join(SPILL_FOLDER))
    }

    /// Spills in a new folder of the system's temporary folder (a run
    /// without an output folder).
    pub fn temporary() -> Result<ValueSpills, OutputError> {
        let name = format!(
            "qnmc-values-{}-{}",
            std::process::id(),
            TEMPORARY_COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        ValueSpills::in_folder(std::env::temp_dir().join(name))
    }

    fn in_folder(folder: PathBuf) -> Result<ValueSpills, OutputError> {
        match fs::remove_dir_all(&folder) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(OutputError::io(&folder, "remove the stale spill folder", e));
            }
            _ => {}
        }
        fs::create_dir_all(&folder)
            .map_err(|e| OutputError::io(&folder, "create the spill folder", e))?;
        Ok(ValueSpills {
            folder,
            files: Mutex::new(Vec::new()),
        })
    }

    /// The scratch folder.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// The file of the chain with id `chain_id`.
    fn file_of(&self, chain_id: usize) -> Option<PathBuf> {
        self.files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(id, _)| *id == chain_id)
            .map(|(_, path)| path.clone())
    }

    /// Reads the first `rows` rows of `width` values of the chain with id
    /// `chain_id`, giving each to `row`.
    fn read_rows(
        &self,
        chain_id: usize,
        width: usize,
        rows: usize,
        row: &mut dyn FnMut(&[f64]),
    ) -> Result<(), OutputError> {
        if rows == 0 || width == 0 {
            return Ok(());
        }
        let path = self.file_of(chain_id).ok_or_else(|| {
            OutputError::io(
                &self.folder.join(spill_name(chain_id)),
                "read",
                std::io::Error::new(std::io::ErrorKind::NotFound, "no spill for this chain"),
            )
        })?;
        let file = File::open(&path).map_err(|e| OutputError::io(&path, "open", e))?;
        let mut reader = BufReader::with_capacity(BUFFER_BYTES, file);
        let mut bytes = vec![0u8; 8 * width];
        let mut values = vec![0.0; width];
        for _ in 0..rows {
            reader
                .read_exact(&mut bytes)
                .map_err(|e| OutputError::io(&path, "read", e))?;
            for (v, b) in values.iter_mut().zip(bytes.chunks_exact(8)) {
                *v = f64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
            }
            row(&values);
        }
        Ok(())
    }
}

impl Drop for ValueSpills {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.folder);
    }
}

/// `chain_<id>.f64`.
fn spill_name(chain_id: usize) -> String {
    format!("chain_{chain_id}.f64")
}

impl DrawSink for ValueSpills {
    fn open_chain(
        &self,
        run: &RunDraws,
        _settings: &RunSettings,
        chain: &ChainDraws,
    ) -> Result<Box<dyn ChainSink>, SinkError> {
        let path = self.folder.join(spill_name(chain.chain_id));
        let file = File::create(&path).map_err(|e| OutputError::io(&path, "create", e))?;
        self.files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((chain.chain_id, path.clone()));
        Ok(Box::new(SpillFile {
            writer: BufWriter::with_capacity(BUFFER_BYTES, file),
            path,
            quantities: run.names.len(),
            written: 0,
        }))
    }

    fn keeps_values(&self) -> bool {
        true
    }
}

/// One chain's spill while it draws.
struct SpillFile {
    writer: BufWriter<File>,
    path: PathBuf,
    quantities: usize,
    /// Kept draws written.
    written: usize,
}

impl SpillFile {
    /// Writes the values of the kept draws not yet written.
    fn write_new_rows(&mut self, chain: &ChainDraws) -> Result<(), OutputError> {
        let q = self.quantities;
        for i in self.written..chain.len() {
            let held = i.checked_sub(chain.values_from_row).map(|r| r * q);
            for j in 0..q {
                let v = held
                    .and_then(|start| chain.values.get(start + j))
                    .copied()
                    .unwrap_or(f64::NAN);
                self.writer
                    .write_all(&v.to_le_bytes())
                    .map_err(|e| OutputError::io(&self.path, "write", e))?;
            }
        }
        self.written = chain.len();
        Ok(())
    }
}

impl ChainSink for SpillFile {
    fn kept(&mut self, chain: &ChainDraws) -> Result<(), SinkError> {
        Ok(self.write_new_rows(chain)?)
    }

    fn finished(mut self: Box<Self>, chain: &ChainDraws) -> Result<(), SinkError> {
        self.write_new_rows(chain)?;
        self.writer
            .flush()
            .map_err(|e| OutputError::io(&self.path, "write", e))?;
        Ok(())
    }
}

impl DrawValues for ValueSpills {
    type Error = OutputError;

    fn for_each_row(
        &self,
        run: &RunDraws,
        k: usize,
        row: &mut dyn FnMut(&[f64]),
    ) -> Result<(), OutputError> {
        match run.chains.get(k) {
            Some(chain) => self.read_rows(chain.chain_id, run.names.len(), chain.len(), row),
            None => Ok(()),
        }
    }
}

/// Where a run's values are: in memory, or in [`ValueSpills`] (`qnmc run`
/// spills them unless no scratch folder could be made).
#[derive(Debug, Clone, Copy)]
pub enum RunValues<'a> {
    /// In each chain's [`values`](ChainDraws::values).
    InMemory,
    /// In these spills.
    Spilled(&'a ValueSpills),
}

impl DrawValues for RunValues<'_> {
    type Error = OutputError;

    fn for_each_row(
        &self,
        run: &RunDraws,
        k: usize,
        row: &mut dyn FnMut(&[f64]),
    ) -> Result<(), OutputError> {
        match self {
            RunValues::InMemory => {
                infallible(InMemory.for_each_row(run, k, row));
                Ok(())
            }
            RunValues::Spilled(spills) => spills.for_each_row(run, k, row),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{summarize_run, summarize_run_from};
    use crate::run::{Progress, SamplerKind, run_into};
    use crate::targets::Funnel;

    /// A run into the spills keeps no values in memory, and reads back
    /// from the files exactly the values the same run holds in memory
    /// without them, by column and by row, also after a truncation.
    #[test]
    fn spilled_values_are_the_values_kept_in_memory() {
        let model = Funnel::new(4).unwrap();
        let mut settings = RunSettings::for_sampler(SamplerKind::Nuts);
        settings.chains = 3;
        settings.warmup = 100;
        settings.draws = 150;
        settings.thin = 2;
        settings.seed = 17;
        let in_memory = run_into(
            &model,
            SamplerKind::Nuts,
            &settings,
            &Progress::hidden(),
            None,
        )
        .unwrap();
        let spills = ValueSpills::temporary().unwrap();
        let folder = spills.folder().to_path_buf();
        let mut spilled = run_into(
            &model,
            SamplerKind::Nuts,
            &settings,
            &Progress::hidden(),
            Some(&spills),
        )
        .unwrap();
        for (a, b) in in_memory.chains.iter().zip(&spilled.chains) {
            assert!(b.values.is_empty());
            assert_eq!(b.values_from_row, 150);
            assert_eq!(a.lp, b.lp, "the same chain");
        }
        let which = [3, 0, 1];
        let bits = |v: Vec<Vec<Vec<f64>>>| -> Vec<Vec<Vec<u64>>> {
            v.into_iter()
                .map(|q| {
                    q.into_iter()
                        .map(|c| c.into_iter().map(f64::to_bits).collect())
                        .collect()
                })
                .collect()
        };
        assert_eq!(
            bits(spills.columns(&spilled, &which).unwrap()),
            bits(infallible(InMemory.columns(&in_memory, &which)))
        );
        let mut rows = Vec::new();
        spills
            .for_each_row(&spilled, 1, &mut |r| rows.extend_from_slice(r))
            .unwrap();
        assert_eq!(rows, in_memory.chains[1].values);
        // The summary (statistics, each chain's rows, separation) is the
        // same whichever the source; only the wall times differ.
        let untimed = |run: &RunDraws| {
            let mut run = run.clone();
            for c in &mut run.chains {
                (c.warmup_seconds, c.sampling_seconds) = (0.0, 0.0);
            }
            run
        };
        // (Compared as text: NaN, the ESS per second of no time, is not
        // equal to itself.)
        assert_eq!(
            format!(
                "{:?}",
                summarize_run_from(&untimed(&spilled), &spills, None).unwrap()
            ),
            format!("{:?}", summarize_run(&untimed(&in_memory), None))
        );
        let mut held = spilled.clone();
        crate::draw_values::hold_in_memory(&mut held, &spills).unwrap();
        assert_eq!(held.chains[2].values, in_memory.chains[2].values);
        assert_eq!(held.chains[2].values_from_row, 0);
        spilled.truncate(40);
        let first = spills.columns(&spilled, &[2]).unwrap();
        assert_eq!(first[0][2], in_memory.chains_of(2)[2][..40]);
        drop(spills);
        assert!(!folder.exists(), "the scratch folder goes with the spills");
    }

    /// A stale spill folder in an output folder is replaced.
    #[test]
    fn a_stale_spill_folder_is_replaced() {
        let folder = std::env::temp_dir().join(format!("qnmc-spill-stale-{}", std::process::id()));
        let _ = fs::remove_dir_all(&folder);
        let dir = OutputDir::create(&folder, false).unwrap();
        fs::create_dir_all(folder.join(SPILL_FOLDER)).unwrap();
        fs::write(folder.join(SPILL_FOLDER).join("chain_9.f64"), b"old").unwrap();
        let spills = ValueSpills::beside(&dir).unwrap();
        assert!(!folder.join(SPILL_FOLDER).join("chain_9.f64").exists());
        drop(spills);
        assert!(!folder.join(SPILL_FOLDER).exists());
        dir.finish().unwrap();
        fs::remove_dir_all(folder).unwrap();
    }
}
