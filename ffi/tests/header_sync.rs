//! `ffi/include/qnmc.h` is written by hand (for C readers: sign conventions,
//! units, defaults next to each field); this test keeps it in sync with the
//! Rust source:
//!
//! - every exported function: the table below names each parameter's type
//!   once, in a small vocabulary that the `signatures!` macro turns into both
//!   the Rust function-pointer type (the function must coerce to it, or this
//!   test does not compile) and the C prototype (the header must declare
//!   exactly these `qnmc_` functions, with exactly these prototypes);
//! - the status, scalar and metric constants and the callback typedefs;
//! - the layout of `qnmc_stats` and `qnmc_nuts_settings`: a C program built
//!   from the header prints every field's offset and each struct's size and
//!   alignment, compared with Rust's `offset_of!`/`size_of`/`align_of`.

use std::ffi::{c_char, c_int, c_void};
use std::mem::{align_of, offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;

use qnmc_ffi::*;

fn header() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/qnmc.h");
    std::fs::read_to_string(path).unwrap()
}

/// Collapses whitespace and drops it next to punctuation.
fn normalise(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut s = words.join(" ");
    for p in ["(", ")", ",", "*", ";", "{", "}"] {
        s = s.replace(&format!(" {p}"), p).replace(&format!("{p} "), p);
    }
    s
}

/// The header without comments.
fn code(header: &str) -> String {
    let mut out = String::new();
    let mut rest = header;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find("*/").expect("unterminated comment");
        rest = &rest[start + end + 2..];
    }
    out.push_str(rest);
    out
}

/// The prototypes of `qnmc_` functions in the header, normalised.
fn header_prototypes() -> Vec<String> {
    let code = code(&header());
    let mut prototypes = Vec::new();
    for statement in code.split(';') {
        let statement = normalise(statement);
        let statement = statement.trim();
        if statement.starts_with("typedef") || !statement.contains("qnmc_") {
            continue;
        }
        // A function prototype: `type name(args)`, the last line of the chunk.
        if let Some(line) = statement.rsplit('}').next()
            && line.ends_with(')')
            && line.contains('(')
        {
            let line = line.trim();
            let open = line.find('(').unwrap();
            let before = &line[..open];
            let name = before.rsplit([' ', '*']).next().unwrap();
            if name.starts_with("qnmc_") {
                prototypes.push(format!("{line};"));
            }
        }
    }
    prototypes
}

macro_rules! c_type {
    (VoidMut) => {
        "void *"
    };
    (VoidConst) => {
        "const void *"
    };
    (Size) => {
        "size_t"
    };
    (U32) => {
        "uint32_t"
    };
    (U64) => {
        "uint64_t"
    };
    (Int) => {
        "int"
    };
    (IntMut) => {
        "int *"
    };
    (F64) => {
        "double"
    };
    (F64Const) => {
        "const double *"
    };
    (F64Mut) => {
        "double *"
    };
    (F32Const) => {
        "const float *"
    };
    (F32Mut) => {
        "float *"
    };
    (CharConst) => {
        "const char *"
    };
    (StatsMut) => {
        "qnmc_stats *"
    };
    (SettingsMut) => {
        "qnmc_nuts_settings *"
    };
    (SettingsConst) => {
        "const qnmc_nuts_settings *"
    };
    (CbF64) => {
        "qnmc_log_density_f64"
    };
    (CbF32) => {
        "qnmc_log_density_f32"
    };
}

macro_rules! rust_type {
    (VoidMut) => { *mut c_void };
    (VoidConst) => { *const c_void };
    (Size) => { usize };
    (U32) => { u32 };
    (U64) => { u64 };
    (Int) => { c_int };
    (IntMut) => { *mut c_int };
    (F64) => { f64 };
    (F64Const) => { *const f64 };
    (F64Mut) => { *mut f64 };
    (F32Const) => { *const f32 };
    (F32Mut) => { *mut f32 };
    (CharConst) => { *const c_char };
    (StatsMut) => { *mut QnmcStats };
    (SettingsMut) => { *mut QnmcNutsSettings };
    (SettingsConst) => { *const QnmcNutsSettings };
    (CbF64) => { Option<LogDensity<f64>> };
    (CbF32) => { Option<LogDensity<f32>> };
}

/// `name(arg: Type, ...) -> Type` rows: checks the Rust function's type and
/// returns the C prototypes.
macro_rules! signatures {
    ($( $(#[$unsafe:ident])? $name:ident($($arg:ident: $t:ident),*) -> $ret:ident; )*) => {{
        let mut prototypes = Vec::new();
        $(
            signatures!(@check $(#[$unsafe])? $name($($t),*) -> $ret);
            let args: Vec<String> = vec![$(format!("{} {}", c_type!($t), stringify!($arg))),*];
            let args = if args.is_empty() { "void".to_string() } else { args.join(", ") };
            prototypes.push(normalise(&format!(
                "{} {}({});",
                c_type!($ret),
                stringify!($name),
                args
            )));
        )*
        prototypes
    }};
    (@check #[unsafe] $name:ident($($t:ident),*) -> $ret:ident) => {
        let _: unsafe extern "C" fn($(rust_type!($t)),*) -> rust_type!($ret) = $name;
    };
    (@check $name:ident($($t:ident),*) -> $ret:ident) => {
        let _: extern "C" fn($(rust_type!($t)),*) -> rust_type!($ret) = $name;
    };
}

#[test]
fn every_function_matches_its_prototype() {
    let expected = signatures! {
        qnmc_max_dimension() -> Size;
        qnmc_lbfgs_memory() -> Size;
        qnmc_max_tree_depth() -> U32;
        qnmc_error_message(code: Int) -> CharConst;
        qnmc_nuts_state_size(scalar: Int, metric: Int) -> Size;
        qnmc_nuts_state_align(scalar: Int, metric: Int) -> Size;
        #[unsafe] qnmc_nuts_settings_default(settings: SettingsMut) -> Int;
        #[unsafe] qnmc_nuts_init_f64(buffer: VoidMut, buffer_size: Size, settings: SettingsConst,
            seed: U64, initial: F64Const, dim: Size, log_density: CbF64, ctx: VoidMut) -> Int;
        #[unsafe] qnmc_nuts_init_f32(buffer: VoidMut, buffer_size: Size, settings: SettingsConst,
            seed: U64, initial: F32Const, dim: Size, log_density: CbF32, ctx: VoidMut) -> Int;
        #[unsafe] qnmc_nuts_step(state: VoidMut, stats: StatsMut) -> Int;
        #[unsafe] qnmc_nuts_is_warming_up(state: VoidConst, warming_up: IntMut) -> Int;
        #[unsafe] qnmc_nuts_position_f64(state: VoidConst, out: F64Mut, len: Size) -> Int;
        #[unsafe] qnmc_nuts_position_f32(state: VoidConst, out: F32Mut, len: Size) -> Int;
        qnmc_hmc_state_size(scalar: Int) -> Size;
        qnmc_hmc_state_align(scalar: Int) -> Size;
        #[unsafe] qnmc_hmc_init_f64(buffer: VoidMut, buffer_size: Size, step_size: F64,
            leapfrog_steps: U32, seed: U64, initial: F64Const, dim: Size, log_density: CbF64,
            ctx: VoidMut) -> Int;
        #[unsafe] qnmc_hmc_init_f32(buffer: VoidMut, buffer_size: Size, step_size: F64,
            leapfrog_steps: U32, seed: U64, initial: F32Const, dim: Size, log_density: CbF32,
            ctx: VoidMut) -> Int;
        #[unsafe] qnmc_hmc_step(state: VoidMut, stats: StatsMut) -> Int;
        #[unsafe] qnmc_hmc_position_f64(state: VoidConst, out: F64Mut, len: Size) -> Int;
        #[unsafe] qnmc_hmc_position_f32(state: VoidConst, out: F32Mut, len: Size) -> Int;
    };
    let mut in_header = header_prototypes();
    let mut expected = expected;
    in_header.sort();
    expected.sort();
    let missing: Vec<_> = expected.iter().filter(|p| !in_header.contains(p)).collect();
    let extra: Vec<_> = in_header.iter().filter(|p| !expected.contains(p)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "qnmc.h out of sync:\nexpected, not in the header: {missing:#?}\nin the header, not expected: {extra:#?}"
    );
}

#[test]
fn the_callback_typedefs_match() {
    let code = normalise(&code(&header()));
    let _: Option<LogDensity<f64>> =
        None::<unsafe extern "C" fn(*mut c_void, *const f64, *mut f64) -> f64>;
    let _: Option<LogDensity<f32>> =
        None::<unsafe extern "C" fn(*mut c_void, *const f32, *mut f32) -> f32>;
    for typedef in [
        "typedef double(*qnmc_log_density_f64)(void*ctx,const double*theta,double*grad);",
        "typedef float(*qnmc_log_density_f32)(void*ctx,const float*theta,float*grad);",
    ] {
        assert!(code.contains(typedef), "{typedef}");
    }
}

#[test]
fn the_constants_match() {
    let code = normalise(&code(&header()));
    let names = [
        "QNMC_OK",
        "QNMC_ERROR_INVALID_SETTING",
        "QNMC_ERROR_NON_FINITE_INITIAL_STATE",
        "QNMC_ERROR_NON_FINITE_GRADIENT",
        "QNMC_ERROR_NON_FINITE_PROPOSAL",
        "QNMC_ERROR_NULL_POINTER",
        "QNMC_ERROR_BUFFER_TOO_SMALL",
        "QNMC_ERROR_MISALIGNED",
        "QNMC_ERROR_INVALID_DIMENSION",
        "QNMC_ERROR_INVALID_ARGUMENT",
        "QNMC_ERROR_NOT_INITIALIZED",
        "QNMC_ERROR_OTHER",
    ];
    assert_eq!(names.len(), Status::ALL.len());
    let mut constants: Vec<(&str, c_int)> = names
        .iter()
        .zip(Status::ALL)
        .map(|(n, s)| (*n, s.code()))
        .collect();
    constants.extend([
        ("QNMC_F64", QNMC_F64),
        ("QNMC_F32", QNMC_F32),
        ("QNMC_METRIC_QUASI_NEWTON", QNMC_METRIC_QUASI_NEWTON),
        ("QNMC_METRIC_DIAGONAL", QNMC_METRIC_DIAGONAL),
        ("QNMC_METRIC_IDENTITY", QNMC_METRIC_IDENTITY),
    ]);
    for (name, value) in constants {
        let definition = format!("{name} = {value}");
        assert!(
            code.contains(&format!("{definition},")) || code.contains(&format!("{definition}}}")),
            "qnmc.h: expected `{definition}`"
        );
    }
    // Every `QNMC_` constant of the header is one of them.
    let count = code.matches(" = ").count();
    assert_eq!(count, names.len() + 5, "qnmc.h defines other constants");
}

/// Offsets, sizes and alignments of the C structs, as a C compiler sees them.
#[test]
fn the_struct_layouts_match() {
    macro_rules! fields {
        ($c:literal, $rust:ty, [$($field:ident),*]) => {{
            let mut c_lines = vec![
                format!("printf(\"{} size %lu\\n\", (unsigned long)sizeof({}));", $c, $c),
                format!("printf(\"{} align %lu\\n\", (unsigned long)offsetof(struct {{ char c; {} x; }}, x));", $c, $c),
            ];
            let mut rust_lines = vec![
                format!("{} size {}", $c, size_of::<$rust>()),
                format!("{} align {}", $c, align_of::<$rust>()),
            ];
            $(
                c_lines.push(format!(
                    "printf(\"{}.{} %lu\\n\", (unsigned long)offsetof({}, {}));",
                    $c, stringify!($field), $c, stringify!($field)
                ));
                rust_lines.push(format!("{}.{} {}", $c, stringify!($field), offset_of!($rust, $field)));
            )*
            (c_lines, rust_lines)
        }};
    }
    let (mut c, mut rust) = fields!(
        "qnmc_stats",
        QnmcStats,
        [
            step_size,
            acceptance,
            energy,
            energy_error,
            log_density,
            tree_depth,
            leapfrog_steps,
            gradient_evaluations,
            divergent,
            reached_max_depth,
            accepted,
            warmup
        ]
    );
    let (c2, rust2) = fields!(
        "qnmc_nuts_settings",
        QnmcNutsSettings,
        [
            metric,
            warmup_draws,
            max_tree_depth,
            max_pairs,
            optimize,
            early_end_windows,
            initial_step_size,
            target_acceptance,
            max_energy_error,
            rank_tolerance,
            jitter
        ]
    );
    c.extend(c2);
    rust.extend(rust2);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ffi-layout");
    std::fs::create_dir_all(&dir).unwrap();
    let source = dir.join("layout.c");
    std::fs::write(
        &source,
        format!(
            "#include <stddef.h>\n#include <stdio.h>\n#include \"qnmc.h\"\nint main(void) {{\n{}\nreturn 0;\n}}\n",
            c.join("\n")
        ),
    )
    .unwrap();
    let program = dir.join("layout");
    let out = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("include"))
        .arg(&source)
        .arg("-o")
        .arg(&program)
        .output()
        .expect("cc");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(&program).output().unwrap();
    let printed: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(printed, rust);
}
