//! The operators of [`LbfgsMemory`] built on its product-form factors
//! (`ProductFactors`, `factors.rs`: the formulas, the compact form and its
//! round-off): S z, Sᵀz, C z, Cᵀz, B v = C(Cᵀv) and log det H, each in
//! O(mD + m²). They live apart from `factors.rs` so that the memory
//! (`memory.rs`, which holds the factors) and the factors import each other
//! in one direction only: memory → factors, and this file → both.

use super::factors::Coefficients;
use super::memory::LbfgsMemory;
use crate::kernels::{at_length, axpy_leading};
use crate::real::Real;

/// rows[k]ᵀz over the first `len` entries (at most D) for k < K in one pass
/// over z (z read once per entry), each sum bit for bit
/// [`dot`](crate::kernels::dot)`(rows[k], z)` when the entries from `len` on
/// are zero: the K sums are independent chains.
#[inline]
fn dots_with<T: Real, const D: usize, const K: usize>(
    rows: [&[T; D]; K],
    z: &[T; D],
    len: usize,
) -> [T; K] {
    at_length!(len, D, |len| {
        let mut acc = [T::ZERO; K];
        for i in 0..len {
            let zi = z[i];
            for k in 0..K {
                acc[k] += rows[k][i] * zi;
            }
        }
        acc
    })
}

/// rowᵢᵀz for i < n, eight rows per pass over z (then four, then one).
#[inline]
fn project_rows<'a, T: Real + 'a, const D: usize>(
    n: usize,
    row: impl Fn(usize) -> &'a [T; D],
    z: &[T; D],
    len: usize,
    mut out: impl FnMut(usize, T),
) {
    let mut i = 0;
    while i + 8 <= n {
        let r = dots_with::<T, D, 8>(core::array::from_fn(|k| row(i + k)), z, len);
        for (k, v) in r.into_iter().enumerate() {
            out(i + k, v);
        }
        i += 8;
    }
    if i + 4 <= n {
        let r = dots_with::<T, D, 4>(core::array::from_fn(|k| row(i + k)), z, len);
        for (k, v) in r.into_iter().enumerate() {
            out(i + k, v);
        }
        i += 4;
    }
    while i < n {
        let [r] = dots_with::<T, D, 1>([row(i)], z, len);
        out(i, r);
        i += 1;
    }
}

/// The Gram entries of a pair (s, y) with P partner pairs (s_b, y_b) in one
/// pass over the first `len` entries: [sᵀs_b, sᵀy_b, yᵀs_b, yᵀy_b] for each
/// b, every sum bit for bit [`dot`](crate::kernels::dot).
#[inline]
fn gram_dots<T: Real, const D: usize, const P: usize>(
    s: &[T; D],
    y: &[T; D],
    partners: [(&[T; D], &[T; D]); P],
    len: usize,
) -> [[T; 4]; P] {
    at_length!(len, D, |len| {
        let mut acc = [[T::ZERO; 4]; P];
        for i in 0..len {
            let (si, yi) = (s[i], y[i]);
            for b in 0..P {
                let (sb, yb) = (partners[b].0[i], partners[b].1[i]);
                acc[b][0] += si * sb;
                acc[b][1] += si * yb;
                acc[b][2] += yi * sb;
                acc[b][3] += yi * yb;
            }
        }
        acc
    })
}

impl<T: Real, const D: usize, const M: usize> LbfgsMemory<T, D, M> {
    /// Brings the Gram rows up to date: drops those of evicted pairs and
    /// computes those of the pairs pushed since the last rebuild, 4 dot
    /// products per (new pair, held pair), each pair of new pairs once.
    fn update_gram(&mut self) {
        let m = self.pairs.len();
        let len = self.dimension();
        let kept = self.factors.keep_gram_rows(m);
        let ring = &self.pairs;
        let factors = &mut self.factors;
        for a in kept..m {
            let Some((sa, ya, _)) = ring.get(a) else {
                break;
            };
            // Partners b ≤ a: the old pairs and the new ones up to a itself,
            // two per pass.
            let pair = |b: usize| ring.get(b).map_or((sa, ya), |(s, y, _)| (s, y));
            let mut b = 0;
            while b + 2 <= a + 1 {
                let r = gram_dots(sa, ya, [pair(b), pair(b + 1)], len);
                factors.set_gram(a, b, r[0]);
                factors.set_gram(a, b + 1, r[1]);
                b += 2;
            }
            if b <= a {
                let [r] = gram_dots(sa, ya, [pair(b)], len);
                factors.set_gram(a, b, r);
            }
        }
        factors.gram_len = m;
        factors.pushed = 0;
    }

    /// Brings the factors up to date with the pairs: the Gram rows of the
    /// pairs pushed since the last call (O(mD) each) and the factors in
    /// coefficient form (O(m³), no work of length D). The factor operations
    /// call this themselves when the pairs have changed.
    ///
    /// A pair whose sᵀBs is not positive and finite (possible only through
    /// round-off on an extremely ill-conditioned memory) gets an identity factor.
    pub fn refresh_factors(&mut self) {
        if self.factors.valid {
            return;
        }
        self.update_gram();
        let m = self.pairs.len();
        for (k, (_, _, sy)) in self.pairs.iter().enumerate() {
            self.factors.curvature[k] = sy;
        }
        self.factors.build(self.gamma, m);
    }

    /// Vᵀz: r.s[k] = s_kᵀz and, when `with_y`, r.y[k] = y_kᵀz (else 0), eight
    /// products per pass over z.
    fn project(&self, z: &[T; D], with_y: bool) -> Coefficients<T, M> {
        let mut r = Coefficients::zero();
        let m = self.pairs.len();
        let len = self.dimension();
        let ring = &self.pairs;
        let row = |k: usize, y: bool| ring.get(k).map_or(z, |(s, yk, _)| if y { yk } else { s });
        if with_y {
            project_rows(
                2 * m,
                |i| row(i / 2, i % 2 == 1),
                z,
                len,
                |i, v| {
                    if i % 2 == 0 {
                        r.s[i / 2] = v;
                    } else {
                        r.y[i / 2] = v;
                    }
                },
            );
        } else {
            project_rows(m, |k| row(k, false), z, len, |k, v| r.s[k] = v);
        }
        r
    }

    /// out ← a·z + V c (`with_y = false`: c.y is known to be zero), over the
    /// first [`dimension`](Self::dimension) entries (the rest of `out` is
    /// left as it is).
    fn combine(&self, a: T, z: &[T; D], c: &Coefficients<T, M>, with_y: bool, out: &mut [T; D]) {
        at_length!(self.dimension(), D, |n| {
            for i in 0..n {
                out[i] = a * z[i];
            }
            for (k, (s, y, _)) in self.pairs.iter().enumerate() {
                if with_y {
                    let (cs, cy) = (c.s[k], c.y[k]);
                    for i in 0..n {
                        out[i] += cs * s[i];
                        out[i] += cy * y[i];
                    }
                } else {
                    axpy_leading(c.s[k], s, out, n);
                }
            }
        })
    }

    /// `out` ← S·z, with S Sᵀ = H: maps z ~ N(0, I) to a draw of N(0, H).
    pub fn apply_sqrt_inverse_hessian(&mut self, z: &[T; D], out: &mut [T; D]) {
        self.refresh_factors();
        let r = self.project(z, true);
        let a = self.gamma.sqrt();
        let mut c = Coefficients::zero();
        self.factors.s_steps(a, &r, &mut c);
        self.combine(a, z, &c, false, out);
    }

    /// `out` ← Sᵀ·z.
    pub fn apply_sqrt_inverse_hessian_transpose(&mut self, z: &[T; D], out: &mut [T; D]) {
        self.refresh_factors();
        let r = self.project(z, false);
        let mut c = Coefficients::zero();
        self.factors.s_transpose_steps(T::ONE, &r, &mut c);
        let a = self.gamma.sqrt();
        c.scale(a, self.factors.count);
        self.combine(a, z, &c, true, out);
    }

    /// `out` ← C·z, with C Cᵀ = B = H⁻¹: maps z ~ N(0, I) to a draw of N(0, B).
    pub fn apply_sqrt_hessian(&mut self, z: &[T; D], out: &mut [T; D]) {
        self.refresh_factors();
        self.apply_sqrt_hessian_refreshed(z, out);
    }

    /// [`apply_sqrt_hessian`](Self::apply_sqrt_hessian) on factors that
    /// [`refresh_factors`](Self::refresh_factors) has brought up to date
    /// since the memory last changed (stale factors give a wrong C·z).
    pub(crate) fn apply_sqrt_hessian_refreshed(&self, z: &[T; D], out: &mut [T; D]) {
        let r = self.project(z, false);
        let a = T::ONE / self.gamma.sqrt();
        let mut c = Coefficients::zero();
        self.factors.c_steps(a, &r, &mut c);
        self.combine(a, z, &c, true, out);
    }

    /// `out` ← Cᵀ·z.
    pub fn apply_sqrt_hessian_transpose(&mut self, z: &[T; D], out: &mut [T; D]) {
        self.refresh_factors();
        let r = self.project(z, true);
        let mut c = Coefficients::zero();
        self.factors.c_transpose_steps(T::ONE, &r, &mut c);
        let a = T::ONE / self.gamma.sqrt();
        c.scale(a, self.factors.count);
        self.combine(a, z, &c, false, out);
    }

    /// `out` ← B·v = C(Cᵀv), the Hessian approximation times `v`, O(mD):
    /// one projection Vᵀv and one combination.
    pub fn apply_hessian(&mut self, v: &[T; D], out: &mut [T; D]) {
        self.refresh_factors();
        let m = self.factors.count;
        let r = self.project(v, true);
        let g = T::ONE / self.gamma.sqrt();
        let mut c = Coefficients::zero();
        self.factors.c_transpose_steps(T::ONE, &r, &mut c);
        // Cᵀv = g·(v + V c), then C's leading 1/√γ.
        c.scale(g, m);
        c.scale(g, m);
        let a = g * g;
        self.factors.c_steps(a, &r, &mut c);
        self.combine(a, v, &c, true, out);
    }

    /// log det H = n log γ + Σ_k log(sᵀBs / sᵀy), n = [`dimension`](Self::dimension).
    pub fn log_det_inverse_hessian(&mut self) -> T {
        self.refresh_factors();
        self.factors
            .log_det(self.gamma, T::from_u64(self.dimension() as u64))
    }
}

#[cfg(test)]
mod tests {
    use crate::kernels::{axpy, dot, scale};
    use crate::lbfgs::{CurvaturePolicy, InitialScaling, LbfgsMemory, LbfgsSettings};
    use crate::random::standard_normal;
    use crate::real::Real;
    use rand_core::SeedableRng;
    use rand_xorshift::XorShiftRng;

    /// The explicit product form as it was built before the compact storage:
    /// p, q, u, v as vectors of length D, rebuilt in O(m²D) by applying the
    /// factors to s_k. Kept as the oracle of the compact form.
    struct Explicit<T, const D: usize, const M: usize> {
        p: [[T; D]; M],
        q: [[T; D]; M],
        u: [[T; D]; M],
        v: [[T; D]; M],
        gamma: T,
        count: usize,
        log_det: T,
    }

    impl<T: Real, const D: usize, const M: usize> Explicit<T, D, M> {
        fn new(memory: &LbfgsMemory<T, D, M>) -> Self {
            let gamma = memory.gamma();
            let mut e = Explicit {
                p: [[T::ZERO; D]; M],
                q: [[T::ZERO; D]; M],
                u: [[T::ZERO; D]; M],
                v: [[T::ZERO; D]; M],
                gamma,
                count: 0,
                log_det: T::from_u64(D as u64) * gamma.ln(),
            };
            let g = T::ONE / gamma.sqrt();
            for (k, (s, y, sy)) in memory.pairs().iter().enumerate() {
                let mut w = *s;
                e.apply_c_transpose(g, k, &mut w);
                e.apply_c(g, k, &mut w);
                let sbs = dot(s, &w);
                e.count = k + 1;
                if !(sbs.is_finite() && sbs > T::ZERO) {
                    continue;
                }
                let alpha = (sy / sbs).sqrt();
                for i in 0..D {
                    e.p[k][i] = s[i] / sy;
                    e.q[k][i] = y[i] - alpha * w[i];
                    e.v[k][i] = s[i] / sbs;
                    e.u[k][i] = y[i] / alpha + w[i];
                }
                e.log_det += (sbs / sy).ln();
            }
            e
        }

        fn apply_c(&self, g: T, count: usize, x: &mut [T; D]) {
            scale(g, x);
            for k in 0..count {
                let c = dot(&self.v[k], x);
                axpy(-c, &self.u[k], x);
            }
        }

        fn apply_c_transpose(&self, g: T, count: usize, x: &mut [T; D]) {
            for k in (0..count).rev() {
                let c = dot(&self.u[k], x);
                axpy(-c, &self.v[k], x);
            }
            scale(g, x);
        }

        fn apply_s(&self, x: &mut [T; D]) {
            scale(self.gamma.sqrt(), x);
            for k in 0..self.count {
                let c = dot(&self.q[k], x);
                axpy(-c, &self.p[k], x);
            }
        }

        fn apply_s_transpose(&self, x: &mut [T; D]) {
            for k in (0..self.count).rev() {
                let c = dot(&self.p[k], x);
                axpy(-c, &self.q[k], x);
            }
            scale(self.gamma.sqrt(), x);
        }

        /// The five operators on z: S, Sᵀ, C, Cᵀ, B.
        fn operators(&self, z: &[T; D]) -> [[T; D]; 5] {
            let g = T::ONE / self.gamma.sqrt();
            let mut out = [*z; 5];
            self.apply_s(&mut out[0]);
            self.apply_s_transpose(&mut out[1]);
            self.apply_c(g, self.count, &mut out[2]);
            self.apply_c_transpose(g, self.count, &mut out[3]);
            self.apply_c_transpose(g, self.count, &mut out[4]);
            self.apply_c(g, self.count, &mut out[4]);
            out
        }
    }

    /// The five operators of the compact form on z: S, Sᵀ, C, Cᵀ, B.
    fn compact<T: Real, const D: usize, const M: usize>(
        memory: &mut LbfgsMemory<T, D, M>,
        z: &[T; D],
    ) -> [[T; D]; 5] {
        let mut out = [[T::ZERO; D]; 5];
        memory.apply_sqrt_inverse_hessian(z, &mut out[0]);
        memory.apply_sqrt_inverse_hessian_transpose(z, &mut out[1]);
        memory.apply_sqrt_hessian(z, &mut out[2]);
        memory.apply_sqrt_hessian_transpose(z, &mut out[3]);
        memory.apply_hessian(z, &mut out[4]);
        out
    }

    /// Column-major D×D matrices of the five operators (column j = op(e_j)),
    /// in f64.
    fn materialise<T: Real, const D: usize>(
        mut ops: impl FnMut(&[T; D]) -> [[T; D]; 5],
    ) -> [Vec<f64>; 5] {
        let mut mats: [Vec<f64>; 5] = core::array::from_fn(|_| vec![0.0; D * D]);
        for j in 0..D {
            let mut e = [T::ZERO; D];
            e[j] = T::ONE;
            let out = ops(&e);
            for (mat, col) in mats.iter_mut().zip(out.iter()) {
                for i in 0..D {
                    mat[j * D + i] = col[i].to_f64();
                }
            }
        }
        mats
    }

    /// ‖a − b‖_F / ‖b‖_F.
    fn rel_frobenius(a: &[f64], b: &[f64]) -> f64 {
        let diff: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
        let norm: f64 = b.iter().map(|y| y * y).sum();
        (diff / norm).sqrt()
    }

    /// C = A·Bᵀ for column-major n×n matrices (entry (i, j) at j·n + i).
    fn times_transpose(a: &[f64], b: &[f64], n: usize) -> Vec<f64> {
        let mut c = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                c[j * n + i] = (0..n).map(|k| a[k * n + i] * b[k * n + j]).sum();
            }
        }
        c
    }

    /// C = A·B (column-major).
    fn times(a: &[f64], b: &[f64], n: usize) -> Vec<f64> {
        let mut c = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                c[j * n + i] = (0..n).map(|k| a[k * n + i] * b[j * n + k]).sum();
            }
        }
        c
    }

    /// Dense BFGS matrices H and B = H⁻¹ of the pairs (f64, column-major):
    /// H ← (I − ρsyᵀ)H(I − ρysᵀ) + ρssᵀ and B ← B − BssᵀB/sᵀBs + yyᵀ/sᵀy.
    fn dense_bfgs(gamma: f64, pairs: &[(Vec<f64>, Vec<f64>)], n: usize) -> (Vec<f64>, Vec<f64>) {
        let mut h = vec![0.0; n * n];
        let mut b = vec![0.0; n * n];
        for i in 0..n {
            h[i * n + i] = gamma;
            b[i * n + i] = 1.0 / gamma;
        }
        for (s, y) in pairs {
            let sy: f64 = s.iter().zip(y).map(|(a, c)| a * c).sum();
            let rho = 1.0 / sy;
            // H y and yᵀ H y (H symmetric).
            let hy: Vec<f64> = (0..n)
                .map(|i| (0..n).map(|k| h[k * n + i] * y[k]).sum())
                .collect();
            let yhy: f64 = y.iter().zip(&hy).map(|(a, c)| a * c).sum();
            let bs: Vec<f64> = (0..n)
                .map(|i| (0..n).map(|k| b[k * n + i] * s[k]).sum())
                .collect();
            let sbs: f64 = s.iter().zip(&bs).map(|(a, c)| a * c).sum();
            for i in 0..n {
                for j in 0..n {
                    h[j * n + i] += -rho * (s[i] * hy[j] + hy[i] * s[j])
                        + (rho * rho * yhy + rho) * s[i] * s[j];
                    b[j * n + i] += -bs[i] * bs[j] / sbs + y[i] * y[j] / sy;
                }
            }
        }
        (h, b)
    }

    fn normal<T: Real>(rng: &mut XorShiftRng) -> T {
        T::from_f64(standard_normal::<f64, _>(rng))
    }

    /// One row of the reference table: pairs of U = ½θᵀAθ with A = I·lo +
    /// GGᵀ·spread/D (G standard normal), so κ(A) ≲ 1 + 4·spread/lo; s standard
    /// normal times a random scale in [e⁻¹, e]; y = A s (the pair enters
    /// rounded to T).
    #[derive(Debug, Clone, Copy)]
    struct Case {
        seed: u64,
        pushes: usize,
        max_pairs: usize,
        gamma: f64,
        newest_pair: bool,
        lo: f64,
        spread: f64,
    }

    fn filled_memory<T: Real, const D: usize, const M: usize>(case: &Case) -> LbfgsMemory<T, D, M> {
        let mut rng = XorShiftRng::seed_from_u64(case.seed);
        let g: Vec<f64> = (0..D * D).map(|_| normal::<f64>(&mut rng)).collect();
        let mut a = vec![0.0; D * D];
        for i in 0..D {
            for j in 0..D {
                let ggt: f64 = (0..D).map(|k| g[k * D + i] * g[k * D + j]).sum();
                a[j * D + i] = ggt * case.spread / D as f64 + if i == j { case.lo } else { 0.0 };
            }
        }
        let gamma = T::from_f64(case.gamma);
        let settings = LbfgsSettings {
            max_pairs: case.max_pairs.min(M),
            scaling: if case.newest_pair {
                InitialScaling::NewestPair(gamma)
            } else {
                InitialScaling::Fixed(gamma)
            },
            curvature: CurvaturePolicy::default(),
        };
        let mut memory = LbfgsMemory::<T, D, M>::new(settings).unwrap();
        for push in 0..case.pushes {
            let size = (2.0 * standard_normal::<f64, _>(&mut rng)).tanh().exp();
            let s: [f64; D] = core::array::from_fn(|_| size * normal::<f64>(&mut rng));
            let y: [f64; D] = core::array::from_fn(|i| (0..D).map(|k| a[k * D + i] * s[k]).sum());
            assert!(memory.try_push(&s.map(T::from_f64), &y.map(T::from_f64)));
            // Rebuild now and then, so the Gram rows are kept across pushes.
            if push % 3 == 1 {
                memory.refresh_factors();
            }
        }
        memory
    }

    /// The reference table, run at (D, M) = (1, 4), (3, 4), (8, 4), (20, 4),
    /// (3, 10), (20, 10) in f64 and (3, 4), (8, 4), (20, 4), (20, 10) in f32
    /// (max_pairs is capped at M). Measured worst errors (x86-64): compact vs
    /// explicit 2.9e-15 (f64), 1.6e-6 (f32); against the dense BFGS matrices
    /// 6.0e-15 (f64), 2.7e-6 (f32).
    const CASES: [Case; 7] = [
        // Ten pairs (as many as M allows), three wrap-arounds.
        Case {
            seed: 7,
            pushes: 33,
            max_pairs: 10,
            gamma: 1.0,
            newest_pair: true,
            lo: 0.1,
            spread: 3.0,
        },
        // A single pair, γ ≠ 1.
        Case {
            seed: 1,
            pushes: 1,
            max_pairs: 4,
            gamma: 0.7,
            newest_pair: false,
            lo: 1.0,
            spread: 1.0,
        },
        // Filling the memory exactly.
        Case {
            seed: 2,
            pushes: 4,
            max_pairs: 4,
            gamma: 1.0,
            newest_pair: false,
            lo: 0.5,
            spread: 2.0,
        },
        // Two wrap-arounds, γ from the newest pair.
        Case {
            seed: 3,
            pushes: 11,
            max_pairs: 4,
            gamma: 1.0,
            newest_pair: true,
            lo: 0.2,
            spread: 5.0,
        },
        // A run-time capacity below M.
        Case {
            seed: 4,
            pushes: 7,
            max_pairs: 3,
            gamma: 2.5,
            newest_pair: false,
            lo: 1.0,
            spread: 0.5,
        },
        // Wider spectrum, κ(A) about 100.
        Case {
            seed: 5,
            pushes: 9,
            max_pairs: 4,
            gamma: 1.0,
            newest_pair: true,
            lo: 0.05,
            spread: 2.0,
        },
        // Fewer pairs than M.
        Case {
            seed: 6,
            pushes: 2,
            max_pairs: 4,
            gamma: 0.3,
            newest_pair: false,
            lo: 1.0,
            spread: 3.0,
        },
    ];

    /// Worst relative errors of one case: (compact vs explicit over the five
    /// operators and log det, dense identities S Sᵀ = H, C Cᵀ = B, B = H⁻¹).
    fn case_errors<T: Real, const D: usize, const M: usize>(case: &Case) -> (f64, f64) {
        let mut memory = filled_memory::<T, D, M>(case);
        let explicit = Explicit::new(&memory);
        let new = materialise::<T, D>(|z| compact(&mut memory, z));
        let old = materialise::<T, D>(|z| explicit.operators(z));
        let mut vs_explicit = 0.0f64;
        for (n, o) in new.iter().zip(&old) {
            vs_explicit = vs_explicit.max(rel_frobenius(n, o));
        }
        let log_det = memory.log_det_inverse_hessian().to_f64();
        let old_log_det = explicit.log_det.to_f64();
        vs_explicit = vs_explicit.max((log_det - old_log_det).abs() / old_log_det.abs().max(1.0));

        let pairs: Vec<(Vec<f64>, Vec<f64>)> = memory
            .pairs()
            .iter()
            .map(|(s, y, _)| {
                (
                    s.iter().map(|x| x.to_f64()).collect(),
                    y.iter().map(|x| x.to_f64()).collect(),
                )
            })
            .collect();
        let (h, b) = dense_bfgs(memory.gamma().to_f64(), &pairs, D);
        let [s_op, st_op, c_op, ct_op, b_op] = &new;
        let mut eye = vec![0.0; D * D];
        for i in 0..D {
            eye[i * D + i] = 1.0;
        }
        // log det H of the dense H, by the product of the pivots of a
        // Cholesky factorisation.
        let mut l = h.clone();
        let mut dense_log_det = 0.0;
        for j in 0..D {
            for k in 0..j {
                for i in j..D {
                    l[j * D + i] -= l[k * D + i] * l[k * D + j] / l[k * D + k];
                }
            }
            dense_log_det += l[j * D + j].ln();
        }
        let st_t: Vec<f64> = (0..D * D)
            .map(|idx| st_op[(idx % D) * D + idx / D])
            .collect();
        let ct_t: Vec<f64> = (0..D * D)
            .map(|idx| ct_op[(idx % D) * D + idx / D])
            .collect();
        let dense = [
            rel_frobenius(&times_transpose(s_op, s_op, D), &h),
            rel_frobenius(&times_transpose(c_op, c_op, D), &b),
            rel_frobenius(b_op, &b),
            rel_frobenius(&times(&h, b_op, D), &eye),
            rel_frobenius(&st_t, s_op),
            rel_frobenius(&ct_t, c_op),
            (log_det - dense_log_det).abs() / dense_log_det.abs().max(1.0),
        ];
        (vs_explicit, dense.into_iter().fold(0.0, f64::max))
    }

    fn table<T: Real, const D: usize, const M: usize>(bound_explicit: f64, bound_dense: f64) {
        for case in &CASES {
            let (vs_explicit, dense) = case_errors::<T, D, M>(case);
            eprintln!(
                "D = {D:2}, M = {M:2}, {:?}: vs explicit {vs_explicit:.1e}, vs dense {dense:.1e}",
                case
            );
            assert!(vs_explicit <= bound_explicit, "{case:?}: {vs_explicit:e}");
            assert!(dense <= bound_dense, "{case:?}: {dense:e}");
        }
    }

    /// The compact form against the explicit O(m²D) rebuild, and both sides
    /// of S Sᵀ = H, C Cᵀ = B = H⁻¹, Sᵀ and Cᵀ as transposes and log det H
    /// against dense BFGS matrices, in f64: bounds 1e-12 (vs explicit) and
    /// 1e-12 (vs dense).
    #[test]
    fn reference_table_f64() {
        table::<f64, 1, 4>(1e-12, 1e-12);
        table::<f64, 3, 4>(1e-12, 1e-12);
        table::<f64, 8, 4>(1e-12, 1e-12);
        table::<f64, 20, 4>(1e-12, 1e-12);
        table::<f64, 3, 10>(1e-12, 1e-12);
        table::<f64, 20, 10>(1e-12, 1e-12);
    }

    /// The same in f32 (unit round-off 6e-8, κ ≤ 100): bounds 1e-5 and 1e-4.
    #[test]
    fn reference_table_f32() {
        table::<f32, 3, 4>(1e-5, 1e-4);
        table::<f32, 8, 4>(1e-5, 1e-4);
        table::<f32, 20, 4>(1e-5, 1e-4);
        table::<f32, 20, 10>(1e-5, 1e-4);
    }

    /// The Gram rows are a function of the held pairs only: rebuilding after
    /// every push, never, or on a fresh memory holding the same pairs gives
    /// the same bits; so does a memory that was cleared in between.
    #[test]
    fn gram_bookkeeping_is_history_free() {
        let mut rng = XorShiftRng::seed_from_u64(9);
        let settings = LbfgsSettings::with_max_pairs(3);
        let mut every = LbfgsMemory::<f64, 5, 4>::new(settings).unwrap();
        let mut never = every.clone();
        let mut cleared = every.clone();
        let mut pushed = Vec::new();
        for push in 0..10 {
            let s: [f64; 5] = core::array::from_fn(|_| normal(&mut rng));
            let y: [f64; 5] = core::array::from_fn(|i| (1.0 + i as f64) * s[i] + 0.1 * s[0]);
            assert!(every.try_push(&s, &y));
            assert!(never.try_push(&s, &y));
            assert!(cleared.try_push(&s, &y));
            every.refresh_factors();
            if push == 5 {
                cleared.refresh_factors();
                cleared.clear();
            }
            pushed.push((s, y));
        }
        let mut fresh = LbfgsMemory::<f64, 5, 4>::new(settings).unwrap();
        for (s, y) in &pushed[pushed.len() - 3..] {
            assert!(fresh.try_push(s, y));
        }
        let z: [f64; 5] = core::array::from_fn(|_| normal(&mut rng));
        let reference = compact(&mut fresh, &z);
        let bits = |o: &[[f64; 5]; 5]| o.map(|v| v.map(f64::to_bits));
        for memory in [&mut every, &mut never, &mut cleared] {
            assert_eq!(bits(&compact(memory, &z)), bits(&reference));
            assert_eq!(
                memory.log_det_inverse_hessian().to_bits(),
                fresh.log_det_inverse_hessian().to_bits()
            );
        }
    }

    /// A pair whose sᵀBs overflows (here sᵀs = 1e400) gets an identity factor,
    /// in the compact form as in the explicit one: S = √γ I, C = I/√γ and
    /// log det H = D log γ, while a later ordinary pair still counts. A pair
    /// whose yᵀy overflows gets one too (the explicit form uses it) and the
    /// operators stay finite.
    #[test]
    fn identity_factor_when_sbs_is_not_finite() {
        let settings = LbfgsSettings {
            max_pairs: 2,
            scaling: InitialScaling::Fixed(4.0),
            curvature: CurvaturePolicy {
                trust_region: 0.0,
                min_relative_curvature: 0.0,
            },
        };
        let mut memory = LbfgsMemory::<f64, 2, 2>::new(settings).unwrap();
        assert!(memory.try_push(&[1e200, 0.0], &[1e-190, 0.0]));
        let explicit = Explicit::new(&memory);
        let z = [0.3, -1.1];
        assert_eq!(compact(&mut memory, &z), explicit.operators(&z));
        let out = compact(&mut memory, &z);
        assert_eq!(out[0], [0.6, -2.2]);
        assert_eq!(out[2], [0.15, -0.55]);
        assert_eq!(memory.log_det_inverse_hessian(), 2.0 * 4f64.ln());
        // An ordinary pair after it: H = diag(4, 1/2) by hand (s = e₂, y = 2e₂).
        assert!(memory.try_push(&[0.0, 1.0], &[0.0, 2.0]));
        let mut st = [0.0; 2];
        let mut h = [0.0; 2];
        memory.apply_sqrt_inverse_hessian_transpose(&[0.0, 1.0], &mut st);
        memory.apply_sqrt_inverse_hessian(&st, &mut h);
        assert!(h[0].abs() < 1e-15 && (h[1] - 0.5).abs() < 1e-15, "{h:?}");
        let log_det = memory.log_det_inverse_hessian();
        assert!((log_det - (4f64.ln() + 0.5f64.ln())).abs() < 1e-15);
        assert_eq!(log_det, Explicit::new(&memory).log_det);

        // The overflowing pair between two ordinary ones (in 3-D, capacity 3):
        // every operator stays finite and equals the explicit form's.
        let settings = LbfgsSettings {
            max_pairs: 3,
            ..settings
        };
        let mut memory = LbfgsMemory::<f64, 3, 3>::new(settings).unwrap();
        assert!(memory.try_push(&[1.0, 0.5, 0.0], &[2.0, 0.5, 0.1]));
        assert!(memory.try_push(&[0.0, 1e200, 0.0], &[0.0, 1e-190, 0.0]));
        assert!(memory.try_push(&[0.2, 0.0, 1.0], &[0.3, 0.1, 3.0]));
        let explicit = Explicit::new(&memory);
        let z = [0.3, -1.1, 0.7];
        let (new, old) = (compact(&mut memory, &z), explicit.operators(&z));
        for (n, o) in new.iter().zip(&old) {
            for i in 0..3 {
                assert!(n[i].is_finite() && (n[i] - o[i]).abs() <= 1e-14 * o[i].abs().max(1.0));
            }
        }
        assert!((memory.log_det_inverse_hessian() - explicit.log_det).abs() < 1e-14);

        // y₁ᵀy₁ = 1e320 overflows, s₁ᵀy₁ = 2 does not: an identity factor, so
        // H is the BFGS matrix of pair 0 alone.
        let mut memory = LbfgsMemory::<f64, 2, 3>::new(settings).unwrap();
        assert!(memory.try_push(&[1.0, 0.0], &[2.0, 0.0]));
        assert!(memory.try_push(&[1e-160, 1.0], &[1e160, 1.0]));
        let mut only_first = LbfgsMemory::<f64, 2, 3>::new(settings).unwrap();
        assert!(only_first.try_push(&[1.0, 0.0], &[2.0, 0.0]));
        let z = [0.3, -1.1];
        assert_eq!(compact(&mut memory, &z), compact(&mut only_first, &z));
        assert_eq!(
            memory.log_det_inverse_hessian(),
            only_first.log_det_inverse_hessian()
        );
        // The explicit form still used it.
        let explicit = Explicit::new(&memory).log_det;
        assert!(explicit.is_finite() && explicit != only_first.log_det_inverse_hessian());
    }

    /// For one pair in 2-D the BFGS matrices can be written by hand:
    /// with γ = 1, s = e₁, y = (2, 0): H = diag(1/2, 1), B = diag(2, 1).
    #[test]
    fn one_pair_by_hand() {
        let mut m = LbfgsMemory::<f64, 2, 3>::new(LbfgsSettings::with_max_pairs(3)).unwrap();
        assert!(m.try_push(&[1.0, 0.0], &[2.0, 0.0]));
        let mut out = [0.0; 2];
        m.apply_inverse_hessian(&[1.0, 1.0], &mut out);
        assert!((out[0] - 0.5).abs() < 1e-15 && (out[1] - 1.0).abs() < 1e-15);
        m.apply_hessian(&[1.0, 1.0], &mut out);
        assert!((out[0] - 2.0).abs() < 1e-15 && (out[1] - 1.0).abs() < 1e-15);
        // S Sᵀ e₁ = H e₁ = (1/2, 0).
        let mut st = [0.0; 2];
        m.apply_sqrt_inverse_hessian_transpose(&[1.0, 0.0], &mut st);
        m.apply_sqrt_inverse_hessian(&st.clone(), &mut out);
        assert!((out[0] - 0.5).abs() < 1e-15 && out[1].abs() < 1e-15);
        assert!((m.log_det_inverse_hessian() - 0.5f64.ln()).abs() < 1e-15);
    }
}
