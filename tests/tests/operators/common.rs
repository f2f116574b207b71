//! Helpers shared by the operator modules: the random streams the test
//! problems are drawn from.

use nalgebra::DVector;
use qnmc::Real;
use qnmc::random::standard_normal;
use rand_core::SeedableRng;
use rand_xorshift::XorShiftRng;

pub fn rng(seed: u64) -> XorShiftRng {
    XorShiftRng::seed_from_u64(seed)
}

pub fn normal(r: &mut XorShiftRng) -> f64 {
    standard_normal::<f64, _>(r)
}

pub fn uniform(r: &mut XorShiftRng) -> f64 {
    <f64 as Real>::uniform_open_closed(r)
}

pub fn from_array<T: Real, const D: usize>(v: &[T; D]) -> DVector<f64> {
    DVector::from_iterator(D, v.iter().map(|x| x.to_f64()))
}
