//! Dense reference implementations.
