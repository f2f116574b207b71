//! The quantity names Stan prints (`w[1]`, `a[2,3]`) from the column names
//! of its CSV files and of a Stan model's parameter list (`w.1`, `a.2.3`),
//! for the CmdStan CSV reader and for a Stan model's output names.

/// The quantity name of a Stan CSV column: `w.1` → `w[1]`, `a.2.3` →
/// `a[2,3]`; a column whose dotted parts are not all numbers is unchanged.
///
/// ```
/// use qnmc_host::input::quantity_name;
/// assert_eq!(quantity_name("w.1"), "w[1]");
/// assert_eq!(quantity_name("a.2.3"), "a[2,3]");
/// assert_eq!(quantity_name("lp__"), "lp__");
/// assert_eq!(quantity_name("x.y"), "x.y");
/// ```
pub fn quantity_name(column: &str) -> String {
    match column.split_once('.') {
        Some((base, indices))
            if !base.is_empty()
                && indices
                    .split('.')
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) =>
        {
            format!("{base}[{}]", indices.replace('.', ","))
        }
        _ => column.to_string(),
    }
}
