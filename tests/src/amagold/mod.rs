//! Dense reference implementations for the amagold samplers (being written).
