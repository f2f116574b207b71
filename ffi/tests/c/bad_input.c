/*
 * The C API's checks from C, built with -fsanitize=address,undefined against
 * the host static library (ffi/tests/c_programs.rs, ffi/scripts/check.sh):
 * every bad input returns its error code, and AddressSanitizer and
 * UndefinedBehaviorSanitizer see nothing wrong, including in draws whose
 * log density or gradient is NaN (counted divergences).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qnmc.h"

static int failures = 0;
static int checks = 0;

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        checks++;                                                                        \
        if (!(cond)) {                                                                   \
            failures++;                                                                  \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);     \
        }                                                                                \
    } while (0)

#define EXPECT(call, code) CHECK((call) == (code))

/* A standard normal in dim coordinates; ctx points to the dimension. */
static double normal_f64(void *ctx, const double *theta, double *grad) {
    size_t dim = *(const size_t *)ctx;
    double lp = 0.0;
    size_t i;
    for (i = 0; i < dim; i++) {
        grad[i] = -theta[i];
        lp -= 0.5 * theta[i] * theta[i];
    }
    return lp;
}

static float normal_f32(void *ctx, const float *theta, float *grad) {
    size_t dim = *(const size_t *)ctx;
    float lp = 0.0f;
    size_t i;
    for (i = 0; i < dim; i++) {
        grad[i] = -theta[i];
        lp -= 0.5f * theta[i] * theta[i];
    }
    return lp;
}

static double always_nan(void *ctx, const double *theta, double *grad) {
    (void)ctx;
    (void)theta;
    grad[0] = 0.0;
    return NAN;
}

/* NaN log density above theta0 = 0.7, NaN gradient below -0.7. */
static double walled(void *ctx, const double *theta, double *grad) {
    (void)ctx;
    grad[0] = theta[0] < -0.7 ? NAN : -theta[0];
    grad[1] = -theta[1];
    if (theta[0] > 0.7) {
        return NAN;
    }
    return -0.5 * (theta[0] * theta[0] + theta[1] * theta[1]);
}

/* A heap buffer aligned to align (the test may use malloc; the library never
   does). */
static unsigned char *aligned(size_t size, size_t align, unsigned char **raw) {
    *raw = (unsigned char *)malloc(size + align);
    if (*raw == NULL) {
        abort();
    }
    return *raw + (align - (uintptr_t)*raw % align) % align;
}

static void nuts_bad_input(void) {
    size_t dim = 3;
    double x0[3] = {0.1, -0.2, 0.3};
    size_t need = qnmc_nuts_state_size(QNMC_F64, QNMC_METRIC_QUASI_NEWTON);
    size_t align = qnmc_nuts_state_align(QNMC_F64, QNMC_METRIC_QUASI_NEWTON);
    unsigned char *raw;
    unsigned char *state = aligned(need + align, align, &raw);
    qnmc_nuts_settings s;
    qnmc_stats stats;
    double out[3];
    float out32[3];
    int warm = -1;
    double *big = (double *)calloc(qnmc_max_dimension() + 1, sizeof(double));

    CHECK(need > 0 && align > 0);
    EXPECT(qnmc_nuts_state_size(5, 0), 0u);
    EXPECT(qnmc_nuts_state_align(0, 9), 0u);
    EXPECT(qnmc_nuts_settings_default(NULL), QNMC_ERROR_NULL_POINTER);
    EXPECT(qnmc_nuts_settings_default(&s), QNMC_OK);
    CHECK(s.metric == QNMC_METRIC_QUASI_NEWTON && s.initial_step_size == 0.5);

    /* NULL pointers. */
    EXPECT(qnmc_nuts_init_f64(NULL, need, &s, 1, x0, dim, normal_f64, &dim), QNMC_ERROR_NULL_POINTER);
    EXPECT(qnmc_nuts_init_f64(state, need, &s, 1, NULL, dim, normal_f64, &dim), QNMC_ERROR_NULL_POINTER);
    EXPECT(qnmc_nuts_init_f64(state, need, &s, 1, x0, dim, NULL, &dim), QNMC_ERROR_NULL_POINTER);
    /* Too little memory, misaligned memory. */
    EXPECT(qnmc_nuts_init_f64(state, need - 1, &s, 1, x0, dim, normal_f64, &dim),
           QNMC_ERROR_BUFFER_TOO_SMALL);
    EXPECT(qnmc_nuts_init_f64(state, 0, &s, 1, x0, dim, normal_f64, &dim), QNMC_ERROR_BUFFER_TOO_SMALL);
    EXPECT(qnmc_nuts_init_f64(state + 8, need, &s, 1, x0, dim, normal_f64, &dim), QNMC_ERROR_MISALIGNED);
    /* Dimensions. */
    EXPECT(qnmc_nuts_init_f64(state, need, &s, 1, x0, 0, normal_f64, &dim), QNMC_ERROR_INVALID_DIMENSION);
    EXPECT(qnmc_nuts_init_f64(state, need, &s, 1, big, qnmc_max_dimension() + 1, normal_f64, &dim),
           QNMC_ERROR_INVALID_DIMENSION);
    EXPECT(qnmc_nuts_init_f64(state, need, &s, 1, x0, (size_t)-1, normal_f64, &dim),
           QNMC_ERROR_INVALID_DIMENSION);
    /* Settings. */
    s.initial_step_size = NAN;
    EXPECT(qnmc_nuts_init_f64(state, need, &s, 1, x0, dim, normal_f64, &dim), QNMC_ERROR_INVALID_SETTING);
    qnmc_nuts_settings_default(&s);
    s.max_tree_depth = qnmc_max_tree_depth() + 1;
    EXPECT(qnmc_nuts_init_f64(state, need, &s, 1, x0, dim, normal_f64, &dim), QNMC_ERROR_INVALID_SETTING);
    qnmc_nuts_settings_default(&s);
    s.target_acceptance = 1.5;
    EXPECT(qnmc_nuts_init_f64(state, need, &s, 1, x0, dim, normal_f64, &dim), QNMC_ERROR_INVALID_SETTING);
    qnmc_nuts_settings_default(&s);
    s.metric = 42;
    EXPECT(qnmc_nuts_init_f64(state, need, &s, 1, x0, dim, normal_f64, &dim), QNMC_ERROR_INVALID_ARGUMENT);
    qnmc_nuts_settings_default(&s);
    /* A NaN density at the initial point, a NaN initial point. */
    EXPECT(qnmc_nuts_init_f64(state, need, &s, 1, x0, dim, always_nan, NULL),
           QNMC_ERROR_NON_FINITE_INITIAL_STATE);
    x0[1] = NAN;
    EXPECT(qnmc_nuts_init_f64(state, need, &s, 1, x0, dim, normal_f64, &dim),
           QNMC_ERROR_NON_FINITE_INITIAL_STATE);
    x0[1] = -0.2;
    /* No sampler after a failed init. */
    EXPECT(qnmc_nuts_step(state, &stats), QNMC_ERROR_NOT_INITIALIZED);
    EXPECT(qnmc_nuts_is_warming_up(state, &warm), QNMC_ERROR_NOT_INITIALIZED);
    EXPECT(qnmc_nuts_position_f64(state, out, 3), QNMC_ERROR_NOT_INITIALIZED);

    /* A good state (NULL settings: defaults), then bad calls on it. */
    EXPECT(qnmc_nuts_init_f64(state, need, NULL, 1, x0, dim, normal_f64, &dim), QNMC_OK);
    EXPECT(qnmc_nuts_step(NULL, &stats), QNMC_ERROR_NULL_POINTER);
    EXPECT(qnmc_nuts_step(state, NULL), QNMC_ERROR_NULL_POINTER);
    EXPECT(qnmc_nuts_step(state + 4, &stats), QNMC_ERROR_MISALIGNED);
    EXPECT(qnmc_nuts_is_warming_up(state, NULL), QNMC_ERROR_NULL_POINTER);
    EXPECT(qnmc_nuts_position_f64(state, NULL, 3), QNMC_ERROR_NULL_POINTER);
    EXPECT(qnmc_nuts_position_f64(state, out, 2), QNMC_ERROR_BUFFER_TOO_SMALL);
    EXPECT(qnmc_nuts_position_f32(state, out32, 3), QNMC_ERROR_NOT_INITIALIZED);
    EXPECT(qnmc_hmc_step(state, &stats), QNMC_ERROR_NOT_INITIALIZED);
    EXPECT(qnmc_nuts_is_warming_up(state, &warm), QNMC_OK);
    CHECK(warm == 1);
    EXPECT(qnmc_nuts_step(state, &stats), QNMC_OK);
    CHECK(stats.warmup == 1 && isfinite(stats.log_density));
    EXPECT(qnmc_nuts_position_f64(state, out, 3), QNMC_OK);
    free(big);
    free(raw);
}

static void divergences_are_counted(void) {
    int metric;
    for (metric = 0; metric < 3; metric++) {
        size_t need = qnmc_nuts_state_size(QNMC_F64, metric);
        unsigned char *raw;
        unsigned char *state = aligned(need, qnmc_nuts_state_align(QNMC_F64, metric), &raw);
        qnmc_nuts_settings s;
        double x0[2] = {0.1, 0.2};
        int k;
        int divergent = 0;
        qnmc_nuts_settings_default(&s);
        s.metric = metric;
        s.warmup_draws = 200;
        EXPECT(qnmc_nuts_init_f64(state, need, &s, 5, x0, 2, walled, NULL), QNMC_OK);
        for (k = 0; k < 500; k++) {
            qnmc_stats stats;
            double x[2];
            EXPECT(qnmc_nuts_step(state, &stats), QNMC_OK);
            EXPECT(qnmc_nuts_position_f64(state, x, 2), QNMC_OK);
            CHECK(fabs(x[0]) <= 0.7 && isfinite(stats.log_density));
            divergent += stats.divergent;
        }
        CHECK(divergent > 0);
        free(raw);
    }
}

static void f32_and_hmc(void) {
    size_t dim = 4;
    float x32[4] = {0.5f, -0.5f, 1.0f, 0.0f};
    double x64[4] = {0.5, -0.5, 1.0, 0.0};
    size_t need = qnmc_nuts_state_size(QNMC_F32, QNMC_METRIC_DIAGONAL);
    unsigned char *raw;
    unsigned char *state = aligned(need, qnmc_nuts_state_align(QNMC_F32, QNMC_METRIC_DIAGONAL), &raw);
    unsigned char *raw_hmc;
    size_t hmc_need = qnmc_hmc_state_size(QNMC_F64);
    unsigned char *hmc = aligned(hmc_need, qnmc_hmc_state_align(QNMC_F64), &raw_hmc);
    qnmc_nuts_settings s;
    qnmc_stats stats;
    float out32[4];
    double out[4];
    double sum = 0.0;
    int k;
    int accepted = 0;

    qnmc_nuts_settings_default(&s);
    s.metric = QNMC_METRIC_DIAGONAL;
    s.warmup_draws = 300;
    EXPECT(qnmc_nuts_init_f32(state, need, &s, 3, x32, dim, normal_f32, &dim), QNMC_OK);
    for (k = 0; k < 1300; k++) {
        EXPECT(qnmc_nuts_step(state, &stats), QNMC_OK);
        EXPECT(qnmc_nuts_position_f32(state, out32, 4), QNMC_OK);
        if (!stats.warmup) {
            sum += (double)out32[0] * out32[0];
        }
    }
    CHECK(fabs(sum / 1000.0 - 1.0) < 0.3);
    EXPECT(qnmc_nuts_position_f64(state, out, 4), QNMC_ERROR_NOT_INITIALIZED);

    EXPECT(qnmc_hmc_state_size(3), 0u);
    EXPECT(qnmc_hmc_init_f64(hmc, hmc_need - 1, 0.3, 5, 1, x64, dim, normal_f64, &dim),
           QNMC_ERROR_BUFFER_TOO_SMALL);
    EXPECT(qnmc_hmc_init_f64(hmc, hmc_need, 0.0, 5, 1, x64, dim, normal_f64, &dim),
           QNMC_ERROR_INVALID_SETTING);
    EXPECT(qnmc_hmc_init_f64(hmc, hmc_need, 0.3, 0, 1, x64, dim, normal_f64, &dim),
           QNMC_ERROR_INVALID_SETTING);
    EXPECT(qnmc_hmc_init_f64(hmc, hmc_need, 0.3, 5, 1, x64, 0, normal_f64, &dim),
           QNMC_ERROR_INVALID_DIMENSION);
    EXPECT(qnmc_hmc_init_f64(hmc, hmc_need, 0.3, 5, 1, x64, dim, always_nan, NULL),
           QNMC_ERROR_NON_FINITE_INITIAL_STATE);
    EXPECT(qnmc_hmc_init_f64(hmc, hmc_need, 0.3, 5, 1, x64, dim, normal_f64, &dim), QNMC_OK);
    for (k = 0; k < 200; k++) {
        EXPECT(qnmc_hmc_step(hmc, &stats), QNMC_OK);
        accepted += stats.accepted;
    }
    CHECK(accepted > 100);
    EXPECT(qnmc_hmc_position_f64(hmc, out, 4), QNMC_OK);
    EXPECT(qnmc_hmc_position_f32(hmc, out32, 4), QNMC_ERROR_NOT_INITIALIZED);
    EXPECT(qnmc_nuts_step(hmc, &stats), QNMC_ERROR_NOT_INITIALIZED);
    free(raw);
    free(raw_hmc);
}

static void messages(void) {
    int code;
    for (code = -2; code <= 13; code++) {
        const char *m = qnmc_error_message(code);
        CHECK(m != NULL && strlen(m) > 0);
    }
    CHECK(strcmp(qnmc_error_message(QNMC_OK), "success") == 0);
}

int main(void) {
    nuts_bad_input();
    divergences_are_counted();
    f32_and_hmc();
    messages();
    if (failures != 0) {
        fprintf(stderr, "c api checks: %d of %d failed\n", failures, checks);
        return 1;
    }
    printf("c api checks: all %d ok\n", checks);
    return 0;
}
