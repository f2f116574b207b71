//! Vector kernels on fixed-size arrays. Plain loops in index order: no fused
//! multiply-add, no reordering, so results are identical on every target.
//!
//! Besides dot (one accumulator, or [`dot_wide`]'s four lanes in a fixed
//! order), axpy, scale, difference and norm, the hot paths get fused
//! one-pass forms that keep the bits of the separate loops: several
//! [`dot_wide`]s against one vector (`dot_wide_many`), storing a vector
//! while taking those dots (`store_and_dot_wide_many`), several axpys then
//! a componentwise scale (`axpy_many_then_scale`), and the leapfrog's
//! closing half kick with its kinetic energy
//! ([`half_kick_and_kinetic_energy`]). One pass over memory instead of two
//! or more is where their speed comes from.

use crate::kernels::{at_length, vector_kernel};
use crate::real::Real;

/// Σ aᵢ bᵢ.
#[inline]
pub fn dot<T: Real, const D: usize>(a: &[T; D], b: &[T; D]) -> T {
    let mut acc = T::ZERO;
    for i in 0..D {
        acc += a[i] * b[i];
    }
    acc
}

/// Number of independent partial sums of [`dot_wide`] and [`dot_wide_slice`].
const DOT_WIDE_LANES: usize = 4;

/// Σ aᵢ bᵢ with 4 independent partial sums, in a fixed
/// order that is the same on every target:
///
/// ```text
/// accₖ = Σ_{i ≡ k (mod 4)} aᵢ bᵢ   (each in increasing i, no FMA)
/// result = (acc₀ + acc₁) + (acc₂ + acc₃)
/// ```
///
/// The four sums do not wait for each other, so the loop runs several times
/// faster than [`dot`]'s single chain on a pipelined or SIMD processor, and
/// because the order is written down (not left to the compiler) an `f32` or
/// `f64` result is bit for bit the same on x86-64, Cortex-M, RISC-V and
/// wasm32. It is a different order from [`dot`], so the two can differ in the
/// last bits. Every product passes through at most n = ⌈D/4⌉ + 2 roundings,
/// so |error| ≤ γₙ Σ|aᵢbᵢ| with γₙ = n·u/(1 − n·u), u = ε/2 (ε =
/// [`Real::EPSILON`]): within the D·ε·Σ|aᵢbᵢ| of the sequential sum for
/// D ≥ 2 (for D = 1 the result is the rounded product). Integer-valued inputs
/// whose products and partial sums stay below 2^24 (`f32`) or 2^53 (`f64`) give
/// the exact result.
///
/// ```
/// use qnmc::kernels::dot_wide;
/// let a = [1.0f64, 2.0, 3.0, 4.0, 5.0];
/// assert_eq!(dot_wide(&a, &a), 55.0);
/// ```
#[inline]
pub fn dot_wide<T: Real, const D: usize>(a: &[T; D], b: &[T; D]) -> T {
    dot_wide_slice(a, b)
}

vector_kernel! {
/// [`dot_wide`] on slices, in the same order. Slices of different lengths are
/// summed over the shorter length (the extra entries of the longer one are
/// ignored; nothing panics).
#[inline]
pub fn dot_wide_slice[T: Real](a: &[T], b: &[T]) -> T
where length(a.len().min(b.len()))
{
    let mut acc = [T::ZERO; DOT_WIDE_LANES];
    let (chunks_a, chunks_b) = (
        a.chunks_exact(DOT_WIDE_LANES),
        b.chunks_exact(DOT_WIDE_LANES),
    );
    // Full blocks of four first: entry 4q + k goes to accₖ.
    let blocks = chunks_a.len().min(chunks_b.len());
    for (x, y) in chunks_a.zip(chunks_b) {
        for k in 0..DOT_WIDE_LANES {
            acc[k] += x[k] * y[k];
        }
    }
    // The tail (fewer than four entries, or the rest of a longer slice) keeps
    // the same rule: entry i goes to acc_{i mod 4}, in increasing i.
    let start = blocks * DOT_WIDE_LANES;
    let tail_a = a.get(start..).unwrap_or(&[]);
    let tail_b = b.get(start..).unwrap_or(&[]);
    for (k, (x, y)) in tail_a.iter().zip(tail_b).enumerate() {
        acc[k % DOT_WIDE_LANES] += *x * *y;
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}
}

/// [`dot_wide`] of every `a[k]` with the same `x`, in one pass: entry k of the
/// result is bit for bit `dot_wide(a[k], x)` (each sum keeps its own four
/// lanes in the same order). K sums of four lanes keep 4K additions in flight
/// where K separate calls would each wait on four. Only the first `len`
/// entries (at most D) take part: bit for bit the same sums on arrays of
/// length `len`.
#[inline]
pub(crate) fn dot_wide_many<T: Real, const D: usize, const K: usize>(
    a: [&[T; D]; K],
    x: &[T; D],
    len: usize,
) -> [T; K] {
    dot_wide_lanes(a, x, len.min(D)).map(|l| (l[0] + l[1]) + (l[2] + l[3]))
}

vector_kernel! {
/// The four lane sums of each [`dot_wide`] of [`dot_wide_many`]. Not inlined:
/// returned through memory, lanes (0, 1) and (2, 3) are neighbours, so the
/// vectoriser packs them as they are loaded; inlined into the final
/// (acc₀ + acc₁) + (acc₂ + acc₃) it packs lanes (0, 2) and (1, 3) instead and
/// shuffles every block (about twice as slow, the same bits).
#[inline(never)]
fn dot_wide_lanes[T: Real, const D: usize, const K: usize](
    a: [&[T; D]; K],
    x: &[T; D],
    len: usize,
) -> [[T; DOT_WIDE_LANES]; K]
where length(len)
{
    at_length!(len, D, |len| {
        let mut acc = [[T::ZERO; DOT_WIDE_LANES]; K];
        let blocks = len / DOT_WIDE_LANES;
        for q in 0..blocks {
            let base = q * DOT_WIDE_LANES;
            for (acc_k, a_k) in acc.iter_mut().zip(a) {
                for l in 0..DOT_WIDE_LANES {
                    acc_k[l] += a_k[base + l] * x[base + l];
                }
            }
        }
        for i in blocks * DOT_WIDE_LANES..len {
            for (acc_k, a_k) in acc.iter_mut().zip(a) {
                acc_k[i % DOT_WIDE_LANES] += a_k[i] * x[i];
            }
        }
        acc
    })
}
}

/// `x` ← (`load(i)` for every i) and [`dot_wide_many`]`(a, x)` in the same
/// pass: bit for bit storing x first and then taking the dot products, one
/// pass over memory instead of two. Only the first `len` entries (at most D)
/// are loaded and summed; the rest of `x` is left as it was.
#[inline]
pub(crate) fn store_and_dot_wide_many<T: Real, const D: usize, const K: usize>(
    a: [&[T; D]; K],
    load: impl Fn(usize) -> T,
    x: &mut [T; D],
    len: usize,
) -> [T; K] {
    store_and_dot_wide_lanes(a, load, x, len.min(D)).map(|l| (l[0] + l[1]) + (l[2] + l[3]))
}

vector_kernel! {
/// The lanes of [`store_and_dot_wide_many`] (not inlined, as
/// [`dot_wide_lanes`]).
#[inline(never)]
fn store_and_dot_wide_lanes[T: Real, const D: usize, const K: usize](
    a: [&[T; D]; K],
    load: impl Fn(usize) -> T,
    x: &mut [T; D],
    len: usize,
) -> [[T; DOT_WIDE_LANES]; K]
where length(len)
{
    at_length!(len, D, |len| {
        let mut acc = [[T::ZERO; DOT_WIDE_LANES]; K];
        let blocks = len / DOT_WIDE_LANES;
        for q in 0..blocks {
            let base = q * DOT_WIDE_LANES;
            let mut block = [T::ZERO; DOT_WIDE_LANES];
            for (l, b) in block.iter_mut().enumerate() {
                *b = load(base + l);
                x[base + l] = *b;
            }
            for (acc_k, a_k) in acc.iter_mut().zip(a) {
                for l in 0..DOT_WIDE_LANES {
                    acc_k[l] += a_k[base + l] * block[l];
                }
            }
        }
        for i in blocks * DOT_WIDE_LANES..len {
            let xi = load(i);
            x[i] = xi;
            for (acc_k, a_k) in acc.iter_mut().zip(a) {
                acc_k[i % DOT_WIDE_LANES] += a_k[i] * xi;
            }
        }
        acc
    })
}
}

vector_kernel! {
/// y ← (y + Σₖ αₖ xₖ) ∘ w: bit for bit [`axpy_many`] followed by the
/// componentwise product, in one pass, on the first `len` entries (at most
/// D; the rest of `y` is left as it was).
#[inline]
pub(crate) fn axpy_many_then_scale[T: Real, const D: usize, const K: usize](
    alpha: [T; K],
    x: [&[T; D]; K],
    w: &[T; D],
    y: &mut [T; D],
    len: usize,
)
where length(len)
{
    at_length!(len, D, |len| {
        for i in 0..len {
            let mut yi = y[i];
            for k in 0..K {
                yi += alpha[k] * x[k][i];
            }
            y[i] = yi * w[i];
        }
    })
}
}

/// The closing half kick of a leapfrog step and its kinetic energy in one
/// pass: p ← p − h g, v ← v − h w, returning ½ p·v summed as [`dot_wide`]
/// (bit for bit the two loops followed by `0.5 * dot_wide(p, v)`).
#[inline]
pub fn half_kick_and_kinetic_energy<T: Real, const D: usize>(
    h: T,
    gradient: &[T; D],
    gradient_velocity: &[T; D],
    momentum: &mut [T; D],
    velocity: &mut [T; D],
) -> T {
    half_kick_and_kinetic_energy_leading(h, gradient, gradient_velocity, momentum, velocity, D)
}

/// [`half_kick_and_kinetic_energy`] on the first `len` entries (at most D):
/// bit for bit the same on arrays of length `len`; the rest of `momentum`
/// and `velocity` is left as it was.
#[inline]
pub(crate) fn half_kick_and_kinetic_energy_leading<T: Real, const D: usize>(
    h: T,
    gradient: &[T; D],
    gradient_velocity: &[T; D],
    momentum: &mut [T; D],
    velocity: &mut [T; D],
    len: usize,
) -> T {
    let acc = half_kick_lanes(
        h,
        gradient,
        gradient_velocity,
        momentum,
        velocity,
        len.min(D),
    );
    T::HALF * ((acc[0] + acc[1]) + (acc[2] + acc[3]))
}

vector_kernel! {
/// The kick of [`half_kick_and_kinetic_energy`] and the four lanes of p·v
/// (not inlined, as [`dot_wide_lanes`]).
#[inline(never)]
fn half_kick_lanes[T: Real, const D: usize](
    h: T,
    gradient: &[T; D],
    gradient_velocity: &[T; D],
    momentum: &mut [T; D],
    velocity: &mut [T; D],
    len: usize,
) -> [T; DOT_WIDE_LANES]
where length(len)
{
    at_length!(len, D, |len| {
        let mut acc = [T::ZERO; DOT_WIDE_LANES];
        let blocks = len / DOT_WIDE_LANES;
        for q in 0..blocks {
            let base = q * DOT_WIDE_LANES;
            for l in 0..DOT_WIDE_LANES {
                let i = base + l;
                let p = momentum[i] - h * gradient[i];
                let v = velocity[i] - h * gradient_velocity[i];
                momentum[i] = p;
                velocity[i] = v;
                acc[l] += p * v;
            }
        }
        for i in blocks * DOT_WIDE_LANES..len {
            let p = momentum[i] - h * gradient[i];
            let v = velocity[i] - h * gradient_velocity[i];
            momentum[i] = p;
            velocity[i] = v;
            acc[i % DOT_WIDE_LANES] += p * v;
        }
        acc
    })
}
}

vector_kernel! {
/// y ← y + Σₖ αₖ xₖ, adding the terms to each yᵢ in order k = 0, 1, …: bit
/// for bit the K calls `axpy(α₀, x₀, y)`, `axpy(α₁, x₁, y)`, … in one pass
/// over y, on its first `len` entries (at most D; the rest is left as it was).
#[inline]
pub(crate) fn axpy_many[T: Real, const D: usize, const K: usize](
    alpha: [T; K],
    x: [&[T; D]; K],
    y: &mut [T; D],
    len: usize,
)
where length(len)
{
    at_length!(len, D, |len| {
        for i in 0..len {
            let mut yi = y[i];
            for k in 0..K {
                yi += alpha[k] * x[k][i];
            }
            y[i] = yi;
        }
    })
}
}

/// y ← y + α x.
#[inline]
pub fn axpy<T: Real, const D: usize>(alpha: T, x: &[T; D], y: &mut [T; D]) {
    for i in 0..D {
        y[i] += alpha * x[i];
    }
}

/// y ← y + α x over the first `len` entries (at most D); the rest of `y` is
/// left as it is. Bit for bit [`axpy`] on those entries.
#[inline]
pub(crate) fn axpy_leading<T: Real, const D: usize>(
    alpha: T,
    x: &[T; D],
    y: &mut [T; D],
    len: usize,
) {
    at_length!(len, D, |len| {
        for i in 0..len {
            y[i] += alpha * x[i];
        }
    })
}

/// Σ aᵢ bᵢ over the first `len` entries (at most D), in [`dot`]'s order: bit
/// for bit `dot(a, b)` when the entries from `len` on are zero.
#[inline]
pub(crate) fn dot_leading<T: Real, const D: usize>(a: &[T; D], b: &[T; D], len: usize) -> T {
    at_length!(len, D, |len| {
        let mut acc = T::ZERO;
        for i in 0..len {
            acc += a[i] * b[i];
        }
        acc
    })
}

/// x ← α x.
#[inline]
pub fn scale<T: Real, const D: usize>(alpha: T, x: &mut [T; D]) {
    for v in x.iter_mut() {
        *v *= alpha;
    }
}

/// out ← a − b.
#[inline]
pub fn difference<T: Real, const D: usize>(a: &[T; D], b: &[T; D], out: &mut [T; D]) {
    for i in 0..D {
        out[i] = a[i] - b[i];
    }
}

/// out ← a − b over the first `len` entries (at most D); the rest of `out`
/// is left as it is. Bit for bit [`difference`] on those entries.
#[inline]
pub(crate) fn difference_leading<T: Real, const D: usize>(
    a: &[T; D],
    b: &[T; D],
    out: &mut [T; D],
    len: usize,
) {
    at_length!(len, D, |len| {
        for i in 0..len {
            out[i] = a[i] - b[i];
        }
    })
}

/// Euclidean norm √(xᵀx).
#[inline]
pub fn norm<T: Real, const D: usize>(x: &[T; D]) -> T {
    dot(x, x).sqrt()
}

/// `true` when every entry of `x` from index `n` on is zero (a vector that a
/// sampler of run-time dimension n may hold).
#[inline]
pub(crate) fn zero_from<T: Real>(x: &[T], n: usize) -> bool {
    x.get(n..).unwrap_or(&[]).iter().all(|v| *v == T::ZERO)
}

/// `true` when every entry is finite.
#[inline]
pub fn all_finite<T: Real>(x: &[T]) -> bool {
    x.iter().all(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_match_hand_values() {
        let a = [1.0f64, 2.0, 3.0];
        let b = [4.0f64, -5.0, 6.0];
        assert_eq!(dot(&a, &b), 12.0);
        let mut y = b;
        axpy(2.0, &a, &mut y);
        assert_eq!(y, [6.0, -1.0, 12.0]);
        let mut d = [0.0; 3];
        difference(&a, &b, &mut d);
        assert_eq!(d, [-3.0, 7.0, -3.0]);
        scale(0.5, &mut d);
        assert_eq!(d, [-1.5, 3.5, -1.5]);
        assert_eq!(norm(&[3.0f32, 4.0]), 5.0);
        assert!(all_finite(&a));
        assert!(!all_finite(&[1.0, f64::NAN]));
        assert!(!all_finite(&[1.0, f64::INFINITY]));
    }

    /// The fused kernels give the bits of the single ones, at every length
    /// mod 4.
    fn fused_kernels_match<const D: usize>() {
        let v = |seed: f64| -> [f64; D] {
            core::array::from_fn(|i| {
                ((i * 7919 + 31) % 113) as f64 / 17.0 - seed + 0.1 / (1.0 + i as f64)
            })
        };
        let (a, b, c, x) = (v(0.1), v(1.3), v(2.9), v(4.2));
        let many = dot_wide_many([&a, &b, &c], &x, D);
        assert_eq!(many[0].to_bits(), dot_wide(&a, &x).to_bits());
        assert_eq!(many[1].to_bits(), dot_wide(&b, &x).to_bits());
        assert_eq!(many[2].to_bits(), dot_wide(&c, &x).to_bits());
        let mut one = x;
        axpy(0.3, &a, &mut one);
        axpy(-1.7, &b, &mut one);
        axpy(2.1, &c, &mut one);
        let mut fused = x;
        axpy_many([0.3, -1.7, 2.1], [&a, &b, &c], &mut fused, D);
        assert_eq!(one.map(f64::to_bits), fused.map(f64::to_bits));

        // Scale, then dot: x = w ∘ b stored and dotted in one pass.
        let w = v(-0.7);
        let mut stored = [0.0; D];
        let many = store_and_dot_wide_many([&a, &c], |i| w[i] * b[i], &mut stored, D);
        let scaled: [f64; D] = core::array::from_fn(|i| w[i] * b[i]);
        assert_eq!(stored.map(f64::to_bits), scaled.map(f64::to_bits));
        assert_eq!(many[0].to_bits(), dot_wide(&a, &scaled).to_bits());
        assert_eq!(many[1].to_bits(), dot_wide(&c, &scaled).to_bits());

        // axpys, then the componentwise product.
        let mut fused = x;
        axpy_many_then_scale([0.3, -1.7, 2.1], [&a, &b, &c], &w, &mut fused, D);
        let one: [f64; D] = core::array::from_fn(|i| one[i] * w[i]);
        assert_eq!(one.map(f64::to_bits), fused.map(f64::to_bits));

        // The half kick and ½ p·v.
        let (mut p, mut q) = (a, b);
        let kinetic = half_kick_and_kinetic_energy(0.37, &c, &x, &mut p, &mut q);
        let (mut p_one, mut q_one) = (a, b);
        axpy(-0.37, &c, &mut p_one);
        axpy(-0.37, &x, &mut q_one);
        assert_eq!(p.map(f64::to_bits), p_one.map(f64::to_bits));
        assert_eq!(q.map(f64::to_bits), q_one.map(f64::to_bits));
        assert_eq!(
            kinetic.to_bits(),
            (0.5 * dot_wide(&p_one, &q_one)).to_bits()
        );
    }

    #[test]
    fn fused_kernels_match_the_single_ones() {
        fused_kernels_match::<0>();
        fused_kernels_match::<1>();
        fused_kernels_match::<6>();
        fused_kernels_match::<7>();
        fused_kernels_match::<13>();
        fused_kernels_match::<100>();
    }

    /// On the first `N` entries of length-`D` arrays (the rest zero, as a
    /// sampler with a run-time dimension keeps them) every fused kernel gives
    /// the bits of the same kernel on length-`N` arrays, and leaves the
    /// entries from `N` on as they were.
    #[cfg(feature = "runtime-dimension")]
    fn leading_kernels_match<const N: usize, const D: usize>() {
        let short = |seed: f64| -> [f64; N] {
            core::array::from_fn(|i| ((i * 7919 + 31) % 113) as f64 / 17.0 - seed)
        };
        let long =
            |x: &[f64; N]| -> [f64; D] { core::array::from_fn(|i| if i < N { x[i] } else { 0.0 }) };
        let (a, b, c, x) = (short(0.1), short(1.3), short(2.9), short(4.2));
        let (la, lb, lc, lx) = (long(&a), long(&b), long(&c), long(&x));
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();

        let many = dot_wide_many([&a, &b], &x, N);
        let leading = dot_wide_many([&la, &lb], &lx, N);
        assert_eq!(bits(&many), bits(&leading));

        let mut y = c;
        axpy_many([0.3, -1.7], [&a, &b], &mut y, N);
        let mut ly = long(&c);
        ly[N..].fill(9.0);
        axpy_many([0.3, -1.7], [&la, &lb], &mut ly, N);
        assert_eq!(bits(&y), bits(&ly[..N]));
        assert!(ly[N..].iter().all(|&v| v == 9.0));

        let mut y = c;
        axpy_many_then_scale([0.3, -1.7], [&a, &b], &x, &mut y, N);
        let mut ly = long(&c);
        ly[N..].fill(9.0);
        axpy_many_then_scale([0.3, -1.7], [&la, &lb], &lx, &mut ly, N);
        assert_eq!(bits(&y), bits(&ly[..N]));
        assert!(ly[N..].iter().all(|&v| v == 9.0));

        let mut stored = [0.0; N];
        let many = store_and_dot_wide_many([&a, &b], |i| x[i] * c[i], &mut stored, N);
        let mut lstored = [9.0; D];
        let leading = store_and_dot_wide_many([&la, &lb], |i| lx[i] * lc[i], &mut lstored, N);
        assert_eq!(bits(&many), bits(&leading));
        assert_eq!(bits(&stored), bits(&lstored[..N]));
        assert!(lstored[N..].iter().all(|&v| v == 9.0));

        let (mut p, mut q) = (a, b);
        let kinetic = half_kick_and_kinetic_energy(0.37, &c, &x, &mut p, &mut q);
        let (mut lp, mut lq) = (la, lb);
        let leading = half_kick_and_kinetic_energy_leading(0.37, &lc, &lx, &mut lp, &mut lq, N);
        assert_eq!(kinetic.to_bits(), leading.to_bits());
        assert_eq!(bits(&p), bits(&lp[..N]));
        assert_eq!(bits(&q), bits(&lq[..N]));
    }

    #[test]
    #[cfg(feature = "runtime-dimension")]
    fn kernels_on_a_leading_length_match_that_length() {
        leading_kernels_match::<1, 8>();
        leading_kernels_match::<5, 8>();
        leading_kernels_match::<6, 7>();
        leading_kernels_match::<13, 64>();
        leading_kernels_match::<37, 40>();
        leading_kernels_match::<100, 100>();
    }

    /// The definition of [`dot_wide`], written out term by term.
    fn dot_wide_by_definition<T: Real>(a: &[T], b: &[T]) -> T {
        let mut acc = [T::ZERO; 4];
        let mut i = 0;
        while i < a.len() && i < b.len() {
            acc[i % 4] += a[i] * b[i];
            i += 1;
        }
        (acc[0] + acc[1]) + (acc[2] + acc[3])
    }

    /// Integer-valued inputs: every partial sum is exact, so the result is.
    #[test]
    fn dot_wide_is_exact_on_integers() {
        let a: [f64; 13] = core::array::from_fn(|i| i as f64 + 1.0);
        let b: [f64; 13] = core::array::from_fn(|i| if i % 3 == 0 { -2.0 } else { 5.0 });
        let exact: f64 = (0..13).map(|i| a[i] * b[i]).sum();
        assert_eq!(dot_wide(&a, &b), exact);
        assert_eq!(dot_wide(&a, &b), dot(&a, &b));
        let af: [f32; 13] = core::array::from_fn(|i| a[i] as f32);
        let bf: [f32; 13] = core::array::from_fn(|i| b[i] as f32);
        assert_eq!(dot_wide(&af, &bf) as f64, exact);
        for d in 0..=12 {
            assert_eq!(
                dot_wide_slice(&a[..d], &b[..d]),
                dot_wide_slice(&b[..d], &a[..d])
            );
            let partial: f64 = (0..d).map(|i| a[i] * b[i]).sum();
            assert_eq!(dot_wide_slice(&a[..d], &b[..d]), partial, "D = {d}");
        }
        assert_eq!(dot_wide::<f64, 0>(&[], &[]), 0.0);
    }

    /// Reference values (exact sums of the stored f64 products, rounded once,
    /// computed with rational arithmetic), the bound D·ε·Σ|aᵢbᵢ|, and the bits
    /// the fixed order must give on every target.
    #[test]
    fn dot_wide_reference_table() {
        // (a, b, exact Σ aᵢbᵢ rounded to f64, Σ|aᵢbᵢ|, bits of dot_wide in f64)
        let cancelling: ([f64; 9], [f64; 9]) = (
            [1e16, 1.0, -1e16, 1.0, 3.0, 0.5, -2.25, 7.0, 0.001],
            [1.0, 1.0, 1.0, 1.0, 0.1, 0.3, 0.7, -0.9, 1000.0],
        );
        // The order is visible here: 4 lanes give −6, one chain −5.425, exact −4.425.
        let w = dot_wide(&cancelling.0, &cancelling.1);
        assert_eq!(w.to_bits(), 0xc018_0000_0000_0000);
        assert_eq!(dot(&cancelling.0, &cancelling.1), -5.425);
        assert!((w - -4.425).abs() <= 9.0 * f64::EPSILON * 2.0000000000000012e16);

        let a11 = [
            -0.45000000000000007,
            -0.35000000000000003,
            -0.25,
            -0.15000000000000002,
            -0.050000000000000044,
            0.050000000000000044,
            0.15000000000000002,
            0.25,
            0.35,
            0.44999999999999996,
            0.55,
        ];
        let b11 = [
            0.3333333333333333,
            0.25,
            0.2,
            0.16666666666666666,
            0.14285714285714285,
            0.125,
            0.1111111111111111,
            0.1,
            0.09090909090909091,
            0.08333333333333333,
            0.07692307692307693,
        ];
        let a7 = [
            1.0,
            -1.1428571428571428,
            1.2857142857142856,
            -1.4285714285714286,
            1.5714285714285714,
            -1.7142857142857144,
            1.8571428571428572,
        ];
        let b7 = [3.3, 1.65, 0.825, 0.4125, 0.20625, 0.103125, 0.0515625];
        let table: [(&[f64], &[f64], f64, u64); 2] = [
            (&a11, &b11, -0.16010031635031638, 0xbfc4_7e2a_cb66_e4fb),
            (&a7, &b7, 2.1287946428571427, 0x4001_07c5_7c57_c57c),
        ];
        for (a, b, exact, bits) in table {
            let w = dot_wide_slice(a, b);
            assert_eq!(w.to_bits(), bits, "{a:?}");
            assert_eq!(w.to_bits(), dot_wide_by_definition(a, b).to_bits());
            let abs: f64 = a.iter().zip(b).map(|(x, y)| (x * y).abs()).sum();
            let bound = a.len() as f64 * f64::EPSILON * abs;
            assert!((w - exact).abs() <= bound, "{w} vs {exact}");
        }
        // The same inputs rounded to f32: reference = the f64 sum of the exact
        // f32 products (error ~1e-16, far below the f32 bound); fixed bits too.
        let a7f: [f32; 7] = core::array::from_fn(|i| a7[i] as f32);
        let b7f: [f32; 7] = core::array::from_fn(|i| b7[i] as f32);
        let w = dot_wide(&a7f, &b7f);
        assert_eq!(w.to_bits(), 0x4008_3e2c);
        let exact: f64 = (0..7).map(|i| a7f[i] as f64 * b7f[i] as f64).sum();
        let abs: f64 = (0..7).map(|i| (a7f[i] as f64 * b7f[i] as f64).abs()).sum();
        assert!((w as f64 - exact).abs() <= 7.0 * f32::EPSILON as f64 * abs);
        let a11f: [f32; 11] = core::array::from_fn(|i| a11[i] as f32);
        let b11f: [f32; 11] = core::array::from_fn(|i| b11[i] as f32);
        assert_eq!(dot_wide(&a11f, &b11f).to_bits(), 0xbe23_f157);
    }

    /// Array and slice versions agree with the written-out definition for every
    /// length, and unequal slices are summed over the shorter one.
    #[test]
    fn dot_wide_follows_its_definition_at_every_length() {
        let a: [f64; 23] = core::array::from_fn(|i| 1.0 / (i as f64 + 0.7) - 0.31 * i as f64);
        let b: [f64; 23] = core::array::from_fn(|i| (i as f64 * 0.9).exp() / 1e3 - 0.5);
        for d in 0..=23 {
            let w = dot_wide_slice(&a[..d], &b[..d]);
            assert_eq!(
                w.to_bits(),
                dot_wide_by_definition(&a[..d], &b[..d]).to_bits()
            );
            assert_eq!(dot_wide_slice(&a, &b[..d]).to_bits(), w.to_bits());
            assert_eq!(dot_wide_slice(&a[..d], &b).to_bits(), w.to_bits());
        }
        let (a5, b5): ([f32; 5], [f32; 5]) = ([0.1, 0.2, 0.3, 0.4, 0.5], [5.0, 4.0, 3.0, 2.0, 1.0]);
        assert_eq!(
            dot_wide(&a5, &b5).to_bits(),
            dot_wide_by_definition(&a5, &b5).to_bits()
        );
        assert!(dot_wide(&[f64::NAN, 1.0], &[1.0, 1.0]).is_nan());
    }
}
