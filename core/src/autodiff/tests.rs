//! Values and derivatives of every elementary operation against reference
//! values (40-digit mpmath, rounded to f64), in both modes; chunking,
//! constants, a full tape and NaN.

use super::*;
use crate::error::Error;
use crate::target::Potential;

#[derive(Debug, Clone, Copy)]
enum Op {
    Sqrt,
    Ln,
    Exp,
    Sin,
    Cos,
    Ln1p,
    ExpM1,
    Tanh,
    Abs,
    Softplus,
}

/// (operation, x, f(x), f'(x)).
const UNARY: [(Op, f64, f64, f64); 42] = [
    (Op::Sqrt, 0.3, 0.5477225575051661, 0.9128709291752769),
    (Op::Sqrt, 1.7, 1.3038404810405297, 0.3834824944236852),
    (Op::Sqrt, 4.25, 2.0615528128088303, 0.24253562503633297),
    (Op::Ln, 0.3, -1.2039728043259361, 3.3333333333333335),
    (Op::Ln, 1.7, 0.5306282510621704, 0.5882352941176471),
    (Op::Ln, 4.25, 1.4469189829363254, 0.23529411764705882),
    (Op::Exp, 0.3, 1.3498588075760032, 1.3498588075760032),
    (Op::Exp, 1.7, 5.4739473917272, 5.4739473917272),
    (Op::Exp, 4.25, 70.10541234668786, 70.10541234668786),
    (Op::Sin, 0.3, 0.29552020666133955, 0.955336489125606),
    (Op::Sin, -0.3, -0.29552020666133955, 0.955336489125606),
    (Op::Sin, 1.7, 0.9916648104524686, -0.12884449429552464),
    (Op::Sin, -1.7, -0.9916648104524686, -0.12884449429552464),
    (Op::Sin, 4.25, -0.8949893582285835, -0.4460874899137928),
    (Op::Sin, -4.25, 0.8949893582285835, -0.4460874899137928),
    (Op::Cos, 0.3, 0.955336489125606, -0.29552020666133955),
    (Op::Cos, 1.7, -0.12884449429552464, -0.9916648104524686),
    (Op::Cos, 4.25, -0.4460874899137928, 0.8949893582285835),
    (Op::Ln1p, 0.3, 0.26236426446749106, 0.7692307692307693),
    (Op::Ln1p, 1.7, 0.9932517730102833, 0.37037037037037035),
    (Op::Ln1p, 4.25, 1.6582280766035324, 0.19047619047619047),
    (Op::ExpM1, 0.3, 0.3498588075760031, 1.3498588075760032),
    (Op::ExpM1, 1.7, 4.4739473917272, 5.4739473917272),
    (Op::ExpM1, 4.25, 69.10541234668786, 70.10541234668786),
    (Op::Tanh, 0.3, 0.2913126124515909, 0.9151369618266292),
    (Op::Tanh, -0.3, -0.2913126124515909, 0.9151369618266292),
    (Op::Tanh, 1.7, 0.935409070603099, 0.1250098706334466),
    (Op::Tanh, -1.7, -0.935409070603099, 0.1250098706334466),
    (Op::Tanh, 4.25, 0.9995931460438896, 0.0008135423820792234),
    (Op::Tanh, -4.25, -0.9995931460438896, 0.0008135423820792234),
    (Op::Abs, 0.3, 0.3, 1.0),
    (Op::Abs, -0.3, 0.3, -1.0),
    (Op::Abs, 1.7, 1.7, 1.0),
    (Op::Abs, -1.7, 1.7, -1.0),
    (Op::Abs, 4.25, 4.25, 1.0),
    (Op::Abs, -4.25, 4.25, -1.0),
    (Op::Softplus, 0.3, 0.8543552444685271, 0.574442516811659),
    (Op::Softplus, -0.3, 0.5543552444685271, 0.425557483188341),
    (Op::Softplus, 1.7, 1.8677860293862658, 0.8455347349164652),
    (Op::Softplus, -1.7, 0.1677860293862659, 0.1544652650835347),
    (Op::Softplus, 4.25, 4.264163456931505, 0.9859363729567545),
    (
        Op::Softplus,
        -4.25,
        0.014163456931504975,
        0.014063627043245474,
    ),
];

#[derive(Debug, Clone, Copy)]
enum Op2 {
    Add,
    Sub,
    Mul,
    Div,
    Powf,
}

/// (operation, a, b, f(a, b), ∂f/∂a, ∂f/∂b).
const BINARY: [(Op2, f64, f64, f64, f64, f64); 15] = [
    (Op2::Add, 1.7, 0.3, 2.0, 1.0, 1.0),
    (Op2::Sub, 1.7, 0.3, 1.4, 1.0, -1.0),
    (Op2::Mul, 1.7, 0.3, 0.51, 0.3, 1.7),
    (
        Op2::Div,
        1.7,
        0.3,
        5.666666666666667,
        3.3333333333333335,
        -18.88888888888889,
    ),
    (
        Op2::Powf,
        1.7,
        0.3,
        1.172558924272542,
        0.20692216310691916,
        0.6221928912540788,
    ),
    (Op2::Add, 4.25, -1.7, 2.55, 1.0, 1.0),
    (Op2::Sub, 4.25, -1.7, 5.95, 1.0, -1.0),
    (Op2::Mul, 4.25, -1.7, -7.225, -1.7, 4.25),
    (
        Op2::Div,
        4.25,
        -1.7,
        -2.5,
        -0.5882352941176471,
        -1.4705882352941178,
    ),
    (
        Op2::Powf,
        4.25,
        -1.7,
        0.08545526374785722,
        -0.03418210549914289,
        0.12364684330860501,
    ),
    (Op2::Add, 0.3, 2.0, 2.3, 1.0, 1.0),
    (Op2::Sub, 0.3, 2.0, -1.7, 1.0, -1.0),
    (Op2::Mul, 0.3, 2.0, 0.6, 2.0, 0.3),
    (Op2::Div, 0.3, 2.0, 0.15, 0.5, -0.075),
    (Op2::Powf, 0.3, 2.0, 0.09, 0.6, -0.10835755238933424),
];

/// The bound: 8 ulp of max(1, |reference|) (the libm functions are within
/// 1 ulp; a derivative formula adds a few roundings, and 1 − tanh² cancels).
fn close(got: f64, reference: f64) -> bool {
    (got - reference).abs() <= 8.0 * f64::EPSILON * reference.abs().max(1.0)
}

struct Unary(Op);
impl AutodiffModel<1> for Unary {
    fn potential<S: Scalar>(&self, x: &[S; 1]) -> S {
        let x = x[0];
        match self.0 {
            Op::Sqrt => x.sqrt(),
            Op::Ln => x.ln(),
            Op::Exp => x.exp(),
            Op::Sin => x.sin(),
            Op::Cos => x.cos(),
            Op::Ln1p => x.ln_1p(),
            Op::ExpM1 => x.exp_m1(),
            Op::Tanh => x.tanh(),
            Op::Abs => x.abs(),
            Op::Softplus => x.softplus(),
        }
    }
}

struct Binary(Op2);
impl AutodiffModel<2> for Binary {
    fn potential<S: Scalar>(&self, x: &[S; 2]) -> S {
        let (a, b) = (x[0], x[1]);
        match self.0 {
            Op2::Add => a + b,
            Op2::Sub => a - b,
            Op2::Mul => a * b,
            Op2::Div => a / b,
            Op2::Powf => a.powf(b),
        }
    }
}

/// U and ∇U of `model` at `x` by forward (N = 1 and N = 4) and reverse mode;
/// all three must give the same U as the `f64` evaluation, bit for bit.
fn both_modes<M: AutodiffModel<D>, const D: usize>(model: M, x: [f64; D]) -> [(f64, [f64; D]); 3] {
    let plain = model.potential(&x);
    let mut out = [(0.0, [0.0; D]); 3];
    out[0].0 = ForwardGradient::<_, 1>::new(&model).potential_and_gradient(&x, &mut out[0].1);
    out[1].0 = ForwardGradient::<_, 4>::new(&model).potential_and_gradient(&x, &mut out[1].1);
    out[2].0 = ReverseGradient::<_, f64, 64>::new(&model).potential_and_gradient(&x, &mut out[2].1);
    for (u, _) in &out {
        assert_eq!(u.to_bits(), plain.to_bits());
    }
    out
}

#[test]
fn elementary_functions_match_reference_values() {
    for (op, x, value, derivative) in UNARY {
        for (mode, (u, g)) in both_modes(Unary(op), [x]).into_iter().enumerate() {
            assert!(close(u, value), "{op:?}({x}) = {u}, reference {value}");
            assert!(
                close(g[0], derivative),
                "{op:?}'({x}) mode {mode} = {}, reference {derivative}",
                g[0]
            );
        }
    }
    // sin_cos gives sin and cos with their derivatives at once.
    struct SinCos;
    impl AutodiffModel<1> for SinCos {
        fn potential<S: Scalar>(&self, x: &[S; 1]) -> S {
            let (s, c) = x[0].sin_cos();
            s + S::from_f64(2.0) * c
        }
    }
    for (_, g) in both_modes(SinCos, [1.7]) {
        assert!(close(g[0], -0.12884449429552464 - 2.0 * 0.9916648104524686));
    }
}

#[test]
fn arithmetic_and_power_match_reference_values() {
    for (op, a, b, value, da, db) in BINARY {
        for (mode, (u, g)) in both_modes(Binary(op), [a, b]).into_iter().enumerate() {
            assert!(close(u, value), "{op:?}({a}, {b}) = {u}, reference {value}");
            assert!(
                close(g[0], da) && close(g[1], db),
                "{op:?}({a}, {b}) mode {mode}: {g:?}, reference ({da}, {db})"
            );
        }
    }
}

/// `powi` by repeated squaring: xⁿ and n·xⁿ⁻¹ in all three modes against
/// libm's pow on |x| (with the sign of an odd power), within [`close`]'s
/// 8 ulp, for negative, zero and positive x and n (0 at x = 0 for n ≥ 2).
#[test]
fn integer_powers_match_reference_values() {
    struct Power(i32);
    impl AutodiffModel<1> for Power {
        fn potential<S: Scalar>(&self, x: &[S; 1]) -> S {
            x[0].powi(self.0)
        }
    }
    let power = |x: f64, n: i32| -> f64 {
        let magnitude = libm::pow(x.abs(), f64::from(n));
        if x < 0.0 && n % 2 != 0 {
            -magnitude
        } else {
            magnitude
        }
    };
    for (x, n) in [
        (-2.0, 3),
        (1.5, 4),
        (-0.7, 7),
        (0.3, 0),
        (2.0, -2),
        (-1.25, -3),
        (3.0, 1),
        (0.0, 1),
        (0.0, 2),
        (1.1, 25),
    ] {
        let value = power(x, n);
        let derivative = if n == 0 {
            0.0
        } else {
            f64::from(n) * power(x, n - 1)
        };
        for (mode, (u, g)) in both_modes(Power(n), [x]).into_iter().enumerate() {
            assert!(close(u, value), "{x}^{n} = {u}, reference {value}");
            assert!(
                close(g[0], derivative),
                "d/dx {x}^{n} mode {mode} = {}, reference {derivative}",
                g[0]
            );
        }
    }
    assert_eq!(Scalar::powi(-2.0_f32, 3), -8.0);
}

/// Negation, the assignment operators and log_add_exp.
#[test]
fn negation_assignment_and_log_add_exp() {
    struct Mixed;
    impl AutodiffModel<2> for Mixed {
        fn potential<S: Scalar>(&self, x: &[S; 2]) -> S {
            let mut u = -x[0];
            u += x[1] * x[1]; // −a + b²
            u -= x[0] * S::from_f64(3.0); // −4a + b²
            u *= x[1]; // −4ab + b³
            u /= S::from_f64(2.0); // −2ab + b³/2
            u + x[0].log_add_exp(x[1])
        }
    }
    let (a, b) = (0.7f64, -1.3f64);
    let soft = 1.0 / (1.0 + (b - a).exp()); // ∂/∂a log(eᵃ + eᵇ)
    let expected = [-2.0 * b + soft, -2.0 * a + 1.5 * b * b + (1.0 - soft)];
    for (_, g) in both_modes(Mixed, [a, b]) {
        assert!(
            close(g[0], expected[0]) && close(g[1], expected[1]),
            "{g:?}"
        );
    }
}

/// Chunked forward mode (⌈7/3⌉ = 3 evaluations, a partial last chunk)
/// equals one chunk and reverse mode; the value is the f64 evaluation's.
#[test]
fn chunks_and_modes_agree() {
    struct Chain;
    impl AutodiffModel<7> for Chain {
        fn potential<S: Scalar>(&self, x: &[S; 7]) -> S {
            let mut u = S::from_f64(0.0);
            for i in 0..7 {
                let next = x[(i + 1) % 7];
                u += (x[i] * next).sin() + (x[i] * x[i] + S::from_f64(1.0)).ln() * next;
            }
            u
        }
    }
    let x = [0.1, -0.4, 0.9, 1.3, -2.0, 0.25, 0.6];
    let (mut g3, mut g7, mut gr) = ([0.0; 7], [0.0; 7], [0.0; 7]);
    let u3 = ForwardGradient::<_, 3>::new(Chain).potential_and_gradient(&x, &mut g3);
    let u7 = ForwardGradient::<_, 7>::new(Chain).potential_and_gradient(&x, &mut g7);
    let reverse = ReverseGradient::<_, f64, 128>::new(Chain);
    let ur = reverse.potential_and_gradient(&x, &mut gr);
    assert_eq!(u3.to_bits(), Chain.potential(&x).to_bits());
    assert_eq!((u3, u3), (u7, ur));
    assert_eq!(g3, g7); // the same operations on each tangent
    for i in 0..7 {
        assert!(close(gr[i], g3[i]), "{i}: {} vs {}", gr[i], g3[i]);
    }
    // 7 inputs, 7 × (mul, sin, mul, add, ln, mul, add, add) nodes.
    assert_eq!(reverse.tape().len(), 7 + 7 * 8);
    // f32 works the same way.
    let xf = x.map(|v| v as f32);
    let mut gf = [0.0f32; 7];
    let uf = ForwardGradient::<_, 4>::new(Chain).potential_and_gradient(&xf, &mut gf);
    assert_eq!(uf.to_bits(), Chain.potential(&xf).to_bits());
    for i in 0..7 {
        assert!((gf[i] as f64 - g3[i]).abs() < 1e-5 * g3[i].abs().max(1.0));
    }
}

/// Constants take no node and have zero derivative; a constant exponent
/// never asks for ln of a negative base; sqrt(0) of a constant is not NaN.
#[test]
fn constants_have_no_node_and_no_nan() {
    struct Constants;
    impl AutodiffModel<1> for Constants {
        fn potential<S: Scalar>(&self, x: &[S; 1]) -> S {
            let c = S::from_f64(0.0).sqrt() + S::from_f64(5.0).ln(); // no node
            x[0].powf(S::from_f64(2.0)) + c
        }
    }
    for (u, g) in both_modes(Constants, [-2.0]) {
        assert!(close(u, 4.0 + 5f64.ln()));
        assert_eq!(g, [-4.0]);
    }
    let reverse = ReverseGradient::<_, f64, 8>::new(Constants);
    let mut g = [0.0];
    reverse.potential_and_gradient(&[-2.0], &mut g);
    assert_eq!(reverse.tape().len(), 3); // input, powf, + constant
    // U independent of θ: gradient 0.
    struct Flat;
    impl AutodiffModel<2> for Flat {
        fn potential<S: Scalar>(&self, _: &[S; 2]) -> S {
            S::from_f64(1.5)
        }
    }
    for (u, g) in both_modes(Flat, [1.0, 2.0]) {
        assert_eq!((u, g), (1.5, [0.0; 2]));
    }
}

struct Sum<const N: usize>;
impl<const D: usize, const N: usize> AutodiffModel<D> for Sum<N> {
    fn potential<S: Scalar>(&self, x: &[S; D]) -> S {
        let mut u = S::from_f64(0.0);
        for _ in 0..N {
            for v in x {
                u += *v * *v;
            }
        }
        u
    }
}

/// A tape too small: an `Err` from the checked call, NaN through
/// `Potential`; the next evaluation that fits is exact again.
#[test]
fn full_tape_is_an_error_or_nan_never_a_panic() {
    let x = [1.0, 2.0, 3.0];
    let small = ReverseGradient::<_, f64, 10>::new(Sum::<3>); // needs 3 + 3·3·2
    let mut g = [0.0; 3];
    assert_eq!(
        small.try_potential_and_gradient(&x, &mut g),
        Err(Error::TapeFull { capacity: 10 })
    );
    assert!(g.iter().all(|v| v.is_nan()));
    assert!(small.tape().overflowed());
    assert!(small.potential_and_gradient(&x, &mut g).is_nan());
    assert!(g.iter().all(|v| v.is_nan()));
    // Fewer nodes than inputs.
    let tiny = ReverseGradient::<_, f64, 2>::new(Sum::<1>);
    assert!(tiny.potential_and_gradient(&x, &mut g).is_nan());
    // The same tape, a model that fits: exact again.
    let tape = Tape::<f64, 10>::new();
    assert!(tape.potential_and_gradient(&Sum::<3>, &x, &mut g).is_err());
    assert_eq!(tape.potential_and_gradient(&Sum::<1>, &x, &mut g), Ok(14.0));
    assert_eq!(g, [2.0, 4.0, 6.0]);
    assert!(!tape.overflowed() && tape.len() == 9);
    let message = Error::TapeFull { capacity: 10 }.to_string();
    assert!(message.contains("more than 10 nodes"), "{message}");
    // A zero-capacity tape and a zero-dimensional model.
    let empty = Tape::<f64, 0>::new();
    assert!(empty.potential_and_gradient(&Sum::<1>, &x, &mut g).is_err());
    let mut none: [f64; 0] = [];
    assert_eq!(
        empty.potential_and_gradient(&Sum::<1>, &[], &mut none),
        Ok(0.0)
    );
    assert_eq!(
        ForwardGradient::<_, 2>::new(Sum::<1>).potential_and_gradient(&[], &mut none),
        0.0
    );
}

/// A NaN made by the model (√ of a negative number) reaches U and ∇U in
/// both modes, as does a NaN position.
#[test]
fn nan_propagates() {
    struct Log;
    impl AutodiffModel<2> for Log {
        fn potential<S: Scalar>(&self, x: &[S; 2]) -> S {
            x[0].sqrt().ln() + x[1] * x[1]
        }
    }
    for (u, g) in both_modes(Log, [-1.0, 2.0]) {
        assert!(u.is_nan() && g[0].is_nan() && g[1] == 4.0, "{u} {g:?}");
    }
    for (u, g) in both_modes(Log, [1.0, f64::NAN]) {
        // (Forward mode with both tangents in one chunk also spoils g[0]:
        // 0·NaN = NaN in the product rule.)
        assert!(u.is_nan() && g[1].is_nan(), "{u} {g:?}");
    }
}
