//! AMAGOLD (Zhang, Cooper & De Sa 2020, Algorithm 2) and L2MC (being written).
