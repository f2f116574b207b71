//! Dense reference implementations for the ensemble samplers (being written).
