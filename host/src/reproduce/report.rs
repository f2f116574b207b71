//! Small helpers the reproduction reports share: number formatting, the
//! machine description printed beside wall-clock figures, the quick-run note,
//! and thinning long curves for charts.

/// A description of the machine for reports that print wall-clock figures:
/// the CPU model (from `/proc/cpuinfo` where it exists), the logical CPUs
/// available, the OS and architecture.
pub(crate) fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    format!(
        "{cpu}, {threads} logical CPUs available, {} {} (one thread per run; the machine may be shared)",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

/// The sentence a quick run's report starts with.
pub(crate) fn quick_note(quick: bool) -> &'static str {
    if quick {
        "> **Quick run** (`quick = true`): shortened run lengths for a smoke test; the numbers \
         are noisy and not comparable with the paper's. Run without `--quick` for the paper's \
         settings.\n\n"
    } else {
        ""
    }
}

/// A number with 3 significant digits in plain notation when it is of
/// moderate size, in scientific notation otherwise; `—` for NaN.
pub(crate) fn number(x: f64) -> String {
    if x.is_nan() {
        return "—".to_string();
    }
    let a = x.abs();
    if a != 0.0 && !(1e-3..1e6).contains(&a) {
        format!("{x:.2e}")
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 10.0 {
        format!("{x:.1}")
    } else if a >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// At most about `max_points` of `points`, evenly spaced in index, the last
/// point always kept.
pub(crate) fn thin(points: &[(f64, f64)], max_points: usize) -> Vec<(f64, f64)> {
    let stride = points.len().div_ceil(max_points.max(1)).max(1);
    let mut out: Vec<(f64, f64)> = points.iter().step_by(stride).copied().collect();
    if let (Some(last), Some(kept)) = (points.last(), out.last()) {
        if last != kept {
            out.push(*last);
        }
    }
    out
}

/// Indices 1, 2, …, n spaced evenly on a log scale (about `per_decade` per
/// decade, duplicates removed): where error curves are evaluated.
pub(crate) fn log_spaced(n: usize, per_decade: usize) -> Vec<usize> {
    let mut out = Vec::new();
    if n == 0 {
        return out;
    }
    let decades = (n as f64).log10();
    let count = ((decades * per_decade as f64).ceil() as usize).max(1);
    for k in 0..=count {
        let i = 10f64.powf(decades * k as f64 / count as f64).round() as usize;
        let i = i.clamp(1, n);
        if out.last() != Some(&i) {
            out.push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_spaced_starts_at_one_ends_at_n_and_increases() {
        let v = log_spaced(20_000, 10);
        assert_eq!(v.first(), Some(&1));
        assert_eq!(v.last(), Some(&20_000));
        assert!(v.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn thin_keeps_the_last_point_and_bounds_the_count() {
        let pts: Vec<(f64, f64)> = (0..1001).map(|i| (i as f64, 0.0)).collect();
        let t = thin(&pts, 100);
        assert!(t.len() <= 102, "{}", t.len());
        assert_eq!(t.last(), pts.last());
    }

    #[test]
    fn number_formats_by_magnitude() {
        assert_eq!(number(f64::NAN), "—");
        assert_eq!(number(253.4), "253");
        assert_eq!(number(2.654), "2.65");
        assert_eq!(number(1.5e-5), "1.50e-5");
    }
}
