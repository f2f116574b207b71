//! Checkpoints and resume, in memory: a run stopped at many points (warm-up
//! and sampling, a checkpoint at the stop or an older one) and continued
//! from its checkpoints ends with the draws of the run that was never
//! stopped, bit for bit, for every family of chain state (NUTS with each
//! metric, HMC's step-size adaptation, QNHMC's memory, an ensemble,
//! AMAGOLD, a minibatch sampler).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::*;
use crate::targets::Funnel;

/// A store in memory: the checkpoints of the run that writes into it, and
/// the stopped run (`earlier`) whose rows it replays. It asks `stop` to end
/// the run at its `stop_at`-th save and, with `freeze`, keeps no later
/// checkpoint (as a run killed at once after a checkpoint would have only
/// that one, the chains having drawn on).
struct MemoryStore {
    /// What each chain's sink saw at its first kept draw: what a chain
    /// file's head is written from.
    heads: Arc<Mutex<HashMap<usize, String>>>,
    saved: Mutex<HashMap<usize, Vec<u8>>>,
    earlier: Option<RunDraws>,
    saves: AtomicUsize,
    stop_at: usize,
    freeze: bool,
    stop: StopFlag,
}

impl MemoryStore {
    fn new(stop_at: usize, freeze: bool, stop: StopFlag) -> Self {
        MemoryStore {
            heads: Arc::default(),
            saved: Mutex::new(HashMap::new()),
            earlier: None,
            saves: AtomicUsize::new(0),
            stop_at,
            freeze,
            stop,
        }
    }
}

impl CheckpointStore for MemoryStore {
    fn load(&self, chain_id: usize) -> Result<Option<Vec<u8>>, SinkError> {
        Ok(self.saved.lock().unwrap().get(&chain_id).cloned())
    }

    fn save(&self, chain_id: usize, bytes: &[u8]) -> Result<(), SinkError> {
        let n = self.saves.fetch_add(1, Ordering::SeqCst) + 1;
        if !(self.freeze && n > self.stop_at) {
            self.saved.lock().unwrap().insert(chain_id, bytes.to_vec());
        }
        if n == self.stop_at {
            self.stop.request(StopReason::Requested);
        }
        Ok(())
    }

    fn replay(
        &self,
        chain_id: usize,
        warmup_rows: usize,
        rows: usize,
        row: &mut dyn FnMut(bool, ReplayedRow<'_>) -> Result<(), SinkError>,
    ) -> Result<(), SinkError> {
        let earlier = self.earlier.as_ref().ok_or("no earlier run")?;
        let c = &earlier.chains[chain_id - 1];
        let q = earlier.names.len();
        // Row i of a chain's kept or saved warm-up draws (same columns).
        macro_rules! row_of {
            ($d:expr, $i:expr) => {{
                let (d, i) = ($d, $i);
                ReplayedRow {
                    lp: d.lp[i],
                    accept_stat: d.accept_stat[i],
                    step_size: d.step_size[i],
                    tree_depth: d.tree_depth.get(i).copied(),
                    n_leapfrog: d.n_leapfrog[i],
                    divergent: d.divergent[i],
                    energy: d.energy.get(i).copied(),
                    values: &d.values[i * q..(i + 1) * q],
                }
            }};
        }
        for i in 0..warmup_rows {
            row(true, row_of!(&c.saved_warmup, i))?;
        }
        for i in 0..rows {
            row(false, row_of!(c, i))?;
        }
        Ok(())
    }

    fn interval(&self) -> Duration {
        Duration::ZERO
    }
}

/// A sink that writes nothing and keeps the checkpoints in its store.
struct StoreOnly<'a>(&'a MemoryStore);

/// Records what the chain's file head is written from, at the first kept
/// draw, and nothing else.
struct Head(Arc<Mutex<HashMap<usize, String>>>);

impl ChainSink for Head {
    fn kept(&mut self, chain: &ChainDraws) -> Result<(), SinkError> {
        if chain.len() == 1 {
            let head = format!(
                "{} {:?} {:?} {} {}",
                chain.warmup_draws,
                chain.adapted_metric,
                chain.restart,
                chain.saved_warmup.len(),
                chain.step_size[0]
            );
            self.0.lock().unwrap().insert(chain.chain_id, head);
        }
        Ok(())
    }
    fn finished(self: Box<Self>, _: &ChainDraws) -> Result<(), SinkError> {
        Ok(())
    }
}

impl DrawSink for StoreOnly<'_> {
    fn open_chain(
        &self,
        _: &RunDraws,
        _: &RunSettings,
        _: &ChainDraws,
    ) -> Result<Box<dyn ChainSink>, SinkError> {
        Ok(Box::new(Head(self.0.heads.clone())))
    }
    fn checkpoints(&self) -> Option<&dyn CheckpointStore> {
        Some(self.0)
    }
}

/// Every draw and count of a chain, floats by their bits (NaN included).
fn fingerprint(c: &ChainDraws) -> String {
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let w = &c.saved_warmup;
    format!(
        "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} | {:?} {:?} {:?} {:?} {:?} {:?} | {} {} {} {:?} {:?}",
        bits(&c.lp),
        bits(&c.accept_stat),
        bits(&c.step_size),
        c.n_leapfrog,
        c.divergent,
        c.tree_depth,
        bits(&c.energy),
        bits(&c.values),
        bits(&w.lp),
        bits(&w.step_size),
        w.n_leapfrog,
        w.tree_depth,
        bits(&w.energy),
        bits(&w.values),
        c.warmup_draws,
        c.iterations,
        c.gradient_evaluations,
        c.adapted_metric,
        c.restart,
    )
}

/// Stops a run at its `stop_at`-th checkpoint (with `freeze`, resuming
/// from an older one than the stop's), continues it from its
/// checkpoints, and compares with the run never stopped.
fn stop_and_resume(kind: SamplerKind, settings: &RunSettings, stop_at: usize, freeze: bool) {
    let model = Funnel::new(3).unwrap();
    let never = MemoryStore::new(usize::MAX, false, StopFlag::new());
    let whole = run_into(
        &model,
        kind,
        settings,
        &Progress::hidden(),
        Some(&StoreOnly(&never)),
    )
    .unwrap();
    let stop = StopFlag::new();
    let first = MemoryStore::new(stop_at, freeze, stop.clone());
    let stopped = run_into(
        &model,
        kind,
        settings,
        &Progress::hidden().with_stop(stop),
        Some(&StoreOnly(&first)),
    )
    .unwrap();
    let case = format!("{kind} stop at checkpoint {stop_at} freeze {freeze}");
    assert!(
        stopped.interrupted.is_some(),
        "{case}: the run was not stopped"
    );
    let mut second = MemoryStore::new(usize::MAX, false, StopFlag::new());
    second.saved = Mutex::new(first.saved.into_inner().unwrap());
    assert!(!second.saved.lock().unwrap().is_empty(), "{case}");
    second.earlier = Some(stopped);
    let resumed = run_into(
        &model,
        kind,
        settings,
        &Progress::hidden(),
        Some(&StoreOnly(&second)),
    )
    .unwrap();
    assert!(resumed.interrupted.is_none(), "{case}");
    for (a, b) in whole.chains.iter().zip(&resumed.chains) {
        assert_eq!(
            fingerprint(a),
            fingerprint(b),
            "{case}, chain {}",
            a.chain_id
        );
    }
    assert_eq!(
        *never.heads.lock().unwrap(),
        *second.heads.lock().unwrap(),
        "{case}: the chains' heads"
    );
}

fn settings(kind: SamplerKind) -> RunSettings {
    let mut s = RunSettings::for_sampler(kind);
    s.chains = 3;
    s.warmup = 120;
    s.draws = 150;
    s.seed = 29;
    s
}

/// Stops within the first iterations, across the warm-up's end and in
/// sampling (each chain checkpoints every iteration here, so the n-th
/// save is about iteration n / 3).
const STOPS: [usize; 4] = [2, 200, 370, 600];

#[test]
fn nuts_continues_bit_for_bit_from_any_checkpoint() {
    for metric in [MetricKind::Lbfgs, MetricKind::Diagonal, MetricKind::Dense] {
        let mut s = settings(SamplerKind::Nuts);
        s.metric = Some(metric);
        for (i, stop_at) in STOPS.into_iter().enumerate() {
            stop_and_resume(SamplerKind::Nuts, &s, stop_at, i % 2 == 1);
        }
    }
}

#[test]
fn saved_warmup_and_thinning_continue_bit_for_bit() {
    let mut s = settings(SamplerKind::Nuts);
    s.save_warmup = true;
    s.thin = 2;
    for stop_at in STOPS {
        stop_and_resume(SamplerKind::Nuts, &s, stop_at, false);
        stop_and_resume(SamplerKind::Nuts, &s, stop_at, true);
    }
}

#[test]
fn every_family_of_chain_state_continues_bit_for_bit() {
    for kind in [
        SamplerKind::Hmc,
        SamplerKind::Qnhmc,
        SamplerKind::HmcBfgs,
        SamplerKind::Amagold,
        SamplerKind::Sgld,
        SamplerKind::Hamcmc,
    ] {
        for (i, stop_at) in STOPS.into_iter().enumerate() {
            stop_and_resume(kind, &settings(kind), stop_at, i % 2 == 0);
        }
    }
}

/// A checkpoint restored into another run (here: another seed) is
/// refused with an error naming the chain, not continued.
#[test]
fn a_checkpoint_of_another_run_is_refused() {
    let model = Funnel::new(3).unwrap();
    let kind = SamplerKind::Hmc;
    let stop = StopFlag::new();
    let first = MemoryStore::new(50, false, stop.clone());
    let stopped = run_into(
        &model,
        kind,
        &settings(kind),
        &Progress::hidden().with_stop(stop),
        Some(&StoreOnly(&first)),
    )
    .unwrap();
    let mut second = MemoryStore::new(usize::MAX, false, StopFlag::new());
    second.saved = Mutex::new(first.saved.into_inner().unwrap());
    second.earlier = Some(stopped);
    let mut other = settings(kind);
    other.seed += 1;
    let e = run_into(
        &model,
        kind,
        &other,
        &Progress::hidden(),
        Some(&StoreOnly(&second)),
    )
    .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("cannot continue from its checkpoint") && text.contains("another run"),
        "{text}"
    );
}
