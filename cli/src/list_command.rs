//! `qnmc list`: the targets and samplers with one line each.

use std::fmt::Write as _;

use super::TARGETS;
use qnmc_host::run::SamplerKind;
use qnmc_reproduce as reproduce;

/// The listing `qnmc list` prints.
pub fn listing() -> String {
    // One column for every name, as wide as the longest.
    let width = TARGETS
        .iter()
        .map(|(name, _)| name.len())
        .chain(SamplerKind::ALL.iter().map(|kind| kind.name().len()))
        .max()
        .unwrap_or(0);
    let mut out = String::from("targets (--target):\n");
    for (name, description) in TARGETS {
        let _ = writeln!(out, "  {name:<width$} {description}");
    }
    out.push_str(
        "  or --model LIB.so [--data FILE.json]: a Stan model compiled with BridgeStan's C API\n  \
         (BridgeStan, or stan/build-model.py offline; see docs/CLI.md)\n",
    );
    out.push_str("\nsamplers (--sampler):\n");
    for kind in SamplerKind::ALL {
        let _ = writeln!(out, "  {:<width$} {}", kind.name(), kind.description());
    }
    out.push_str("\nreproductions (qnmc reproduce NAME|all):\n");
    for name in reproduce::NAMES {
        let _ = writeln!(out, "  {name}");
    }
    out
}
