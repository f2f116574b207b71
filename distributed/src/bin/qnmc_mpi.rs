//! `qnmc-mpi`: one distributed chain on the MovieLens-shaped synthetic
//! ratings, over MPI (`mpirun -np R qnmc-mpi …`) or, with `--threads R`,
//! over R threads of one process. Rank 0 prints one line: the draws made,
//! a hash of every draw's bits (equal hashes: the same chain), the test
//! RMSE of the last draw, and the bytes rank 0 sent per iteration.
//!
//! ```text
//! qnmc-mpi [--sampler dsgld|psgld|hamcmc] [--memory M] [--step ε]
//!          [--iterations N] [--seed S] [--size tenth|full|U,I,N] [--threads R]
//! ```

use std::process::ExitCode;

use qnmc::StepSizeSchedule;
use qnmc_distributed::{
    Dsgld, Hamcmc, MpiTransport, Psgld, RunRecord, RunSettings, ShardSampler, Transport,
    on_threads, run_chain,
};
use qnmc_host::targets::{GaussianPmf, SyntheticRecipe};

struct Options {
    sampler: String,
    memory: usize,
    step: Option<f64>,
    iterations: u64,
    seed: u64,
    size: String,
    threads: Option<usize>,
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        sampler: "hamcmc".into(),
        memory: 2,
        step: None,
        iterations: 100,
        seed: 1,
        size: "tenth".into(),
        threads: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--sampler" => o.sampler = value,
            "--memory" => o.memory = value.parse().map_err(|e| bad(&e))?,
            "--step" => o.step = Some(value.parse().map_err(|e| bad(&e))?),
            "--iterations" => o.iterations = value.parse().map_err(|e| bad(&e))?,
            "--seed" => o.seed = value.parse().map_err(|e| bad(&e))?,
            "--size" => o.size = value,
            "--threads" => o.threads = Some(value.parse().map_err(|e| bad(&e))?),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(o)
}

fn model(size: &str) -> Result<GaussianPmf, String> {
    let recipe = match size {
        "tenth" => SyntheticRecipe::movielens_1m_tenth(1),
        "full" => SyntheticRecipe::movielens_1m(1),
        custom => {
            let n: Vec<usize> = custom
                .split(',')
                .map(|v| v.parse().map_err(|e| format!("--size {custom}: {e}")))
                .collect::<Result<_, _>>()?;
            let [users, items, ratings] = n[..] else {
                return Err(format!(
                    "--size {custom}: tenth, full or USERS,ITEMS,RATINGS"
                ));
            };
            SyntheticRecipe::new(users, items, ratings, 1)
        }
    };
    let ratings = recipe.build().map_err(|e| e.to_string())?;
    GaussianPmf::new(ratings, GaussianPmf::PAPER_RANK).map_err(|e| e.to_string())
}

/// FNV-1a over the bits of every value.
fn hash(state: &mut u64, values: &[f64]) {
    for v in values {
        for byte in v.to_bits().to_le_bytes() {
            *state = (*state ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// What rank 0 reports: the record, the hash of every draw, the last draw.
struct Outcome {
    record: RunRecord,
    hash: u64,
    last: Vec<f64>,
}

fn go<S: ShardSampler, T: Transport>(
    model: &GaussianPmf,
    mut sampler: S,
    transport: T,
    settings: RunSettings,
) -> Result<Outcome, String> {
    let mut state = 0xcbf2_9ce4_8422_2325u64;
    let mut last = Vec::new();
    let record = run_chain(model, &mut sampler, transport, settings, |_, x| {
        hash(&mut state, x);
        last.clear();
        last.extend_from_slice(x);
    })
    .map_err(|e| e.to_string())?;
    Ok(Outcome {
        record,
        hash: state,
        last,
    })
}

/// The chain on this rank, with the paper's Table 3 settings unless
/// `--step` says otherwise.
fn run<T: Transport>(o: &Options, model: &GaussianPmf, transport: T) -> Result<Outcome, String> {
    let settings = RunSettings {
        iterations: o.iterations,
        seed: o.seed,
        gather_every: 1,
    };
    let e = |e: qnmc_distributed::DistributedError| e.to_string();
    match o.sampler.as_str() {
        "dsgld" => go(
            model,
            Dsgld::new(o.step.unwrap_or(1e-4)).map_err(e)?,
            transport,
            settings,
        ),
        "psgld" => {
            let s = Psgld::new(o.step.unwrap_or(1e-3), 0.9, 5.0).map_err(e)?;
            go(model, s, transport, settings)
        }
        "hamcmc" => {
            let step = StepSizeSchedule::Constant(o.step.unwrap_or(3e-4));
            let s = Hamcmc::new(o.memory, step, 1.0, 100.0).map_err(e)?;
            go(model, s, transport, settings)
        }
        other => Err(format!("--sampler {other}: dsgld, psgld or hamcmc")),
    }
}

fn report(o: &Options, model: &GaussianPmf, ranks: usize, outcome: &Outcome) -> String {
    let ratings = model.ratings();
    let rmse = if outcome.last.is_empty() {
        f64::NAN
    } else {
        let mut p = vec![0.0; ratings.test().len()];
        model.test_predictions(&outcome.last, &mut p);
        p.iter_mut().for_each(|v| *v = ratings.clip(*v));
        ratings.test_rmse(&p)
    };
    let r = &outcome.record;
    let per = |bytes: u64| bytes as f64 / r.draws.max(1) as f64;
    format!(
        "sampler={} ranks={ranks} draws={} hash={:016x} rmse={rmse:.6} block_bytes_per_iteration={:.0} reduce_bytes_per_iteration={:.0} seconds_per_iteration={:.6} failure={}",
        o.sampler,
        r.draws,
        outcome.hash,
        per(r.traffic.blocks),
        per(r.traffic.reduces),
        r.sampler_time.as_secs_f64() / r.draws.max(1) as f64,
        r.failure
            .as_ref()
            .map_or("none".to_string(), |f| f.to_string().replace(' ', "_")),
    )
}

fn main() -> ExitCode {
    let result = parse().and_then(|o| {
        let model = model(&o.size)?;
        let (ranks, outcome) = match o.threads {
            Some(threads) => {
                let outcomes =
                    on_threads(threads, |t| run(&o, &model, t)).map_err(|e| e.to_string())?;
                let first = outcomes.into_iter().next().ok_or("no rank ran")??;
                (threads, Some(first))
            }
            None => {
                let universe = mpi::initialize().ok_or("MPI was already initialised")?;
                let transport = MpiTransport::new(universe.world());
                let (rank, ranks) = (transport.rank(), transport.ranks());
                let outcome = run(&o, &model, transport)?;
                (ranks, (rank == 0).then_some(outcome))
            }
        };
        if let Some(outcome) = outcome {
            println!("{}", report(&o, &model, ranks, &outcome));
        }
        Ok(())
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("qnmc-mpi: {e}");
            ExitCode::FAILURE
        }
    }
}
