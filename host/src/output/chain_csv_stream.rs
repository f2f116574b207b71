//! Each chain's CmdStan CSV written while the chain draws: the
//! [`DrawSink`] of `qnmc run --output`. A file is, byte for byte, what
//! [`cmdstan_csv`](super::cmdstan_csv) writes of the finished chain; it
//! grows by one line per kept draw, so the draws are on disk as they come
//! and a run that is killed keeps them.

use super::checkpoint_files::CheckpointFiles;
use super::cmdstan_csv::{columns_with, csv_head, csv_trailer, kept_rows, write_rows};
use super::{OutputDir, OutputError, StreamedFile, chain_file_name};
use crate::draws::{ChainDraws, RunDraws};
use crate::run::{ChainSink, CheckpointStore, DrawSink, RunSettings, SinkError};

/// Kept draws between two flushes of a chain's file: what a reader (or a
/// killed run) may miss is at most this many lines.
const FLUSH_EVERY: usize = 64;

/// The chain files of a run, written as the chains draw, into `dir`, and
/// the chains' checkpoints, which count the files' rows.
pub struct ChainCsvFiles<'a> {
    dir: &'a OutputDir,
    checkpoints: Option<&'a CheckpointFiles>,
}

impl<'a> ChainCsvFiles<'a> {
    /// Chain files `chain_<id>.csv` in `dir`.
    pub fn new(dir: &'a OutputDir) -> Self {
        ChainCsvFiles {
            dir,
            checkpoints: None,
        }
    }

    /// The chains also save checkpoints into `checkpoints` (and continue
    /// from those it holds).
    pub fn with_checkpoints(mut self, checkpoints: &'a CheckpointFiles) -> Self {
        self.checkpoints = Some(checkpoints);
        self
    }
}

impl DrawSink for ChainCsvFiles<'_> {
    fn open_chain(
        &self,
        run: &RunDraws,
        settings: &RunSettings,
        chain: &ChainDraws,
    ) -> Result<Box<dyn ChainSink>, SinkError> {
        let file = self.dir.stream(&chain_file_name(chain.chain_id))?;
        Ok(Box::new(ChainCsvFile {
            file,
            run: run.clone(),
            chains: settings.chains,
            columns: None,
            written: 0,
            planned: settings.draws,
        }))
    }

    fn checkpoints(&self) -> Option<&dyn CheckpointStore> {
        self.checkpoints.map(|c| c as &dyn CheckpointStore)
    }
}

/// One chain's file: its head is written with the first kept draw (the
/// adaptation block needs that draw's step size), or at the chain's end.
struct ChainCsvFile {
    file: StreamedFile,
    /// The run's description (no chains).
    run: RunDraws,
    chains: usize,
    /// The sampler columns, once the head is written.
    columns: Option<Vec<&'static str>>,
    /// Kept draws written.
    written: usize,
    /// The draws the run asks of each chain (`num_samples`).
    planned: usize,
}

impl ChainCsvFile {
    /// Writes the head unless written, then the kept draws not yet written.
    fn write_new_rows(&mut self, chain: &ChainDraws) -> Result<(), OutputError> {
        let mut failed = None;
        let file = &mut self.file;
        let mut line = |text: &str| {
            if failed.is_none() {
                failed = file.line(text).err();
            }
        };
        let columns = self.columns.get_or_insert_with(|| {
            let columns = columns_with(
                self.run.max_tree_depth.is_some() || !chain.tree_depth.is_empty(),
                !chain.energy.is_empty(),
            );
            // An interrupted chain's file is rewritten whole by `qnmc run`
            // (its num_samples is the draws it holds).
            csv_head(
                &mut line,
                &self.run,
                chain,
                self.planned,
                self.chains,
                &columns,
            );
            columns
        });
        write_rows(
            &mut line,
            columns,
            self.run.names.len(),
            kept_rows(chain),
            self.written..chain.len(),
        );
        self.written = chain.len();
        failed.map_or(Ok(()), Err)
    }
}

impl ChainSink for ChainCsvFile {
    fn kept(&mut self, chain: &ChainDraws) -> Result<(), SinkError> {
        self.write_new_rows(chain)?;
        if self.written % FLUSH_EVERY == 0 {
            self.file.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), SinkError> {
        self.file.flush()?;
        Ok(())
    }

    fn finished(mut self: Box<Self>, chain: &ChainDraws) -> Result<(), SinkError> {
        self.write_new_rows(chain)?;
        let mut failed = None;
        let file = &mut self.file;
        csv_trailer(
            &mut |text: &str| {
                if failed.is_none() {
                    failed = file.line(text).err();
                }
            },
            chain,
        );
        if let Some(e) = failed {
            return Err(e.into());
        }
        self.file.finish()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::cmdstan_csv;
    use crate::run::{Progress, SamplerKind, run_into};
    use crate::targets::Funnel;

    /// A streamed chain file is, byte for byte, what the in-memory writer
    /// makes of the finished chain, for every layout: NUTS's adaptation
    /// block and tree depths, saved warm-up rows, thinning, samplers with
    /// and without energies.
    #[test]
    fn streamed_files_equal_the_files_written_at_the_end() {
        let model = Funnel::new(3).unwrap();
        let cases = [
            (SamplerKind::Nuts, true, 1),
            (SamplerKind::Nuts, false, 3),
            (SamplerKind::Hmc, true, 2),
            (SamplerKind::Qnhmc, false, 1),
            (SamplerKind::Sgld, false, 1),
        ];
        for (case, (kind, save_warmup, thin)) in cases.into_iter().enumerate() {
            let folder = std::env::temp_dir()
                .join(format!("qnmc-stream-test-{}-{case}", std::process::id()));
            let _ = std::fs::remove_dir_all(&folder);
            let mut settings = RunSettings::for_sampler(kind);
            settings.chains = 3;
            settings.warmup = 150;
            settings.draws = 200;
            settings.thin = thin;
            settings.seed = 5 + case as u64;
            settings.save_warmup = save_warmup;
            let dir = OutputDir::create(&folder, false).unwrap();
            let files = ChainCsvFiles::new(&dir);
            let draws =
                run_into(&model, kind, &settings, &Progress::hidden(), Some(&files)).unwrap();
            for (k, chain) in draws.chains.iter().enumerate() {
                assert_eq!(chain.len(), 200, "{kind}");
                let streamed =
                    std::fs::read_to_string(folder.join(chain_file_name(chain.chain_id))).unwrap();
                assert_eq!(streamed, cmdstan_csv(&draws, k), "{kind} chain {k}");
            }
            assert_eq!(dir.listed_files().len(), 3);
            dir.finish().unwrap();
            std::fs::remove_dir_all(folder).unwrap();
        }
    }

    /// A folder given up before any chain wrote is removed with its marker.
    #[test]
    fn an_abandoned_folder_without_files_is_removed() {
        let folder = std::env::temp_dir().join(format!("qnmc-abandon-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&folder);
        OutputDir::create(&folder, false)
            .unwrap()
            .abandon()
            .unwrap();
        assert!(!folder.exists());
        let dir = OutputDir::create(&folder, false).unwrap();
        dir.stream("chain_1.csv").unwrap().finish().unwrap();
        dir.abandon().unwrap();
        assert!(folder.join("chain_1.csv").exists());
        assert!(folder.join(crate::output::INCOMPLETE_MARKER).exists());
        std::fs::remove_dir_all(folder).unwrap();
    }
}
