/*
 * On-line calibration of a sensor with the qnmc C API (docs/C_API.md).
 *
 * A temperature sensor reads y = offset + gain * x + noise for reference
 * temperatures x; from 300 readings (synthetic, generated deterministically
 * here: offset 0.5, gain 2, noise sd 0.1) NUTS with the quasi-Newton metric
 * infers theta = (offset, gain, log sigma): 1000 warm-up draws, then 1000
 * kept draws, whose means it prints.
 *
 *   ./main                 summary and a hash of the chain
 *   ./main --print-draws   also every draw's bits (ffi/tests/c_programs.rs
 *                          compares them with the Rust API's chain)
 *
 * Built by the Makefile beside it: cc ... main.c libqnmc_ffi.a -lm.
 * No malloc: the sampler lives in a static buffer, checked against the
 * size and alignment queries.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "qnmc.h"

#define READINGS 300
#define DIM 3
#define WARMUP 1000
#define KEPT 1000
#define SEED 42u

typedef struct {
    double x[READINGS]; /* reference temperatures */
    double y[READINGS]; /* sensor readings */
} readings;

/* xorshift64 and a uniform in [0, 1): integer operations only, so the data
   are the same bits on every machine. */
static uint64_t next_u64(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double uniform(uint64_t *s) {
    return (double)(next_u64(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Approximately standard normal: the sum of 12 uniforms minus 6 (exact
   arithmetic order, no libm). */
static double normal(uint64_t *s) {
    double sum = 0.0;
    int k;
    for (k = 0; k < 12; k++) {
        sum += uniform(s);
    }
    return sum - 6.0;
}

static void make_readings(readings *data) {
    uint64_t s = 0x9E3779B97F4A7C15u;
    int i;
    for (i = 0; i < READINGS; i++) {
        double x = 4.0 * uniform(&s) - 2.0;
        data->x[i] = x;
        data->y[i] = 0.5 + 2.0 * x + 0.1 * normal(&s);
    }
}

/* log p(offset, gain, log sigma | readings) up to a constant, and its
   gradient. Priors: offset ~ N(0, 10^2), gain ~ N(1, 10^2),
   log sigma ~ N(0, 2^2). */
static double log_density(void *ctx, const double *theta, double *grad) {
    const readings *data = (const readings *)ctx;
    double a = theta[0];
    double b = theta[1];
    double s = theta[2];
    double w = exp(-2.0 * s); /* 1 / sigma^2 */
    double sr = 0.0;
    double srx = 0.0;
    double srr = 0.0;
    int i;
    for (i = 0; i < READINGS; i++) {
        double r = data->y[i] - a - b * data->x[i];
        sr += r;
        srx += r * data->x[i];
        srr += r * r;
    }
    grad[0] = w * sr - a / 100.0;
    grad[1] = w * srx - (b - 1.0) / 100.0;
    grad[2] = -(double)READINGS + w * srr - s / 4.0;
    return -(double)READINGS * s - 0.5 * w * srr - a * a / 200.0 - (b - 1.0) * (b - 1.0) / 200.0 -
           s * s / 8.0;
}

/* FNV-1a over 64-bit words, as firmware-example/src/job.rs hashes chains. */
static uint64_t fnv_word(uint64_t h, uint64_t w) {
    int k;
    for (k = 0; k < 8; k++) {
        h ^= (w >> (8 * k)) & 0xffu;
        h *= 0x100000001b3u;
    }
    return h;
}

static uint64_t bits(double v) {
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* Room for the state: static, no malloc. C99 cannot ask for the alignment
   the query gives (64 on x86-64), so main aligns a pointer into it. */
static unsigned char storage[1 << 20];

int main(int argc, char **argv) {
    static readings data;
    int print_draws = argc > 1 && strcmp(argv[1], "--print-draws") == 0;
    size_t need = qnmc_nuts_state_size(QNMC_F64, QNMC_METRIC_QUASI_NEWTON);
    size_t align = qnmc_nuts_state_align(QNMC_F64, QNMC_METRIC_QUASI_NEWTON);
    qnmc_nuts_settings settings;
    unsigned char *state;
    const double initial[DIM] = {0.0, 1.0, 0.0};
    double theta[DIM];
    double mean[DIM] = {0.0, 0.0, 0.0};
    double sigma_mean = 0.0;
    uint64_t hash = 0xcbf29ce484222325u;
    unsigned divergent = 0;
    unsigned long leapfrog = 0;
    int status;
    int k;
    int j;

    make_readings(&data);
    printf("qnmc C example: sensor calibration, %d readings, NUTS (quasi-Newton metric)\n",
           READINGS);
    printf("state: %lu bytes, align %lu (max dimension %lu, L-BFGS memory %lu)\n",
           (unsigned long)need, (unsigned long)align, (unsigned long)qnmc_max_dimension(),
           (unsigned long)qnmc_lbfgs_memory());
    if (need == 0 || align == 0 || need + align > sizeof storage) {
        fprintf(stderr, "the static buffer is too small for this build of qnmc\n");
        return 1;
    }
    state = storage + (align - (uintptr_t)storage % align) % align;

    qnmc_nuts_settings_default(&settings);
    settings.warmup_draws = WARMUP;
    status = qnmc_nuts_init_f64(state, need, &settings, SEED, initial, DIM,
                                log_density, &data);
    if (status != QNMC_OK) {
        fprintf(stderr, "init failed: %s\n", qnmc_error_message(status));
        return 1;
    }
    for (k = 0; k < WARMUP + KEPT; k++) {
        qnmc_stats stats;
        status = qnmc_nuts_step(state, &stats);
        if (status == QNMC_OK) {
            status = qnmc_nuts_position_f64(state, theta, DIM);
        }
        if (status != QNMC_OK) {
            fprintf(stderr, "draw %d failed: %s\n", k, qnmc_error_message(status));
            return 1;
        }
        for (j = 0; j < DIM; j++) {
            hash = fnv_word(hash, bits(theta[j]));
        }
        hash = fnv_word(hash, bits(stats.step_size));
        hash = fnv_word(hash, ((uint64_t)stats.leapfrog_steps << 8) | (uint64_t)stats.divergent);
        if (print_draws) {
            printf("draw %d %d %016llx %016llx %016llx %016llx %u\n", k, stats.warmup,
                   (unsigned long long)bits(theta[0]), (unsigned long long)bits(theta[1]),
                   (unsigned long long)bits(theta[2]), (unsigned long long)bits(stats.log_density),
                   stats.leapfrog_steps);
        }
        if (!stats.warmup) {
            for (j = 0; j < DIM; j++) {
                mean[j] += theta[j] / KEPT;
            }
            sigma_mean += exp(theta[2]) / KEPT;
            divergent += (unsigned)stats.divergent;
            leapfrog += stats.leapfrog_steps;
        }
    }
    printf("warm-up %d draws, kept %d draws: %u divergent, %.1f leapfrog steps per draw\n", WARMUP,
           KEPT, divergent, (double)leapfrog / KEPT);
    printf("posterior mean: offset %.4f (true 0.5), gain %.4f (true 2), sigma %.4f (true 0.1)\n",
           mean[0], mean[1], sigma_mean);
    printf("chain hash %016llx\n", (unsigned long long)hash);
    return 0;
}
