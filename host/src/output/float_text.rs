//! Numbers as text that reads back exactly.

/// The shortest decimal text of `x` that parses back to the same `f64`
/// (Rust's shortest-round-trip formatting), in plain notation for
/// 10⁻⁵ ≤ |x| < 10¹⁶ and scientific notation (`1.5e-7`, `2e300`) otherwise,
/// the way CSV readers in R, Python and Stan accept it. Non-finite values are
/// `nan`, `inf` and `-inf`, as CmdStan writes them.
///
/// ```
/// use qnmc_host::output::float_text;
///
/// assert_eq!(float_text(0.1), "0.1");
/// assert_eq!(float_text(-2.0), "-2");
/// assert_eq!(float_text(1.5e-7), "1.5e-7");
/// assert_eq!(float_text(f64::NEG_INFINITY), "-inf");
/// let x = std::f64::consts::PI / 7.0;
/// assert_eq!(float_text(x).parse::<f64>().unwrap().to_bits(), x.to_bits());
/// ```
pub fn float_text(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    let magnitude = x.abs();
    if magnitude == 0.0 || (1e-5..1e16).contains(&magnitude) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_value_reads_back_bit_for_bit() {
        let mut values = vec![
            0.0,
            -0.0,
            1.0,
            0.1,
            1.0 / 3.0,
            1e-5,
            9.999_999_999_999_999e-6,
            1e16,
            9_999_999_999_999_998.0,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            -f64::MAX,
            f64::EPSILON,
        ];
        // A deterministic spread over many magnitudes.
        let mut bits: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..2000 {
            bits ^= bits << 13;
            bits ^= bits >> 7;
            bits ^= bits << 17;
            let v = f64::from_bits(bits);
            if v.is_finite() {
                values.push(v);
            }
        }
        for v in values {
            let text = float_text(v);
            let back: f64 = text.parse().unwrap();
            assert_eq!(back.to_bits(), v.to_bits(), "{v:e} -> {text}");
        }
    }

    #[test]
    fn plain_notation_in_the_middle_scientific_outside() {
        assert_eq!(float_text(123.25), "123.25");
        assert_eq!(float_text(1e-5), "0.00001");
        assert_eq!(float_text(1e16), "1e16");
        assert_eq!(float_text(-3e-9), "-3e-9");
        assert_eq!(float_text(-0.0), "-0");
    }

    #[test]
    fn non_finite_values_use_cmdstan_spelling_and_read_back() {
        assert_eq!(float_text(f64::NAN), "nan");
        assert_eq!(float_text(f64::INFINITY), "inf");
        assert!("nan".parse::<f64>().unwrap().is_nan());
        assert_eq!("-inf".parse::<f64>().unwrap(), f64::NEG_INFINITY);
    }
}
