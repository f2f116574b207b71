//! [`DrawValues`]: where the reported quantities' values of a run's kept
//! draws are read from, in blocks of columns or row by row. In memory
//! ([`InMemory`]: [`ChainDraws::values`](crate::draws::ChainDraws::values)),
//! or from the files a sink wrote them to as the chains drew
//! ([`ValueSpills`](crate::output::ValueSpills), `qnmc run`), so that the
//! summaries of a run need memory for one block of columns, not for every
//! value it drew (a 20 000-draw run of 4 chains at D = 1000 holds 640 MB of
//! values).

use std::convert::Infallible;

use crate::draws::RunDraws;

/// Bytes of values a block of columns may hold ([`block_quantities`]):
/// 64 MiB, 104 quantities of a 4-chain, 20 000-draw run. A block is read
/// from a spill in one pass over its files, so smaller blocks mean more
/// passes: the D = 1000, 20 000-draw run of docs/CLI.md reads its 640 MB
/// of spills 10 times and took the same wall time as with the values held
/// in memory (36.8 s against 36.9 s), at a peak of 94 MB resident.
pub const BLOCK_BYTES: usize = 64 << 20;

/// Quantities of `run` whose draws, over all chains, fit in
/// [`BLOCK_BYTES`] (at least one).
pub fn block_quantities(run: &RunDraws) -> usize {
    let draws: usize = run.chains.iter().map(|c| c.len()).sum();
    (BLOCK_BYTES / (8 * draws.max(1))).max(1)
}

/// The values of a run's kept draws, by column or by row.
pub trait DrawValues: Sync {
    /// Why values could not be read.
    type Error: std::fmt::Debug + std::fmt::Display;

    /// Calls `row` with the values of each kept draw of chain `k` (all
    /// quantities, in the order of [`RunDraws::names`]), in order.
    fn for_each_row(
        &self,
        run: &RunDraws,
        k: usize,
        row: &mut dyn FnMut(&[f64]),
    ) -> Result<(), Self::Error>;

    /// The draws of each quantity of `which`, one vector per chain:
    /// `out[i][k]` holds the values of quantity `which[i]` at chain `k`'s
    /// kept draws, in order. Gathered row by row, all wanted columns at
    /// once: the values are stored row-major, so a column alone would read
    /// one cache line (for a thousand quantities, one page) per draw. A row
    /// cut short has no draw of the quantities past its end, as in
    /// [`ChainDraws::column`](crate::draws::ChainDraws::column).
    fn columns(&self, run: &RunDraws, which: &[usize]) -> Result<Vec<Vec<Vec<f64>>>, Self::Error> {
        let mut out: Vec<Vec<Vec<f64>>> = which
            .iter()
            .map(|_| Vec::with_capacity(run.chains.len()))
            .collect();
        for (k, chain) in run.chains.iter().enumerate() {
            let mut block: Vec<Vec<f64>> = which
                .iter()
                .map(|_| Vec::with_capacity(chain.len()))
                .collect();
            self.for_each_row(run, k, &mut |row| {
                for (column, &j) in block.iter_mut().zip(which) {
                    if let Some(&v) = row.get(j) {
                        column.push(v);
                    }
                }
            })?;
            for (i, column) in block.into_iter().enumerate() {
                out[i].push(column);
            }
        }
        Ok(out)
    }
}

/// The values held in memory, in each chain's
/// [`values`](crate::draws::ChainDraws::values) (row-major). A chain whose
/// values were left with a sink
/// ([`values_from_row`](crate::draws::ChainDraws::values_from_row)) gives
/// the rows it holds.
#[derive(Debug, Clone, Copy, Default)]
pub struct InMemory;

impl DrawValues for InMemory {
    type Error = Infallible;

    fn for_each_row(
        &self,
        run: &RunDraws,
        k: usize,
        row: &mut dyn FnMut(&[f64]),
    ) -> Result<(), Infallible> {
        let width = run.names.len().max(1);
        if let Some(chain) = run.chains.get(k) {
            chain.values.chunks(width).for_each(row);
        }
        Ok(())
    }
}

/// Reads every chain's values from `values` into memory
/// ([`ChainDraws::values`](crate::draws::ChainDraws::values), from row 0):
/// what a consumer that takes the values from memory needs (the charts of
/// `qnmc run --plot`).
pub fn hold_in_memory<V: DrawValues>(run: &mut RunDraws, values: &V) -> Result<(), V::Error> {
    for k in 0..run.chains.len() {
        let mut held = Vec::with_capacity(run.chains[k].len() * run.names.len());
        values.for_each_row(run, k, &mut |row| held.extend_from_slice(row))?;
        run.chains[k].values = held;
        run.chains[k].values_from_row = 0;
    }
    Ok(())
}

/// The value of a result whose error cannot happen ([`InMemory`]'s).
pub fn infallible<T>(result: Result<T, Infallible>) -> T {
    match result {
        Ok(value) => value,
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draws::ChainDraws;

    fn run() -> RunDraws {
        let chain = |offset: f64| ChainDraws {
            lp: vec![0.0; 3],
            values: (0..9).map(|i| offset + i as f64).collect(),
            ..ChainDraws::default()
        };
        RunDraws {
            names: vec!["a".into(), "b".into(), "c".into()],
            chains: vec![chain(0.0), chain(100.0)],
            ..RunDraws::default()
        }
    }

    #[test]
    fn columns_in_memory_are_those_of_chains_of() {
        let run = run();
        let got = infallible(InMemory.columns(&run, &[2, 0])).clone();
        assert_eq!(got[0], run.chains_of(2));
        assert_eq!(got[1], run.chains_of(0));
        assert_eq!(got[1][1], vec![100.0, 103.0, 106.0]);
    }

    #[test]
    fn rows_in_memory_come_in_order() {
        let run = run();
        let mut rows = Vec::new();
        infallible(InMemory.for_each_row(&run, 1, &mut |r| rows.push(r.to_vec())));
        assert_eq!(
            rows,
            vec![
                vec![100.0, 101.0, 102.0],
                vec![103.0, 104.0, 105.0],
                vec![106.0, 107.0, 108.0]
            ]
        );
    }

    #[test]
    fn a_block_holds_at_most_its_bytes() {
        let mut run = run();
        assert_eq!(block_quantities(&run), BLOCK_BYTES / 48);
        run.chains[0].lp = vec![0.0; BLOCK_BYTES];
        assert_eq!(block_quantities(&run), 1, "at least one quantity");
    }
}
