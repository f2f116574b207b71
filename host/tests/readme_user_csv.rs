//! The README's "your own CSV" walk-through, run exactly as printed: the CSV
//! written by its heredoc and the `qnmc` command after `--`, in a fresh folder.
//! If the README drifts from the CLI, this fails.

use std::path::PathBuf;
use std::process::Command;

/// The shell block that follows the `<!-- readme-user-csv -->` marker.
fn readme_block() -> String {
    let readme =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .expect("README.md beside the workspace");
    let after = readme
        .split("<!-- readme-user-csv -->")
        .nth(1)
        .expect("README has the <!-- readme-user-csv --> marker");
    let body = after
        .split("```sh\n")
        .nth(1)
        .expect("a ```sh block after the marker");
    body.split("\n```").next().unwrap().to_string()
}

#[test]
fn the_readme_user_csv_example_runs_as_printed() {
    let block = readme_block();
    // The heredoc: `cat > NAME <<'EOF'` … `EOF`.
    let start = block.find("cat > ").expect("a heredoc writing the CSV");
    let header_line = block[start..].lines().next().unwrap();
    let file_name = header_line["cat > ".len()..]
        .split_whitespace()
        .next()
        .unwrap();
    let csv: Vec<&str> = block[start..]
        .lines()
        .skip(1)
        .take_while(|l| *l != "EOF")
        .collect();
    assert!(csv.len() > 10, "the example CSV has data rows");

    let dir = std::env::temp_dir().join(format!("qnmc-readme-csv-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(file_name), csv.join("\n") + "\n").unwrap();

    // Every `cargo run … -- ARGS` line of the block, run as the built binary.
    let commands: Vec<Vec<String>> = block
        .lines()
        .filter(|l| l.starts_with("cargo run"))
        .map(|l| {
            let args = l.split(" -- ").nth(1).expect("cargo run … -- ARGS");
            args.split_whitespace().map(str::to_string).collect()
        })
        .collect();
    assert!(!commands.is_empty(), "the block runs qnmc");
    for args in &commands {
        let out = Command::new(env!("CARGO_BIN_EXE_qnmc"))
            .args(args)
            .arg("--quiet")
            .current_dir(&dir)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "qnmc {args:?} failed:\n{text}");
        // The label rule and the coefficient names are printed, as the README says.
        assert!(text.contains("\"no\" → 0, \"yes\" → 1"), "{text}");
        assert!(
            text.contains("coefficients: (intercept), age, dose"),
            "{text}"
        );
    }
    // The README promises CmdStan CSVs, summary.json, model.json, the
    // coefficient table and plots (named after the columns) in the output folder.
    let output = dir.join("trial-fit");
    for file in [
        "chain_1.csv",
        "summary.json",
        "model.json",
        "coefficients.csv",
        "trace_age.png",
        "rank_lp.png",
    ] {
        assert!(output.join(file).is_file(), "missing {file}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
