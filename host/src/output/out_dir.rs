//! [`OutputDir`]: the folder a run writes into (see its docs).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use super::OutputError;

/// Name of the marker file present while a run is writing into a folder.
pub const INCOMPLETE_MARKER: &str = "INCOMPLETE";

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
/// # std::fs::remove_dir_all(&folder).unwrap();
/// ```
#[derive(Debug)]
pub struct OutputDir {
    path: PathBuf,
    force: bool,
}

impl OutputDir {
    /// Checks, without creating or changing anything, that [`create`]
    /// would accept `path`: it does not exist, or is a folder that is empty,
    /// holds only the partial output of a run that stopped early (see
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

    /// Without `force`: `Ok(true)` when the folder is empty or holds the
    /// partial output of a stopped run (its files may be replaced), else the
    /// not-empty error.
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
        if stopped_run(path) {
            return Ok(true);
        }
        names.sort();
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
    /// partial output of a run that stopped early (an [`INCOMPLETE_MARKER`]
    /// whose process is no longer running): that is the same command tried
    /// again, and its files are replaced. With `force`, an existing folder is
    /// used as it is and files are overwritten.
    pub fn create(path: &Path, force: bool) -> Result<OutputDir, OutputError> {
        fs::create_dir_all(path)
            .map_err(|e| OutputError::io(path, "create the output folder", e))?;
        let reuse = !force && Self::refuse_unless_reusable(path)?;
        let dir = OutputDir {
            path: path.to_path_buf(),
            force: force || reuse,
        };
        let marker = dir.path.join(INCOMPLETE_MARKER);
        fs::write(&marker, marker_text())
            .map_err(|e| OutputError::io(&marker, "write the in-progress marker", e))?;
        Ok(dir)
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
        if !is_plain_file_name(file_name) {
            return Err(OutputError::BadFileName {
                folder: self.path.clone(),
                name: file_name.to_string(),
            });
        }
        let target = self.path.join(file_name);
        if !self.force && fs::symlink_metadata(&target).is_ok() {
            return Err(OutputError::FileExists { path: target });
        }
        let temporary = self.path.join(format!(
            ".{file_name}.{}-{}.tmp",
            std::process::id(),
            TEMPORARY_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let written = write_and_sync(&temporary, contents)
            .map_err(|e| OutputError::io(&temporary, "write", e))
            .and_then(|()| self.move_into_place(&temporary, &target));
        if written.is_err() {
            let _ = fs::remove_file(&temporary);
        }
        written.map(|()| target)
    }

    /// Renames `temporary` to `target`. Without `force` a hard link makes the
    /// no-overwrite check and the move one atomic step (a file created in
    /// between by another process is not replaced); where the file system
    /// has no hard links, a plain rename follows the existence check.
    fn move_into_place(&self, temporary: &Path, target: &Path) -> Result<(), OutputError> {
        if !self.force {
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

    /// Marks the run complete by removing the [`INCOMPLETE_MARKER`].
    pub fn finish(self) -> Result<(), OutputError> {
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

fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name != INCOMPLETE_MARKER
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
         started: {started} seconds after 1970-01-01 00:00 UTC\n\
         qnmc removes this file when the run has written everything. If that \
         process is no longer running, the run stopped early and the files \
         here are partial.\n",
        command.join(" "),
        std::process::id()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // No temporary file is left behind.
        let entries: Vec<_> = fs::read_dir(&folder).unwrap().collect();
        assert_eq!(entries.len(), 1);
        fs::remove_dir_all(root).unwrap();
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

    #[test]
    fn the_partial_output_of_a_stopped_run_is_reused_without_force() {
        let folder = scratch("stopped");
        fs::create_dir_all(&folder).unwrap();
        fs::write(folder.join("chain_1.csv"), b"partial").unwrap();
        // A marker of a process that is not running (pid 4294967295 never is).
        fs::write(
            folder.join(INCOMPLETE_MARKER),
            "A qnmc run is writing into this folder.\nprocess id: 4294967295\n",
        )
        .unwrap();
        if cfg!(target_os = "linux") {
            OutputDir::check_available(&folder, false).unwrap();
            let out = OutputDir::create(&folder, false).unwrap();
            out.write("chain_1.csv", b"complete").unwrap();
            out.finish().unwrap();
            assert_eq!(fs::read(folder.join("chain_1.csv")).unwrap(), b"complete");
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
}
