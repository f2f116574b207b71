/*
 * qnmc.h: C API of the qnmc sampler core (crate qnmc-ffi, docs/C_API.md).
 *
 * NUTS with its warm-up (quasi-Newton, diagonal or identity metric) and plain
 * HMC, in double or float, for a log density and its gradient given as a
 * function pointer. Nothing allocates: ask for a state's size and alignment,
 * pass a buffer, and the sampler is built in it. A state holds no pointer
 * into itself: it may be copied with memcpy to an equally aligned buffer.
 * Nothing is global: states are independent (one thread per state at a time).
 *
 * Every function that can fail returns a status (qnmc_status, as int): 0 is
 * success; bad input (a NULL pointer, a buffer too small or misaligned, a
 * dimension of 0 or above qnmc_max_dimension(), a NaN setting, a log density
 * that is not finite at the initial point) returns an error code, never
 * undefined behaviour, provided every non-NULL pointer points to as many
 * values as its documentation says (which C cannot check).
 *
 * Kept in sync with the Rust source by ffi/tests/header_sync.rs.
 */
#ifndef QNMC_H
#define QNMC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. 1-4 are the sampler core's qnmc::Error variants. */
typedef enum qnmc_status {
    QNMC_OK = 0,
    QNMC_ERROR_INVALID_SETTING = 1,          /* a setting is out of its domain */
    QNMC_ERROR_NON_FINITE_INITIAL_STATE = 2, /* log p or its gradient not finite at the initial point */
    QNMC_ERROR_NON_FINITE_GRADIENT = 3,
    QNMC_ERROR_NON_FINITE_PROPOSAL = 4,
    QNMC_ERROR_NULL_POINTER = 5,             /* a pointer argument is NULL */
    QNMC_ERROR_BUFFER_TOO_SMALL = 6,         /* state buffer or output array too small */
    QNMC_ERROR_MISALIGNED = 7,               /* a pointer not aligned for its type */
    QNMC_ERROR_INVALID_DIMENSION = 8,        /* dim == 0 or dim > qnmc_max_dimension() */
    QNMC_ERROR_INVALID_ARGUMENT = 9,         /* unknown scalar type or metric */
    QNMC_ERROR_NOT_INITIALIZED = 10,         /* the buffer holds no sampler of this kind */
    QNMC_ERROR_OTHER = 11                    /* a core error without its own code */
} qnmc_status;

/* Scalar type of a state (first argument of the size queries). */
typedef enum qnmc_scalar {
    QNMC_F64 = 0,
    QNMC_F32 = 1
} qnmc_scalar;

/* NUTS metric, learned during warm-up. */
typedef enum qnmc_metric {
    QNMC_METRIC_QUASI_NEWTON = 0, /* L-BFGS metric: diagonal + curvature pairs (default) */
    QNMC_METRIC_DIAGONAL = 1,     /* diagonal metric */
    QNMC_METRIC_IDENTITY = 2      /* M = I, only the step size is adapted */
} qnmc_metric;

/*
 * The model. Returns log p(theta), the LOG DENSITY (up to an additive
 * constant; not the potential -log p), and writes its GRADIENT
 * d log p / d theta (pointing uphill, towards higher density) into grad.
 * theta and grad hold qnmc_max_dimension() values of which the callback
 * reads theta[0..dim) and writes grad[0..dim) (grad is zeroed before each
 * call). ctx is the pointer given to init. A NaN or infinite return value or
 * gradient entry is allowed: during a draw it ends the trajectory as a
 * counted divergence (qnmc_stats.divergent); at the initial point init
 * returns QNMC_ERROR_NON_FINITE_INITIAL_STATE.
 */
typedef double (*qnmc_log_density_f64)(void *ctx, const double *theta, double *grad);
typedef float (*qnmc_log_density_f32)(void *ctx, const float *theta, float *grad);

/* What one draw did (NUTS and HMC, f64 and f32 states). */
typedef struct qnmc_stats {
    double step_size;              /* step size of the draw */
    double acceptance;             /* NUTS: Stan's accept_stat__; HMC: Metropolis acceptance probability */
    double energy;                 /* NUTS: Hamiltonian of the new state (Stan's energy__); HMC: NaN */
    double energy_error;           /* H(new) - H(old) */
    double log_density;            /* log p at the state after the draw, as the callback returned it */
    uint32_t tree_depth;           /* NUTS: tree depth (treedepth__); HMC: 0 */
    uint32_t leapfrog_steps;       /* leapfrog steps (n_leapfrog__; HMC: the setting) */
    uint32_t gradient_evaluations; /* callback calls during the draw */
    int32_t divergent;             /* 1 if the trajectory diverged */
    int32_t reached_max_depth;     /* NUTS: 1 if the tree hit the maximum depth */
    int32_t accepted;              /* 1 if the state changed (NUTS) / proposal accepted (HMC) */
    int32_t warmup;                /* 1 if this was a warm-up draw (discard it) */
} qnmc_stats;

/* NUTS settings: fill with qnmc_nuts_settings_default, then change fields. */
typedef struct qnmc_nuts_settings {
    int32_t metric;             /* qnmc_metric; default QNMC_METRIC_QUASI_NEWTON */
    uint32_t warmup_draws;      /* Stan's windowed warm-up (default 1000); 0: no adaptation */
    uint32_t max_tree_depth;    /* 1..qnmc_max_tree_depth(); default 10 */
    uint32_t max_pairs;         /* quasi-Newton: pairs used, >= 1 (clamped to qnmc_lbfgs_memory()) */
    int32_t optimize;           /* quasi-Newton: 1 (default) starts with an L-BFGS optimisation, 0 not */
    uint32_t early_end_windows; /* end warm-up after this many quiet kept windows; 0 (default): never */
    double initial_step_size;   /* first step size, > 0 (default 0.5; warm-up searches from it) */
    double target_acceptance;   /* dual averaging's delta in (0, 1), default 0.8 */
    double max_energy_error;    /* divergence threshold, > 0, default 1000 */
    double rank_tolerance;      /* quasi-Newton: drop directions changing the metric by < e^tol; default 0 */
    double jitter;              /* after warm-up, step size uniform in ((1-j)eps, (1+j)eps]; j in [0,1), default 0 */
} qnmc_nuts_settings;

/* Build-time limits of this library (QNMC_FFI_MAX_DIM, QNMC_FFI_LBFGS_MEMORY,
   QNMC_FFI_MAX_TREE_DEPTH when it was built). */
size_t qnmc_max_dimension(void);
size_t qnmc_lbfgs_memory(void);
uint32_t qnmc_max_tree_depth(void);

/* A static NUL-terminated message for any status code (unknown ones too). */
const char *qnmc_error_message(int code);

/* ---- NUTS with warm-up --------------------------------------------------- */

/* Size and alignment in bytes of a NUTS state for scalar (qnmc_scalar) and
   metric (qnmc_metric); 0 for an unknown scalar or metric. */
size_t qnmc_nuts_state_size(int scalar, int metric);
size_t qnmc_nuts_state_align(int scalar, int metric);

/* Writes the default settings. */
int qnmc_nuts_settings_default(qnmc_nuts_settings *settings);

/* Builds NUTS for a model of dimension dim (1..qnmc_max_dimension()) in
   buffer (buffer_size >= qnmc_nuts_state_size(scalar, settings->metric)
   bytes, aligned to qnmc_nuts_state_align), started at initial[0..dim), the
   random generator seeded with seed. settings == NULL means the defaults.
   Evaluates the callback at initial. On error the buffer holds no sampler. */
int qnmc_nuts_init_f64(void *buffer, size_t buffer_size, const qnmc_nuts_settings *settings,
                       uint64_t seed, const double *initial, size_t dim,
                       qnmc_log_density_f64 log_density, void *ctx);
int qnmc_nuts_init_f32(void *buffer, size_t buffer_size, const qnmc_nuts_settings *settings,
                       uint64_t seed, const float *initial, size_t dim,
                       qnmc_log_density_f32 log_density, void *ctx);

/* One draw (warm-up or kept), its statistics written to *stats. */
int qnmc_nuts_step(void *state, qnmc_stats *stats);

/* *warming_up = 1 if the next draw is a warm-up draw, else 0. */
int qnmc_nuts_is_warming_up(const void *state, int *warming_up);

/* Copies the current position (dim values; len >= dim) to out. */
int qnmc_nuts_position_f64(const void *state, double *out, size_t len);
int qnmc_nuts_position_f32(const void *state, float *out, size_t len);

/* ---- HMC (identity metric, fixed step size and steps, no warm-up) -------- */

size_t qnmc_hmc_state_size(int scalar);
size_t qnmc_hmc_state_align(int scalar);

int qnmc_hmc_init_f64(void *buffer, size_t buffer_size, double step_size, uint32_t leapfrog_steps,
                      uint64_t seed, const double *initial, size_t dim,
                      qnmc_log_density_f64 log_density, void *ctx);
int qnmc_hmc_init_f32(void *buffer, size_t buffer_size, double step_size, uint32_t leapfrog_steps,
                      uint64_t seed, const float *initial, size_t dim,
                      qnmc_log_density_f32 log_density, void *ctx);
int qnmc_hmc_step(void *state, qnmc_stats *stats);
int qnmc_hmc_position_f64(const void *state, double *out, size_t len);
int qnmc_hmc_position_f32(const void *state, float *out, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* QNMC_H */
