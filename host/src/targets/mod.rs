//! Targets (being written).
