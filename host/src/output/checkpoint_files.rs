//! [`CheckpointFiles`]: `qnmc run --output`'s checkpoints, in the folder
//! [`RESUME_FOLDER`] of the output folder, so that `qnmc run --resume
//! FOLDER` continues a stopped run.

use std::fs;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{OutputDir, OutputError, chain_file_name};
use crate::run::{CheckpointStore, ReplayedRow, SinkError};

/// The hidden folder of an output folder that holds a run's checkpoints
/// while it runs and after it is stopped: `command.json` (how to run it
/// again), `chain_<id>.checkpoint` per chain, and, while a resumed run
/// has not yet saved a checkpoint of its own, `earlier_chain_<id>.csv`
/// (the stopped run's chain file, whose rows the checkpoint counts). A
/// run removes it when it finishes.
pub const RESUME_FOLDER: &str = ".qnmc-resume";

/// The file of [`RESUME_FOLDER`] that says how the run was started.
const COMMAND_FILE: &str = "command.json";

/// How a run was started: the arguments of `qnmc` and the folder it ran in
/// (relative paths in them are relative to it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunCommand {
    /// The working folder.
    pub folder: PathBuf,
    /// The arguments after `qnmc` (`run …`).
    pub arguments: Vec<String>,
}

/// The checkpoints of the chains of a run writing into an output folder
/// (see [`RESUME_FOLDER`]); a [`CheckpointStore`].
///
/// A checkpoint is written to a temporary file and renamed over the last
/// one, after the chain's files were flushed: a run killed at any moment
/// leaves a whole checkpoint (the one before) whose rows are on disk.
/// Checkpoints are not synced to the disk: they survive a killed process,
/// not a lost machine (a damaged one is refused by its hash).
pub struct CheckpointFiles {
    folder: PathBuf,
    interval: Duration,
}

impl CheckpointFiles {
    /// Starts the checkpoints of a new run into `dir` (an earlier run's are
    /// removed), saying how it was started, with a checkpoint every
    /// `interval` per chain.
    pub fn start(
        dir: &OutputDir,
        command: &RunCommand,
        interval: Duration,
    ) -> Result<CheckpointFiles, OutputError> {
        let folder = dir.path().join(RESUME_FOLDER);
        remove_folder(&folder)?;
        fs::create_dir_all(&folder)
            .map_err(|e| OutputError::io(&folder, "create the checkpoint folder", e))?;
        let text = serde_json::json!({
            "folder": command.folder.to_string_lossy(),
            "arguments": command.arguments,
        })
        .to_string();
        let file = folder.join(COMMAND_FILE);
        fs::write(&file, text + "\n").map_err(|e| OutputError::io(&file, "write", e))?;
        Ok(CheckpointFiles { folder, interval })
    }

    /// How the stopped run in `path` was started, or why it cannot be
    /// continued.
    pub fn command_of(path: &Path) -> Result<RunCommand, String> {
        let file = path.join(RESUME_FOLDER).join(COMMAND_FILE);
        let text = fs::read_to_string(&file).map_err(|_| {
            format!(
                "{} holds no checkpoints to continue from (no {}): it is not the folder of \
                 a stopped `qnmc run --output`, or that run finished",
                path.display(),
                file.display()
            )
        })?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let folder = value.get("folder").and_then(|v| v.as_str());
        let arguments = value.get("arguments").and_then(|v| v.as_array());
        match (folder, arguments) {
            (Some(folder), Some(arguments)) => Ok(RunCommand {
                folder: PathBuf::from(folder),
                arguments: arguments
                    .iter()
                    .filter_map(|a| a.as_str().map(str::to_string))
                    .collect(),
            }),
            _ => Err(format!("{}: not a run's command", file.display())),
        }
    }

    /// Takes over the checkpoints of the stopped run in `path` to continue
    /// it, before its folder is opened again: each chain file is moved into
    /// [`RESUME_FOLDER`] as `earlier_chain_<id>.csv`, from which its rows
    /// are read back, unless one is there already (an earlier resume that
    /// stopped before the chain saved a checkpoint: the checkpoint counts
    /// that file's rows).
    pub fn resume(path: &Path, interval: Duration) -> Result<CheckpointFiles, OutputError> {
        let folder = path.join(RESUME_FOLDER);
        let entries =
            fs::read_dir(path).map_err(|e| OutputError::io(path, "list the output folder", e))?;
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(id) = chain_id_of(&name) else {
                continue;
            };
            let earlier = folder.join(earlier_name(id));
            let file = entry.path();
            if earlier.exists() {
                fs::remove_file(&file)
                    .map_err(|e| OutputError::io(&file, "remove the partial chain file", e))?;
            } else {
                fs::rename(&file, &earlier).map_err(|e| {
                    OutputError::io(&file, "move the chain file into the checkpoint folder", e)
                })?;
            }
        }
        Ok(CheckpointFiles { folder, interval })
    }

    /// Removes the checkpoints: the run finished.
    pub fn remove(self) -> Result<(), OutputError> {
        remove_folder(&self.folder)
    }

    /// Puts the stopped run's chain files that [`resume`](Self::resume)
    /// moved aside, and no chain has replaced yet, back in their place (a
    /// continued run that failed): the folder is again the stopped run's,
    /// and `--resume` can be tried again.
    pub fn give_back(&self) -> Result<(), OutputError> {
        let Some(parent) = self.folder.parent() else {
            return Ok(());
        };
        let entries = fs::read_dir(&self.folder)
            .map_err(|e| OutputError::io(&self.folder, "list the checkpoint folder", e))?;
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(chain) = name
                .strip_prefix("earlier_")
                .filter(|n| chain_id_of(n).is_some())
            {
                let target = parent.join(chain);
                fs::rename(entry.path(), &target)
                    .map_err(|e| OutputError::io(&target, "put back the chain file", e))?;
            }
        }
        Ok(())
    }

    fn checkpoint_path(&self, chain_id: usize) -> PathBuf {
        self.folder.join(format!("chain_{chain_id}.checkpoint"))
    }
}

/// Removes `folder` and what it holds, if it exists.
fn remove_folder(folder: &Path) -> Result<(), OutputError> {
    match fs::remove_dir_all(folder) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(OutputError::io(folder, "remove the checkpoint folder", e))
        }
        _ => Ok(()),
    }
}

/// The id of a chain file's name (`chain_<id>.csv`).
fn chain_id_of(name: &str) -> Option<usize> {
    name.strip_prefix("chain_")?
        .strip_suffix(".csv")?
        .parse()
        .ok()
        .filter(|&id| chain_file_name(id) == name)
}

fn earlier_name(chain_id: usize) -> String {
    format!("earlier_{}", chain_file_name(chain_id))
}

impl CheckpointStore for CheckpointFiles {
    fn load(&self, chain_id: usize) -> Result<Option<Vec<u8>>, SinkError> {
        match fs::read(self.checkpoint_path(chain_id)) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(OutputError::io(&self.checkpoint_path(chain_id), "read", e).into()),
        }
    }

    /// The stopped run's chain file goes first: from here on the chain's
    /// own file holds every row a checkpoint counts.
    fn save(&self, chain_id: usize, bytes: &[u8]) -> Result<(), SinkError> {
        let earlier = self.folder.join(earlier_name(chain_id));
        match fs::remove_file(&earlier) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(OutputError::io(&earlier, "remove", e).into());
            }
            _ => {}
        }
        let path = self.checkpoint_path(chain_id);
        let temporary = self
            .folder
            .join(format!(".chain_{chain_id}.checkpoint.tmp"));
        fs::write(&temporary, bytes)
            .and_then(|()| fs::rename(&temporary, &path))
            .map_err(|e| OutputError::io(&path, "write the checkpoint", e))?;
        Ok(())
    }

    fn replay(
        &self,
        chain_id: usize,
        warmup_rows: usize,
        rows: usize,
        row: &mut dyn FnMut(bool, ReplayedRow<'_>) -> Result<(), SinkError>,
    ) -> Result<(), SinkError> {
        let earlier = self.folder.join(earlier_name(chain_id));
        // A resume stopped after the chain saved a checkpoint of its own
        // removed the earlier file: the chain file itself holds the rows.
        let path = if earlier.exists() {
            earlier
        } else {
            self.folder
                .parent()
                .unwrap_or(Path::new("."))
                .join(chain_file_name(chain_id))
        };
        replay_file(&path, warmup_rows, rows, row)
    }

    fn interval(&self) -> Duration {
        self.interval
    }
}

/// Gives `row` the first `warmup_rows + rows` draws of the CmdStan CSV
/// file `path` as [`CheckpointStore::replay`] says, reading it a line at a
/// time.
fn replay_file(
    path: &Path,
    warmup_rows: usize,
    rows: usize,
    row: &mut dyn FnMut(bool, ReplayedRow<'_>) -> Result<(), SinkError>,
) -> Result<(), SinkError> {
    let wanted = warmup_rows + rows;
    if wanted == 0 {
        return Ok(());
    }
    let file = fs::File::open(path).map_err(|e| OutputError::io(path, "read", e))?;
    let at = |line: usize, message: String| -> SinkError {
        format!("{}:{line}: {message}", path.display()).into()
    };
    let mut columns: Option<Columns> = None;
    let mut values = Vec::new();
    let mut given = 0;
    for (i, line) in std::io::BufReader::with_capacity(1 << 16, file)
        .lines()
        .enumerate()
    {
        let line = line.map_err(|e| OutputError::io(path, "read", e))?;
        let line = line.trim_end_matches('\r');
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some(c) = &columns else {
            columns = Some(Columns::of(line));
            continue;
        };
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() != c.width {
            return Err(at(
                i + 1,
                format!("{} fields where the header has {}", fields.len(), c.width),
            ));
        }
        let number = |k: Option<usize>| -> Result<Option<f64>, SinkError> {
            k.map(|k| {
                fields[k]
                    .parse::<f64>()
                    .map_err(|_| at(i + 1, format!("`{}` is not a number", fields[k])))
            })
            .transpose()
        };
        let count = |k: Option<usize>| -> Result<Option<u32>, SinkError> {
            k.map(|k| {
                fields[k]
                    .parse::<u32>()
                    .map_err(|_| at(i + 1, format!("`{}` is not a count", fields[k])))
            })
            .transpose()
        };
        values.clear();
        for field in &fields[c.first_value..] {
            values.push(
                field
                    .parse::<f64>()
                    .map_err(|_| at(i + 1, format!("`{field}` is not a number")))?,
            );
        }
        let replayed = ReplayedRow {
            lp: number(c.lp)?.unwrap_or(f64::NAN),
            accept_stat: number(c.accept_stat)?.unwrap_or(f64::NAN),
            step_size: number(c.step_size)?.unwrap_or(f64::NAN),
            tree_depth: count(c.tree_depth)?,
            n_leapfrog: count(c.n_leapfrog)?.unwrap_or(0),
            divergent: count(c.divergent)?.is_some_and(|d| d != 0),
            energy: number(c.energy)?,
            values: &values,
        };
        row(given < warmup_rows, replayed)?;
        given += 1;
        if given == wanted {
            return Ok(());
        }
    }
    Err(format!(
        "{} holds {given} draws; its checkpoint counts {wanted}",
        path.display()
    )
    .into())
}

/// Where each sampler column is in a chain file's header, and where the
/// model's quantities begin.
struct Columns {
    lp: Option<usize>,
    accept_stat: Option<usize>,
    step_size: Option<usize>,
    tree_depth: Option<usize>,
    n_leapfrog: Option<usize>,
    divergent: Option<usize>,
    energy: Option<usize>,
    first_value: usize,
    width: usize,
}

impl Columns {
    fn of(header: &str) -> Columns {
        let names: Vec<&str> = header.split(',').collect();
        let find = |name: &str| names.iter().position(|n| *n == name);
        Columns {
            lp: find("lp__"),
            accept_stat: find("accept_stat__"),
            step_size: find("stepsize__"),
            tree_depth: find("treedepth__"),
            n_leapfrog: find("n_leapfrog__"),
            divergent: find("divergent__"),
            energy: find("energy__"),
            first_value: names.iter().take_while(|n| n.ends_with("__")).count(),
            width: names.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows read back from a chain file: warm-up rows first, the columns
    /// found by name, non-finite values and a short file named.
    #[test]
    fn a_chain_file_replays_its_rows() {
        let folder = std::env::temp_dir().join(format!("qnmc-replay-{}", std::process::id()));
        let _ = fs::remove_dir_all(&folder);
        fs::create_dir_all(&folder).unwrap();
        let file = folder.join("chain_1.csv");
        fs::write(
            &file,
            "# a comment\n\
             lp__,accept_stat__,stepsize__,treedepth__,n_leapfrog__,divergent__,energy__,x,y\n\
             -1.5,0.9,0.25,2,3,0,1.75,0.1,nan\n\
             # Adaptation terminated\n\
             -2,1,0.5,1,1,1,2.5,-inf,3e-9\n\
             -3,1,0.5,1,1,0,2.5,4,5\n\
             -4,1,0.5,1,1,0,2.5,4,",
        )
        .unwrap();
        let mut got = Vec::new();
        replay_file(&file, 1, 2, &mut |warm, r| {
            got.push(format!(
                "{warm} {} {} {} {:?} {} {} {:?} {:?}",
                r.lp,
                r.accept_stat,
                r.step_size,
                r.tree_depth,
                r.n_leapfrog,
                r.divergent,
                r.energy,
                r.values
            ));
            Ok(())
        })
        .unwrap();
        assert_eq!(
            got,
            [
                "true -1.5 0.9 0.25 Some(2) 3 false Some(1.75) [0.1, NaN]",
                "false -2 1 0.5 Some(1) 1 true Some(2.5) [-inf, 3e-9]",
                "false -3 1 0.5 Some(1) 1 false Some(2.5) [4.0, 5.0]",
            ]
        );
        // The cut last line is beyond what a checkpoint counts; asked for,
        // it is refused with its line.
        let e = replay_file(&file, 1, 3, &mut |_, _| Ok(())).unwrap_err();
        assert!(
            e.to_string().contains("chain_1.csv:7: `` is not a number"),
            "{e}"
        );
        let e = replay_file(&file, 0, 9, &mut |_, _| Ok(())).unwrap_err();
        assert!(e.to_string().contains("`` is not a number"), "{e}");
        fs::write(&file, "lp__,x\n1,2\n").unwrap();
        let e = replay_file(&file, 0, 2, &mut |_, _| Ok(())).unwrap_err();
        assert!(
            e.to_string()
                .contains("holds 1 draws; its checkpoint counts 2"),
            "{e}"
        );
        fs::remove_dir_all(folder).unwrap();
    }
}
