//! `qnmc reproduce NAME|all`: run the papers' experiments and write
//! `<name>.md` and its charts (SVG and PNG) for each into the output folder.

use super::CliError;
use super::args::ReproduceArgs;
use qnmc_host::output::{OutputDir, render_chart};
use qnmc_reproduce::{self as reproduce, ReproduceOptions};

/// `qnmc reproduce`.
pub fn reproduce(args: &ReproduceArgs) -> Result<(), CliError> {
    let names: Vec<&str> = if args.name == "all" {
        reproduce::NAMES.to_vec()
    } else if reproduce::NAMES.contains(&args.name.as_str()) {
        vec![args.name.as_str()]
    } else {
        return Err(CliError::Usage(format!(
            "unknown reproduction `{}`; valid: {}, all",
            args.name,
            reproduce::NAMES.join(", ")
        )));
    };
    let dir = OutputDir::create(&args.output, args.force)?;
    let options = ReproduceOptions {
        seed: args.seed,
        quick: args.quick,
    };
    let mut skipped = Vec::new();
    for name in names {
        eprintln!(
            "reproducing {name}{}",
            if args.quick { " (quick)" } else { "" }
        );
        let Some(result) = reproduce::run(name, &options) else {
            return Err(CliError::Usage(format!("unknown reproduction `{name}`")));
        };
        let path = dir.write(&format!("{name}.md"), result.markdown.as_bytes())?;
        for chart in &result.charts {
            render_chart(chart, &dir)?;
        }
        println!("{}: {}", result.title, path.display());
        for part in &result.skipped {
            eprintln!("skipped in {name}: {part}");
            skipped.push(format!(
                "{name}: {}",
                part.split(':').next().unwrap_or(part)
            ));
        }
    }
    dir.finish()?;
    if skipped.is_empty() {
        Ok(())
    } else {
        Err(CliError::Skipped(skipped))
    }
}
