//! Dense reference implementations for the recipe samplers (being written).
