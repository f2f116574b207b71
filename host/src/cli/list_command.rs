//! `qnmc list`: the targets and samplers with one line each.

use std::fmt::Write as _;

use super::TARGETS;
use crate::reproduce;
use crate::run::SamplerKind;

/// The listing `qnmc list` prints.
pub fn listing() -> String {
    let mut out = String::from("targets (--target):\n");
    for (name, description) in TARGETS {
        let _ = writeln!(out, "  {name:<18} {description}");
    }
    out.push_str("\nsamplers (--sampler):\n");
    for kind in SamplerKind::ALL {
        let _ = writeln!(out, "  {:<18} {}", kind.name(), kind.description());
    }
    out.push_str("\nreproductions (qnmc reproduce NAME|all):\n");
    for name in reproduce::NAMES {
        let _ = writeln!(out, "  {name}");
    }
    out
}
