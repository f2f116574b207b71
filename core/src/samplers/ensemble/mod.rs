//! HMC-BFGS and MH-BFGS ensemble samplers (Zhang & Sutton 2011) (being written).
