//! The "your own CSV" walk-through of docs/CLI.md (linked from the README),
//! run exactly as printed: the CSV written by its heredoc and the `qnmc`
//! command after `--`, in a fresh folder. If the page drifts from the CLI,
//! this fails.

use std::path::PathBuf;
use std::process::Command;

/// The page that holds the walk-through, relative to the workspace.
const PAGE: &str = "docs/CLI.md";

/// The shell block that follows the `<!-- readme-user-csv -->` marker.
fn readme_block() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(PAGE);
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{PAGE} in the workspace: {e}"));
    let mut parts = text.split("<!-- readme-user-csv -->");
    let after = parts
        .nth(1)
        .unwrap_or_else(|| panic!("{PAGE} has no <!-- readme-user-csv --> marker"));
    assert!(
        parts.next().is_none(),
        "{PAGE} has more than one <!-- readme-user-csv --> marker"
    );
    let body = after
        .split("```sh\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{PAGE}: no ```sh block after the marker"));
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
    assert!(
        commands.iter().any(|args| args[0] == "plot"),
        "the block draws the charts"
    );
    for args in &commands {
        let sampling = args[0] == "run";
        let out = Command::new(env!("CARGO_BIN_EXE_qnmc"))
            .args(args)
            .args(sampling.then_some("--quiet"))
            .current_dir(&dir)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "qnmc {args:?} failed:\n{text}");
        if !sampling {
            continue;
        }
        // The label rule and the coefficient names are printed, as the page says.
        assert!(text.contains("\"no\" → 0, \"yes\" → 1"), "{text}");
        assert!(
            text.contains("coefficients: (intercept), age, dose"),
            "{text}"
        );
    }
    // The page promises CmdStan CSVs, summary.json, model.json, the
    // coefficient table and, after `qnmc plot`, charts (named after the
    // columns) in the output folder.
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
