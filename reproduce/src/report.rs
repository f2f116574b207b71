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

/// The 0.975 quantile of Student's t with `df` degrees of freedom (a table
/// to df = 30, the normal 1.96 beyond; NaN for df = 0).
pub(crate) fn t_quantile_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df - 1],
        _ => 1.96,
    }
}

/// Mean of `values` and the half-width of its 95 % Student-t interval,
/// t₀.₉₇₅(n − 1)·s/√n (NaN half-width for fewer than two values).
pub(crate) fn mean_interval(values: &[f64]) -> (f64, f64) {
    let n = values.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, f64::NAN);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    (mean, t_quantile_975(n - 1) * (var / n as f64).sqrt())
}

/// `mean ± half` formatted with [`number`] (just the mean when the half-width
/// is NaN).
pub(crate) fn with_interval((mean, half): (f64, f64)) -> String {
    if half.is_nan() {
        number(mean)
    } else {
        format!("{} ± {}", number(mean), number(half))
    }
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
    fn mean_interval_uses_student_t() {
        let (m, h) = mean_interval(&[1.0, 2.0, 3.0]);
        assert_eq!(m, 2.0);
        // s = 1, t(2) = 4.303, n = 3.
        assert!((h - 4.303 / 3f64.sqrt()).abs() < 1e-12, "{h}");
        assert!(mean_interval(&[5.0]).1.is_nan());
        assert_eq!(with_interval((2.0, f64::NAN)), "2.00");
    }

    #[test]
    fn number_formats_by_magnitude() {
        assert_eq!(number(f64::NAN), "—");
        assert_eq!(number(253.4), "253");
        assert_eq!(number(2.654), "2.65");
        assert_eq!(number(1.5e-5), "1.50e-5");
    }
}
