//! # qnmc-distributed
//!
//! HAMCMC, PSGLD and DSGLD across processes, as the HAMCMC paper ran them
//! (Şimşekli, Badeau, Cemgil & Richard 2016, §4.3, Fig. 4 and 5): Gaussian
//! matrix factorisation with the ratings cut into B × B blocks, node b
//! keeping the user factors W_b and, while the chain uses part p, the item
//! factors H_{(b+p) mod B}; after each step the blocks of H (with the
//! samplers' per-coordinate history) pass to the nodes the next part needs.
//!
//! Layers, each a file or folder:
//!
//! | module | what |
//! |---|---|
//! | [`transport`] | messages between ranks: one process, or threads |
//! | [`grid`] | which node and rank holds which shard in which part |
//! | [`shard`] | one block's per-coordinate vectors, in slots |
//! | [`cluster`] | one rank's shards: part gradients, noise, sums over shards, block moves |
//! | [`samplers`] | [`Dsgld`], [`Psgld`], [`Hamcmc`] over a cluster |
//! | [`chain`] | [`run_chain`]: a chain from start to end |
//!
//! **Bit for bit at any number of ranks.** A chain's numbers do not depend
//! on where its shards are: each shard's noise has its own stream, each
//! node's gradient is computed in the order of the one-machine model's, and
//! every sum over the vector is one partial per shard, gathered and added
//! in shard order on every rank. One process and four threads give the
//! same draws (the tests check it, at 1, 2 and 4 ranks; MPI is not yet a
//! backend).
//!
//! ```
//! use qnmc_distributed::{Dsgld, RunSettings, on_threads, run_chain};
//! use qnmc_host::targets::{GaussianPmf, SyntheticRecipe};
//!
//! let ratings = SyntheticRecipe::new(40, 30, 800, 3).build().unwrap();
//! let model = GaussianPmf::new(ratings, 3).unwrap();
//! let settings = RunSettings { iterations: 20, seed: 1, gather_every: 20 };
//! // Four ranks on four threads; rank 0 receives the last draw.
//! let last = on_threads(4, |transport| {
//!     let mut sampler = Dsgld::new(1e-3).unwrap();
//!     let mut last = Vec::new();
//!     run_chain(&model, &mut sampler, transport, settings, |_, x| last = x.to_vec()).unwrap();
//!     last
//! })
//! .unwrap();
//! assert_eq!(last[0].len(), (40 + 30) * 3);
//! assert!(last[1].is_empty()); // only rank 0 sees draws
//! ```

pub mod chain;
pub mod cluster;
mod error;
pub mod grid;
pub mod samplers;
pub mod shard;
pub mod transport;

pub use chain::{RunRecord, RunSettings, run_chain};
pub use cluster::{Cluster, Traffic};
pub use error::DistributedError;
pub use grid::NodeGrid;
pub use samplers::{Dsgld, Hamcmc, Psgld, ShardSampler};
pub use transport::{SingleProcess, ThreadTransport, Transport, on_threads};

#[cfg(feature = "mpi")]
pub use transport::MpiTransport;
