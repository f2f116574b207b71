//! [`OutputDir`]: the folder a run writes into (see its docs).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use super::OutputError;
use super::streamed_file::StreamedFile;

/// Name of the marker file present while a run is writing into a folder.
pub const INCOMPLETE_MARKER: &str = "INCOMPLETE";

/// Name of the list of the files a run wrote into its folder, kept up to
/// date as each file is written (see [`OutputDir`]).
pub const MANIFEST: &str = "qnmc-files.txt";

/// Distinguishes the temporary files of concurrent writes in one process.
static TEMPORARY_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The folder a run writes into, safe against clobbering old
/// results and against partial output that looks complete.
///
/// * Without `force`, [`OutputDir::create`] refuses a folder that already
///   holds anything at all (any file or sub-folder, not only names qnmc
///   writes: a folder with unrelated files in it is most likely a typo), and
///   [`OutputDir::write`] refuses to replace an existing file.
/// * From [`OutputDir::create`] until [`OutputDir::finish`] the folder holds a
///   marker file [`INCOMPLETE_MARKER`] saying which run is writing there. A run
///   that stops early (error, panic, Ctrl-C) leaves the marker behind, so its
///   partial output never looks like a finished run.
/// * Each file is written to a temporary file in the same folder and then
///   renamed over its final name, so a reader never sees half a file.
/// * The folder's [`MANIFEST`] lists every file the run wrote, and how the
///   run ended ([`OutputDir::finish`], [`OutputDir::finish_unusable`],
///   [`OutputDir::finish_interrupted`]). A run that replaces an earlier one
///   (with `force`, or without it after a run that ended unusable or
///   stopped early before writing any `chain_<k>.csv`) first deletes the files the
///   earlier run's manifest lists, so nothing stale (the charts of another
///   sampler, a chain the new run does not have) stays beside the new
///   files; a file qnmc did not write is never deleted.
///
/// ```
/// use qnmc_host::output::{INCOMPLETE_MARKER, OutputDir};
///
/// let folder = std::env::temp_dir().join(format!("qnmc-doc-out-dir-{}", std::process::id()));
/// # let _ = std::fs::remove_dir_all(&folder);
/// let out = OutputDir::create(&folder, false).unwrap();
/// assert!(folder.join(INCOMPLETE_MARKER).exists());
/// let written = out.write("summary.txt", b"all good\n").unwrap();
/// assert_eq!(std::fs::read(&written).unwrap(), b"all good\n");
/// // Without force the same name is not written twice.
/// assert!(out.write("summary.txt", b"again").is_err());
/// out.finish().unwrap();
/// assert!(!folder.join(INCOMPLETE_MARKER).exists());
/// // The folder now holds results: a second run needs force.
/// assert!(OutputDir::create(&folder, false).is_err());
/// // With force, the files of the first run are deleted, others kept.
/// std::fs::write(folder.join("notes.txt"), "mine").unwrap();
/// let again = OutputDir::create(&folder, true).unwrap();
/// assert!(!folder.join("summary.txt").exists());
/// assert!(folder.join("notes.txt").exists());
/// again.finish().unwrap();
/// # std::fs::remove_dir_all(&folder).unwrap();
/// ```
#[derive(Debug)]
pub struct OutputDir {
    path: PathBuf,
    force: bool,
    /// The files written so far, in order (the [`MANIFEST`]'s list).
    written: Mutex<Vec<String>>,
    /// The status the [`MANIFEST`] records while files are written:
    /// [`RunStatus::Writing`], or, in a [reopened](OutputDir::reopen)
    /// folder, the finished run's.
    status: RunStatus,
    /// Files that may be replaced without `force`: in a
    /// [reopened](OutputDir::reopen) folder, those its manifest lists.
    replaceable: Vec<String>,
}

/// How a run that wrote into a folder ended, as its [`MANIFEST`] records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunStatus {
    /// Still writing (or stopped before [`OutputDir::finish`]).
    Writing,
    /// Finished, draws usable.
    Complete,
    /// Finished, draws unusable (`qnmc run` exit code 3).
    Unusable,
    /// Stopped by Ctrl-C or SIGTERM after writing the draws made until then
    /// ([`OutputDir::finish_interrupted`]); the marker stays.
    Interrupted,
}

impl RunStatus {
    fn word(self) -> &'static str {
        match self {
            RunStatus::Writing => "writing",
            RunStatus::Complete => "complete",
            RunStatus::Unusable => "unusable",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

impl OutputDir {
    /// Checks, without creating or changing anything, that [`create`]
    /// would accept `path`: it does not exist, or is a folder that is empty,
    /// holds the output of a run that stopped early or ended unusable (see
    /// [`create`]), or `force` is set. Run before the work so that a clash
    /// fails fast and a refused or failed run leaves no folder behind.
    ///
    /// [`create`]: OutputDir::create
    pub fn check_available(path: &Path, force: bool) -> Result<(), OutputError> {
        match fs::metadata(path) {
            Err(_) => Ok(()),
            Ok(m) if !m.is_dir() => Err(OutputError::io(
                path,
                "use as the output folder",
                std::io::Error::other("it exists and is not a folder"),
            )),
            Ok(_) if force => Ok(()),
            Ok(_) => Self::refuse_unless_reusable(path).map(|_| ()),
        }
    }

    /// Without `force`: `Ok(false)` when the folder is empty, `Ok(true)`
    /// when it holds the output of an unusable run or the partial output of
    /// a stopped one without chain files (its files may be replaced); the
    /// chain files of a stopped run (interrupted, or failed after writing
    /// them) are draws that cost sampling time and are kept: refused, as is
    /// any other content.
    fn refuse_unless_reusable(path: &Path) -> Result<bool, OutputError> {
        let entries =
            fs::read_dir(path).map_err(|e| OutputError::io(path, "list the output folder", e))?;
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        if names.is_empty() {
            return Ok(false);
        }
        names.sort();
        if unusable_run(path) {
            return Ok(true);
        }
        if stopped_run(path) {
            let chains: Vec<String> = names
                .iter()
                .filter(|n| is_chain_file_name(n))
                .cloned()
                .collect();
            if chains.is_empty() {
                return Ok(true);
            }
            return Err(OutputError::HoldsChains {
                folder: path.to_path_buf(),
                chains,
            });
        }
        let total = names.len();
        names.truncate(3);
        if total > names.len() {
            names.push(format!("and {} more", total - names.len()));
        }
        Err(OutputError::FolderNotEmpty {
            folder: path.to_path_buf(),
            examples: names,
        })
    }

    /// Creates `path` (and its parents) and puts the [`INCOMPLETE_MARKER`] in
    /// it. Without `force`, fails when the folder already holds any entry,
    /// naming the folder, a few of its entries and `--force`, except the
    /// output of a run that ended unusable (its [`MANIFEST`] says so) or that
    /// stopped early (an [`INCOMPLETE_MARKER`] whose process is no longer
    /// running) before writing any chain file: that is the same command
    /// tried again, after a fix, and the earlier run's files are replaced.
    /// The `chain_<k>.csv` files of a stopped run (one interrupted with
    /// Ctrl-C keeps its draws so far) are never deleted without `force`: the
    /// error names them. With `force`, an existing folder is
    /// used and files are overwritten. Either way the files the earlier run
    /// wrote (its [`MANIFEST`]) are deleted first; other files are kept.
    pub fn create(path: &Path, force: bool) -> Result<OutputDir, OutputError> {
        fs::create_dir_all(path)
            .map_err(|e| OutputError::io(path, "create the output folder", e))?;
        let reuse = !force && Self::refuse_unless_reusable(path)?;
        let dir = OutputDir {
            path: path.to_path_buf(),
            force: force || reuse,
            written: Mutex::new(Vec::new()),
            status: RunStatus::Writing,
            replaceable: Vec::new(),
        };
        let marker = dir.path.join(INCOMPLETE_MARKER);
        fs::write(&marker, marker_text())
            .map_err(|e| OutputError::io(&marker, "write the in-progress marker", e))?;
        if dir.force {
            remove_previous_run(&dir.path)?;
        }
        Ok(dir)
    }

    /// Opens the folder of a stopped run to continue it (`qnmc run
    /// --resume`): `path` must hold the [`INCOMPLETE_MARKER`] of a run whose
    /// process has stopped (otherwise the error says why). Nothing is
    /// deleted; the files the stopped run listed stay listed and may be
    /// replaced, as the continued run writes them again; the marker now
    /// names this process.
    pub fn continue_stopped(path: &Path) -> Result<OutputDir, OutputError> {
        let refuse = |reason: String| OutputError::NotStopped {
            folder: path.to_path_buf(),
            reason,
        };
        if !path.join(INCOMPLETE_MARKER).exists() {
            return Err(refuse(format!(
                "it has no {INCOMPLETE_MARKER} file: the run there finished"
            )));
        }
        if !stopped_run(path) {
            return Err(refuse(format!(
                "its {INCOMPLETE_MARKER} file names a process that is still running (or \
                 its process cannot be checked on this system)"
            )));
        }
        let files = read_manifest(path).map_or_else(Vec::new, |(_, files)| files);
        let dir = OutputDir {
            path: path.to_path_buf(),
            force: true,
            written: Mutex::new(files.clone()),
            status: RunStatus::Writing,
            replaceable: files,
        };
        let marker = dir.path.join(INCOMPLETE_MARKER);
        fs::write(&marker, marker_text())
            .map_err(|e| OutputError::io(&marker, "write the in-progress marker", e))?;
        dir.record(None, RunStatus::Writing)?;
        Ok(dir)
    }

    /// Opens the folder of a finished run to add files to it (`qnmc plot`):
    /// `path` must hold a [`MANIFEST`] saying the run finished (complete or
    /// unusable) and no [`INCOMPLETE_MARKER`]. Nothing is deleted; files the
    /// manifest lists may be replaced, any other existing file is not; each
    /// file written is added to the manifest, whose status stays. No marker
    /// is put in the folder and [`finish`](Self::finish) is not needed: each
    /// file appears whole or not at all.
    pub fn reopen(path: &Path) -> Result<OutputDir, OutputError> {
        let not_run = |reason: &str| OutputError::NotRunOutput {
            folder: path.to_path_buf(),
            reason: reason.to_string(),
        };
        if !path.is_dir() {
            return Err(not_run("there is no such folder"));
        }
        if path.join(INCOMPLETE_MARKER).exists() {
            return Err(not_run(&format!(
                "it holds {INCOMPLETE_MARKER}: a run is writing into it, or stopped \
                 before it finished"
            )));
        }
        let Some((status, files)) = read_manifest(path) else {
            return Err(not_run(&format!(
                "it has no {MANIFEST} (the list of the files a run writes)"
            )));
        };
        let status = [RunStatus::Complete, RunStatus::Unusable]
            .into_iter()
            .find(|s| s.word() == status)
            .ok_or_else(|| not_run(&format!("its {MANIFEST} does not say the run finished")))?;
        Ok(OutputDir {
            path: path.to_path_buf(),
            force: false,
            written: Mutex::new(files.clone()),
            status,
            replaceable: files,
        })
    }

    /// The files written into the folder so far, in order: in a
    /// [reopened](Self::reopen) folder, the finished run's first.
    pub fn listed_files(&self) -> Vec<String> {
        self.written
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether `file_name` was written (or streamed) into the folder.
    fn listed(&self, file_name: &str) -> bool {
        self.written
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|n| n == file_name)
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether existing files may be overwritten.
    pub fn force(&self) -> bool {
        self.force
    }

    /// Writes `contents` to `file_name` in the folder, atomically (temporary
    /// file in the same folder, then rename), and returns the file's path.
    ///
    /// `file_name` must be a plain name (no separator, not `.`, `..` or the
    /// marker's name). Without `force`, an existing file is not replaced.
    pub fn write(&self, file_name: &str, contents: &[u8]) -> Result<PathBuf, OutputError> {
        let (target, replace) = self.target_of(file_name)?;
        if !replace && fs::symlink_metadata(&target).is_ok() {
            return Err(OutputError::FileExists { path: target });
        }
        self.write_into_place(file_name, &target, contents, replace)?;
        self.record(Some(file_name), self.status)?;
        Ok(target)
    }

    /// The path of `file_name` in the folder, refused unless a plain name
    /// (no separator, not `.` or `..`), and whether an existing file there
    /// may be replaced (`force`, or a file the finished run listed).
    fn target_of(&self, file_name: &str) -> Result<(PathBuf, bool), OutputError> {
        if !is_plain_file_name(file_name) {
            return Err(OutputError::BadFileName {
                folder: self.path.clone(),
                name: file_name.to_string(),
            });
        }
        let replace = self.force || self.replaceable.iter().any(|n| n == file_name);
        Ok((self.path.join(file_name), replace))
    }

    /// Writes `contents` to a temporary file in the folder and moves it to
    /// `target` (replacing a file there only if `replace`); the temporary
    /// file is removed on failure.
    fn write_into_place(
        &self,
        file_name: &str,
        target: &Path,
        contents: &[u8],
        replace: bool,
    ) -> Result<(), OutputError> {
        self.write_into_place_with(file_name, target, replace, |file, temporary| {
            file.write_all(contents)
                .map_err(|e| OutputError::io(temporary, "write", e))
        })
    }

    /// [`write_into_place`](Self::write_into_place) with the contents
    /// written by `fill` into the temporary file (its path given for
    /// errors).
    fn write_into_place_with(
        &self,
        file_name: &str,
        target: &Path,
        replace: bool,
        fill: impl FnOnce(&mut std::io::BufWriter<fs::File>, &Path) -> Result<(), OutputError>,
    ) -> Result<(), OutputError> {
        let temporary = self.path.join(format!(
            ".{file_name}.{}-{}.tmp",
            std::process::id(),
            TEMPORARY_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let written = fs::File::create(&temporary)
            .map_err(|e| OutputError::io(&temporary, "write", e))
            .and_then(|file| {
                let mut file = std::io::BufWriter::with_capacity(1 << 16, file);
                fill(&mut file, &temporary)?;
                let file = file
                    .into_inner()
                    .map_err(|e| OutputError::io(&temporary, "write", e.into_error()))?;
                file.sync_all()
                    .map_err(|e| OutputError::io(&temporary, "write", e))
            })
            .and_then(|()| self.move_into_place(&temporary, target, replace));
        if written.is_err() {
            let _ = fs::remove_file(&temporary);
        }
        written
    }

    /// Opens `file_name` in the folder to be written as it grows (a chain's
    /// draws as they are made) and lists it in the [`MANIFEST`] at once, so
    /// that a run killed while writing it leaves it listed. Unlike
    /// [`write`](Self::write) the file is written in place, not renamed
    /// into place: what was written before a crash stays on disk. The same
    /// name rules apply; without `force`, an existing file is not replaced.
    pub fn stream(&self, file_name: &str) -> Result<StreamedFile, OutputError> {
        let (target, replace) = self.target_of(file_name)?;
        let mut options = fs::OpenOptions::new();
        options.write(true);
        if replace {
            options.create(true).truncate(true);
        } else {
            options.create_new(true);
        }
        let file = options.open(&target).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                OutputError::FileExists {
                    path: target.clone(),
                }
            } else {
                OutputError::io(&target, "create", e)
            }
        })?;
        self.record(Some(file_name), self.status)?;
        Ok(StreamedFile::new(target, file))
    }

    /// Replaces `file_name`, a file this run [streamed](Self::stream), with
    /// `contents`, atomically as [`write`](Self::write) does (an
    /// interrupted chain's file, rewritten with the draws it holds in its
    /// header).
    pub fn rewrite_streamed(
        &self,
        file_name: &str,
        contents: &[u8],
    ) -> Result<PathBuf, OutputError> {
        let streamed = self.listed(file_name);
        if !streamed {
            return self.write(file_name, contents);
        }
        let target = self.path.join(file_name);
        self.write_into_place(file_name, &target, contents, true)?;
        Ok(target)
    }

    /// [`rewrite_streamed`](Self::rewrite_streamed) of a file this run
    /// streamed, its lines given one by one to the writer `fill` receives,
    /// so that a large file is never held in memory whole.
    pub fn rewrite_streamed_lines<E: Into<OutputError>>(
        &self,
        file_name: &str,
        fill: impl FnOnce(&mut dyn FnMut(&str)) -> Result<(), E>,
    ) -> Result<PathBuf, OutputError> {
        let streamed = self.listed(file_name);
        let (target, replace) = self.target_of(file_name)?;
        if !streamed && !replace && fs::symlink_metadata(&target).is_ok() {
            return Err(OutputError::FileExists { path: target });
        }
        self.write_into_place_with(
            file_name,
            &target,
            streamed || replace,
            |file, temporary| {
                let mut failed = None;
                let mut line = |text: &str| {
                    if failed.is_none() {
                        failed = file
                            .write_all(text.as_bytes())
                            .and_then(|()| file.write_all(b"\n"))
                            .err();
                    }
                };
                fill(&mut line).map_err(Into::into)?;
                failed.map_or(Ok(()), |e| Err(OutputError::io(temporary, "write", e)))
            },
        )?;
        self.record(Some(file_name), self.status)?;
        Ok(target)
    }

    /// Gives the folder up after a run that failed before it drew: when no
    /// file was written into it, the marker and the [`MANIFEST`] are
    /// removed, and the folder too if that leaves it empty. A folder that
    /// got files keeps them and its marker (a stopped run's).
    pub fn abandon(self) -> Result<(), OutputError> {
        if !self.listed_files().is_empty() {
            return Ok(());
        }
        for name in [INCOMPLETE_MARKER, MANIFEST] {
            let file = self.path.join(name);
            match fs::remove_file(&file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(OutputError::io(&file, "remove", e)),
            }
        }
        // Only an empty folder is removed (`remove_dir` refuses any other).
        let _ = fs::remove_dir(&self.path);
        Ok(())
    }

    /// Adds `file_name` (if any) to the files written, once, and saves the
    /// [`MANIFEST`] with `status`.
    fn record(&self, file_name: Option<&str>, status: RunStatus) -> Result<(), OutputError> {
        let mut written = self.written.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(name) = file_name.filter(|n| !written.iter().any(|w| w == n)) {
            written.push(name.to_string());
        }
        let mut text = format!(
            "# The files a qnmc run wrote into this folder. The next run into it\n\
             # (with --force, or after a run that was unusable or stopped before\n\
             # writing a chain file) deletes these, and only these, before\n\
             # writing its own.\n\
             status: {}\n",
            status.word()
        );
        for name in written.iter() {
            text.push_str(&format!("file: {name}\n"));
        }
        let manifest = self.path.join(MANIFEST);
        let temporary = self
            .path
            .join(format!(".{MANIFEST}.{}.tmp", std::process::id()));
        write_and_sync(&temporary, text.as_bytes())
            .and_then(|()| fs::rename(&temporary, &manifest))
            .map_err(|e| {
                let _ = fs::remove_file(&temporary);
                OutputError::io(&manifest, "write the list of written files", e)
            })
    }

    /// Renames `temporary` to `target`. Unless it may `replace` one, a hard link makes the
    /// no-overwrite check and the move one atomic step (a file created in
    /// between by another process is not replaced); where the file system
    /// has no hard links, a plain rename follows the existence check.
    fn move_into_place(
        &self,
        temporary: &Path,
        target: &Path,
        replace: bool,
    ) -> Result<(), OutputError> {
        if !replace {
            match fs::hard_link(temporary, target) {
                Ok(()) => {
                    let _ = fs::remove_file(temporary);
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Err(OutputError::FileExists {
                        path: target.to_path_buf(),
                    });
                }
                Err(_) => {}
            }
        }
        fs::rename(temporary, target)
            .map_err(|e| OutputError::io(target, "move the finished file into place as", e))
    }

    /// Marks the run complete: records it in the [`MANIFEST`] and removes the
    /// [`INCOMPLETE_MARKER`].
    pub fn finish(self) -> Result<(), OutputError> {
        self.finish_as(RunStatus::Complete)
    }

    /// [`finish`](Self::finish) for a run whose draws are unusable: the
    /// [`MANIFEST`] says so, and the next run may replace its files without
    /// `force` (the same command after fixing its settings).
    pub fn finish_unusable(self) -> Result<(), OutputError> {
        self.finish_as(RunStatus::Unusable)
    }

    /// Ends the writing of a run that was interrupted (Ctrl-C, SIGTERM) and
    /// wrote the draws it had: the [`MANIFEST`] says `interrupted`, and the
    /// [`INCOMPLETE_MARKER`] stays, saying that the run stopped, why
    /// (`reason`, one line such as `interrupted by SIGINT after 1234 of 4000
    /// iterations`) and when. A later run refuses the folder without `force`
    /// ([`create`](Self::create)), and `qnmc plot` does not take it for a
    /// finished run.
    pub fn finish_interrupted(self, reason: &str) -> Result<(), OutputError> {
        self.record(None, RunStatus::Interrupted)?;
        let marker = self.path.join(INCOMPLETE_MARKER);
        let text = fs::read_to_string(&marker).unwrap_or_else(|_| marker_text());
        let stopped = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let text = format!(
            "{}reason: {}\nstopped: {} ({stopped} seconds after 1970-01-01 00:00 UTC)\n\
             The chain files here hold every draw the run kept before it stopped; \
             qnmc does not delete them without --force.\n",
            text.replacen(
                "A qnmc run is writing into this folder.",
                "A qnmc run wrote into this folder and was interrupted.",
                1
            ),
            reason.replace('\n', " "),
            utc_text(stopped)
        );
        write_and_sync(&marker, text.as_bytes())
            .map_err(|e| OutputError::io(&marker, "write the in-progress marker", e))
    }

    fn finish_as(self, status: RunStatus) -> Result<(), OutputError> {
        self.record(None, status)?;
        let marker = self.path.join(INCOMPLETE_MARKER);
        match fs::remove_file(&marker) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(OutputError::io(&marker, "remove the in-progress marker", e)),
        }
    }
}

/// Whether `folder` holds the [`INCOMPLETE_MARKER`] of a run whose process is
/// known to have stopped (Linux: no `/proc/PID`; elsewhere this cannot be
/// told, and the answer is `false`).
fn stopped_run(folder: &Path) -> bool {
    let Ok(text) = fs::read_to_string(folder.join(INCOMPLETE_MARKER)) else {
        return false;
    };
    let pid = text
        .lines()
        .find_map(|l| l.strip_prefix("process id: "))
        .and_then(|p| p.trim().parse::<u32>().ok());
    match pid {
        Some(pid) if pid != std::process::id() => process_stopped(pid),
        _ => false,
    }
}

/// The [`MANIFEST`] of `folder`: the recorded status and file names (`None`
/// without a readable manifest).
fn read_manifest(folder: &Path) -> Option<(String, Vec<String>)> {
    let text = fs::read_to_string(folder.join(MANIFEST)).ok()?;
    let status = text
        .lines()
        .find_map(|l| l.strip_prefix("status: "))
        .unwrap_or("")
        .trim()
        .to_string();
    let files = text
        .lines()
        .filter_map(|l| l.strip_prefix("file: "))
        .map(str::to_string)
        .collect();
    Some((status, files))
}

/// Whether `folder` holds the finished output of a run whose draws were
/// unusable (its [`MANIFEST`] says so and no run is writing there).
fn unusable_run(folder: &Path) -> bool {
    !folder.join(INCOMPLETE_MARKER).exists()
        && read_manifest(folder).is_some_and(|(status, _)| status == RunStatus::Unusable.word())
}

/// Deletes the files the [`MANIFEST`] of `folder` lists (plain names in
/// `folder` only, never a sub-folder), then the manifest. Without a manifest
/// nothing is deleted.
fn remove_previous_run(folder: &Path) -> Result<(), OutputError> {
    let Some((_, files)) = read_manifest(folder) else {
        return Ok(());
    };
    for name in files.iter().filter(|n| is_plain_file_name(n)) {
        let path = folder.join(name);
        let is_file = fs::symlink_metadata(&path).is_ok_and(|m| !m.is_dir());
        if is_file {
            fs::remove_file(&path)
                .map_err(|e| OutputError::io(&path, "delete the earlier run's file", e))?;
        }
    }
    let manifest = folder.join(MANIFEST);
    match fs::remove_file(&manifest) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(OutputError::io(
            &manifest,
            "delete the earlier run's list of files",
            e,
        )),
        _ => Ok(()),
    }
}

#[cfg(target_os = "linux")]
fn process_stopped(pid: u32) -> bool {
    Path::new("/proc").is_dir() && !Path::new("/proc").join(pid.to_string()).exists()
}

#[cfg(not(target_os = "linux"))]
fn process_stopped(_pid: u32) -> bool {
    false
}

fn write_and_sync(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let mut file = fs::File::create(path)?;
    file.write_all(contents)?;
    file.sync_all()
}

/// `chain_<k>.csv`, the name of a chain's draws
/// ([`chain_file_name`](super::chain_file_name)).
fn is_chain_file_name(name: &str) -> bool {
    name.strip_prefix("chain_")
        .and_then(|rest| rest.strip_suffix(".csv"))
        .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name != INCOMPLETE_MARKER
        && name != MANIFEST
        && !name.contains(['/', '\\', '\0'])
}

/// What the marker says: which command is writing here, and what it means if
/// no such run is alive.
fn marker_text() -> String {
    let command: Vec<String> = std::env::args().collect();
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!(
        "A qnmc run is writing into this folder.\n\
         command: {}\n\
         process id: {}\n\
         started: {} ({started} seconds after 1970-01-01 00:00 UTC)\n\
         qnmc removes this file when the run has written everything. If that \
         process is no longer running, the run stopped early and the files \
         here are partial.\n",
        command.join(" "),
        std::process::id(),
        utc_text(started)
    )
}

/// `seconds` after 1970-01-01 00:00 UTC as `YYYY-MM-DD HH:MM:SS UTC` (the
/// proleptic Gregorian calendar; days to a date by counting 400-year eras
/// of 146 097 days from 0000-03-01, so that a leap day ends its year).
fn utc_text(seconds: u64) -> String {
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let shifted = days + 719_468; // days from 0000-03-01 to 1970-01-01
    let era = shifted / 146_097;
    let day_of_era = shifted % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dates checked against Python's `datetime` (UTC): the epoch, a leap
    /// day, the day after one, the end of a century's last year, a time of
    /// day.
    #[test]
    fn marker_times_read_as_dates() {
        for (seconds, text) in [
            (0, "1970-01-01 00:00:00 UTC"),
            (68_256_000, "1972-03-01 00:00:00 UTC"),
            (951_782_400, "2000-02-29 00:00:00 UTC"),
            (4_102_444_799, "2099-12-31 23:59:59 UTC"),
            (1_796_081_467, "2026-11-30 23:31:07 UTC"),
        ] {
            assert_eq!(utc_text(seconds), text, "{seconds}");
        }
        assert!(marker_text().contains(" UTC ("), "{}", marker_text());
    }

    /// A fresh, empty path under the system's temporary folder.
    fn scratch(name: &str) -> PathBuf {
        let path =
            std::env::temp_dir().join(format!("qnmc-out-dir-test-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&path);
        path
    }

    #[test]
    fn creates_parents_and_marker_and_finish_removes_it() {
        let root = scratch("parents");
        let folder = root.join("a").join("b");
        let out = OutputDir::create(&folder, false).unwrap();
        let marker = fs::read_to_string(folder.join(INCOMPLETE_MARKER)).unwrap();
        assert!(marker.contains("process id"), "{marker}");
        out.write("x.csv", b"1,2\n").unwrap();
        out.finish().unwrap();
        assert!(!folder.join(INCOMPLETE_MARKER).exists());
        assert_eq!(fs::read(folder.join("x.csv")).unwrap(), b"1,2\n");
        // No temporary file is left behind: the file and the list of files.
        let mut entries: Vec<String> = fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        entries.sort();
        assert_eq!(entries, [MANIFEST, "x.csv"]);
        let manifest = fs::read_to_string(folder.join(MANIFEST)).unwrap();
        assert!(
            manifest.contains("status: complete\nfile: x.csv\n"),
            "{manifest}"
        );
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn force_deletes_what_the_earlier_run_wrote_and_nothing_else() {
        let folder = scratch("replace");
        let out = OutputDir::create(&folder, false).unwrap();
        out.write("chain_1.csv", b"1").unwrap();
        out.write("trace_x.svg", b"<svg/>").unwrap();
        out.finish().unwrap();
        fs::write(folder.join("notes.txt"), b"mine").unwrap();
        // A manifest entry that is not a plain name is never followed.
        let outside_name = format!("qnmc-out-dir-test-outside-{}.txt", std::process::id());
        let outside = folder.parent().unwrap().join(&outside_name);
        fs::write(&outside, b"keep").unwrap();
        let manifest = folder.join(MANIFEST);
        let mut text = fs::read_to_string(&manifest).unwrap();
        text.push_str(&format!("file: ../{outside_name}\n"));
        fs::write(&manifest, text).unwrap();

        let out = OutputDir::create(&folder, true).unwrap();
        assert!(!folder.join("trace_x.svg").exists());
        assert!(!folder.join("chain_1.csv").exists());
        out.write("chain_1.csv", b"2").unwrap();
        out.finish().unwrap();
        assert_eq!(fs::read(folder.join("notes.txt")).unwrap(), b"mine");
        assert_eq!(fs::read(folder.join("chain_1.csv")).unwrap(), b"2");
        assert!(outside.exists());
        fs::remove_file(outside).unwrap();
        let manifest = fs::read_to_string(folder.join(MANIFEST)).unwrap();
        assert!(!manifest.contains("trace_x.svg"), "{manifest}");
        fs::remove_dir_all(folder).unwrap();
    }

    #[test]
    fn an_unusable_run_is_replaced_without_force() {
        let folder = scratch("unusable");
        let out = OutputDir::create(&folder, false).unwrap();
        out.write("chain_1.csv", b"stuck").unwrap();
        out.write("chain_2.csv", b"stuck").unwrap();
        out.finish_unusable().unwrap();
        OutputDir::check_available(&folder, false).unwrap();
        let out = OutputDir::create(&folder, false).unwrap();
        assert!(!folder.join("chain_2.csv").exists());
        out.write("chain_1.csv", b"moving").unwrap();
        out.finish().unwrap();
        assert_eq!(fs::read(folder.join("chain_1.csv")).unwrap(), b"moving");
        // A usable run's folder needs force again.
        assert!(OutputDir::check_available(&folder, false).is_err());
        fs::remove_dir_all(folder).unwrap();
    }

    #[test]
    fn dropping_without_finish_leaves_the_marker() {
        let folder = scratch("drop");
        {
            let out = OutputDir::create(&folder, false).unwrap();
            out.write("partial.csv", b"1\n").unwrap();
        }
        assert!(folder.join(INCOMPLETE_MARKER).exists());
        fs::remove_dir_all(folder).unwrap();
    }

    #[test]
    fn a_folder_with_files_needs_force() {
        let folder = scratch("nonempty");
        fs::create_dir_all(&folder).unwrap();
        fs::write(folder.join("old.csv"), b"old").unwrap();
        let err = OutputDir::create(&folder, false).unwrap_err();
        let message = err.to_string();
        assert!(message.contains(&folder.display().to_string()), "{message}");
        assert!(
            message.contains("old.csv") && message.contains("--force"),
            "{message}"
        );
        // With force the folder is reused and the file replaced.
        let out = OutputDir::create(&folder, true).unwrap();
        out.write("old.csv", b"new").unwrap();
        assert_eq!(fs::read(folder.join("old.csv")).unwrap(), b"new");
        out.finish().unwrap();
        fs::remove_dir_all(folder).unwrap();
    }

    #[test]
    fn existing_files_are_not_overwritten_without_force() {
        let folder = scratch("overwrite");
        let out = OutputDir::create(&folder, false).unwrap();
        out.write("a.txt", b"first").unwrap();
        let err = out.write("a.txt", b"second").unwrap_err();
        assert!(matches!(err, OutputError::FileExists { .. }));
        assert!(err.to_string().contains("a.txt"));
        assert_eq!(fs::read(folder.join("a.txt")).unwrap(), b"first");
        fs::remove_dir_all(folder).unwrap();
    }

    #[test]
    fn names_that_are_not_plain_file_names_are_refused() {
        let folder = scratch("names");
        let out = OutputDir::create(&folder, true).unwrap();
        for name in [
            "",
            ".",
            "..",
            "../escape.txt",
            "sub/file.txt",
            INCOMPLETE_MARKER,
        ] {
            let err = out.write(name, b"x").unwrap_err();
            assert!(matches!(err, OutputError::BadFileName { .. }), "{name:?}");
        }
        assert!(!folder.parent().unwrap().join("escape.txt").exists());
        fs::remove_dir_all(folder).unwrap();
    }

    #[test]
    fn checking_creates_nothing_and_refuses_what_create_refuses() {
        let root = scratch("check");
        let folder = root.join("out");
        OutputDir::check_available(&folder, false).unwrap();
        assert!(!root.exists(), "checking must not create anything");
        fs::create_dir_all(&folder).unwrap();
        OutputDir::check_available(&folder, false).unwrap();
        fs::write(folder.join("old.csv"), b"old").unwrap();
        let err = OutputDir::check_available(&folder, false).unwrap_err();
        assert!(err.to_string().contains("old.csv"), "{err}");
        OutputDir::check_available(&folder, true).unwrap();
        let file = folder.join("old.csv");
        assert!(OutputDir::check_available(&file, true).is_err());
        fs::remove_dir_all(root).unwrap();
    }

    /// A marker of a process that is not running (pid 4294967295 never is).
    const STOPPED_MARKER: &str =
        "A qnmc run is writing into this folder.\nprocess id: 4294967295\n";

    #[test]
    fn the_partial_output_of_a_stopped_run_is_reused_without_force() {
        let folder = scratch("stopped");
        fs::create_dir_all(&folder).unwrap();
        fs::write(folder.join("model.json"), b"partial").unwrap();
        fs::write(folder.join(INCOMPLETE_MARKER), STOPPED_MARKER).unwrap();
        if cfg!(target_os = "linux") {
            OutputDir::check_available(&folder, false).unwrap();
            let out = OutputDir::create(&folder, false).unwrap();
            out.write("model.json", b"complete").unwrap();
            out.finish().unwrap();
            assert_eq!(fs::read(folder.join("model.json")).unwrap(), b"complete");
            assert!(!folder.join(INCOMPLETE_MARKER).exists());
        }
        // A marker of a live process (this one) is a run in progress: refused.
        fs::write(
            folder.join(INCOMPLETE_MARKER),
            format!("process id: {}\n", std::process::id()),
        )
        .unwrap();
        assert!(OutputDir::check_available(&folder, false).is_err());
        fs::remove_dir_all(folder).unwrap();
    }

    #[test]
    fn the_chain_files_of_a_stopped_run_are_kept_without_force() {
        let folder = scratch("stopped-chains");
        let out = OutputDir::create(&folder, false).unwrap();
        out.write("chain_1.csv", b"draws").unwrap();
        out.write("chain_12.csv", b"draws").unwrap();
        out.finish_interrupted("interrupted by SIGINT after 1234 of 4000 iterations")
            .unwrap();
        let marker = fs::read_to_string(folder.join(INCOMPLETE_MARKER)).unwrap();
        assert!(
            marker.contains("was interrupted")
                && marker
                    .contains("\nreason: interrupted by SIGINT after 1234 of 4000 iterations\n")
                && marker.contains("\nstopped: ")
                && marker.contains(" UTC ("),
            "{marker}"
        );
        let (status, files) = read_manifest(&folder).unwrap();
        assert_eq!(status, "interrupted");
        assert_eq!(files, ["chain_1.csv", "chain_12.csv"]);
        // As the interrupted process would leave it once it has exited.
        let stopped = marker.replace(
            &format!("process id: {}", std::process::id()),
            "process id: 4294967295",
        );
        fs::write(folder.join(INCOMPLETE_MARKER), stopped).unwrap();
        for refused in [
            OutputDir::check_available(&folder, false).map(|_| ()),
            OutputDir::create(&folder, false).map(|_| ()),
        ] {
            let message = refused.unwrap_err().to_string();
            assert!(
                message.contains(&folder.display().to_string())
                    && message.contains("--force")
                    && (!cfg!(target_os = "linux")
                        || message.contains("chain_1.csv, chain_12.csv")),
                "{message}"
            );
        }
        assert_eq!(fs::read(folder.join("chain_12.csv")).unwrap(), b"draws");
        // `qnmc plot` does not take it for a finished run.
        assert!(OutputDir::reopen(&folder).is_err());
        // With force the earlier run's files are replaced.
        let out = OutputDir::create(&folder, true).unwrap();
        assert!(!folder.join("chain_12.csv").exists());
        out.write("chain_1.csv", b"new").unwrap();
        out.finish().unwrap();
        assert!(!folder.join(INCOMPLETE_MARKER).exists());
        fs::remove_dir_all(folder).unwrap();
    }

    #[test]
    fn chain_file_names() {
        for name in ["chain_1.csv", "chain_10.csv"] {
            assert!(is_chain_file_name(name), "{name}");
        }
        for name in [
            "chain_.csv",
            "chain_1.csv.tmp",
            "chain_a.csv",
            "summary.csv",
        ] {
            assert!(!is_chain_file_name(name), "{name}");
        }
    }

    #[test]
    fn os_errors_name_the_path() {
        let root = scratch("oserror");
        fs::create_dir_all(&root).unwrap();
        let file = root.join("plain-file");
        fs::write(&file, b"x").unwrap();
        // A folder cannot be created below a plain file.
        let err = OutputDir::create(&file.join("sub"), true).unwrap_err();
        let message = err.to_string();
        assert!(matches!(err, OutputError::Io { .. }));
        assert!(message.contains("plain-file"), "{message}");
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_reopened_folder_replaces_only_its_runs_files_and_keeps_the_status() {
        let folder = scratch("reopen");
        let out = OutputDir::create(&folder, false).unwrap();
        out.write("summary.json", b"{}").unwrap();
        out.finish_unusable().unwrap();
        fs::write(folder.join("mine.svg"), b"<svg/>").unwrap();
        let again = OutputDir::reopen(&folder).unwrap();
        assert_eq!(again.listed_files(), ["summary.json"]);
        again.write("summary.json", b"{\"charts\": []}").unwrap();
        again.write("trace_lp.svg", b"<svg/>").unwrap();
        assert!(matches!(
            again.write("mine.svg", b"<svg>ours</svg>"),
            Err(OutputError::FileExists { .. })
        ));
        assert_eq!(fs::read(folder.join("mine.svg")).unwrap(), b"<svg/>");
        assert!(!folder.join(INCOMPLETE_MARKER).exists());
        let (status, files) = read_manifest(&folder).unwrap();
        assert_eq!(status, "unusable");
        assert_eq!(files, ["summary.json", "trace_lp.svg"]);
        fs::remove_dir_all(folder).unwrap();
    }
}
