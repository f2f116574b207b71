//! [`RowFacts`]: what a chain's kept draws show row by row (did it move,
//! how long did it stay at one point, where is its first non-finite
//! value), found in one pass over its rows so that they can be read from a
//! spill ([`DrawValues::for_each_row`](crate::draw_values::DrawValues::for_each_row)).

/// What the rows of one chain's kept draws show; the frozen-chain and
/// non-finite checks of [`assess_run`](super::assess_run) read it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RowFacts {
    /// Rows seen.
    pub rows: usize,
    /// More than one row, all identical.
    pub never_moved: bool,
    /// The longest stretch of identical consecutive rows: (first row,
    /// 0-based; length). (0, 0) without rows.
    pub longest_frozen: (usize, usize),
    /// The first value (in row-major order) that is not finite: (row,
    /// quantity, both 0-based; the value).
    pub first_non_finite: Option<(usize, usize, f64)>,
}

/// [`RowFacts`] being found, one row at a time.
#[derive(Debug, Clone, Default)]
pub struct RowScan {
    facts: RowFacts,
    first: Vec<f64>,
    previous: Vec<f64>,
    all_equal_first: bool,
    stretch_start: usize,
}

impl RowScan {
    /// A scan that has seen no row.
    pub fn new() -> RowScan {
        RowScan::default()
    }

    /// Takes the next row.
    pub fn observe(&mut self, row: &[f64]) {
        let i = self.facts.rows;
        if self.facts.first_non_finite.is_none() {
            if let Some(j) = row.iter().position(|v| !v.is_finite()) {
                self.facts.first_non_finite = Some((i, j, row[j]));
            }
        }
        if i == 0 {
            self.first = row.to_vec();
            self.all_equal_first = true;
            self.facts.longest_frozen = (0, 1);
        } else {
            self.all_equal_first &= row == self.first.as_slice();
            if row != self.previous.as_slice() {
                self.stretch_start = i;
            } else if i + 1 - self.stretch_start > self.facts.longest_frozen.1 {
                self.facts.longest_frozen = (self.stretch_start, i + 1 - self.stretch_start);
            }
        }
        self.previous.clear();
        self.previous.extend_from_slice(row);
        self.facts.rows += 1;
    }

    /// The facts of the rows seen.
    pub fn finish(mut self) -> RowFacts {
        self.facts.never_moved = self.facts.rows > 1 && self.all_equal_first;
        self.facts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(rows: &[[f64; 2]]) -> RowFacts {
        let mut scan = RowScan::new();
        rows.iter().for_each(|r| scan.observe(r));
        scan.finish()
    }

    #[test]
    fn a_chain_that_moved_has_its_longest_stay() {
        let f = facts(&[
            [1.0, 2.0],
            [1.0, 3.0],
            [1.0, 3.0],
            [1.0, 3.0],
            [0.0, 0.0],
            [0.0, 0.0],
        ]);
        assert_eq!(f.rows, 6);
        assert!(!f.never_moved);
        assert_eq!(f.longest_frozen, (1, 3));
        assert_eq!(f.first_non_finite, None);
    }

    #[test]
    fn a_chain_that_never_moved_is_one_stretch() {
        let f = facts(&[[1.0, 2.0]; 4]);
        assert!(f.never_moved);
        assert_eq!(f.longest_frozen, (0, 4));
        assert!(
            !facts(&[[1.0, 2.0]]).never_moved,
            "one row is not a chain that stayed"
        );
        assert_eq!(facts(&[]).longest_frozen, (0, 0));
    }

    #[test]
    fn the_first_non_finite_value_is_found_in_row_major_order() {
        let f = facts(&[[1.0, 2.0], [3.0, f64::NAN], [f64::INFINITY, 1.0]]);
        assert!(matches!(f.first_non_finite, Some((1, 1, v)) if v.is_nan()));
        // NaN is not equal to itself: rows holding one never freeze.
        let g = facts(&[[f64::NAN, 1.0]; 3]);
        assert!(!g.never_moved);
        assert_eq!(g.longest_frozen, (0, 1));
    }
}
