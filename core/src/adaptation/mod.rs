//! Step-size adaptation: dual averaging (being written).
