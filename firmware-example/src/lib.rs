//! The jobs of the qnmc firmware example, as a `no_std` library so that the
//! firmware binary, its host build and the WebAssembly example share them.
//! See [`job`] and `docs/EMBEDDED.md`.

#![no_std]
#![deny(missing_docs)]

pub mod job;
