/*
 * The C firmware example (docs/C_API.md, "The C firmware"; docs/EMBEDDED.md):
 * on-line calibration of a sensor with the qnmc C API on a Cortex-M4F, and
 * the same program on the host.
 *
 * 300 readings y = offset + gain * x + noise (model.c, generated with integer
 * operations), NUTS with the default quasi-Newton metric and warm-up
 * (qnmc_nuts_settings_default): 1000 warm-up draws, 1000 kept draws. It
 * prints the posterior means and an FNV-1a hash of the bits of every draw;
 * ffi/examples/firmware/check.sh runs it under QEMU and on the host and
 * requires the same lines. Exit code 0 only if the sampler ran and the means
 * are near the truth.
 *
 * No malloc, no printf: the sampler lives in a static buffer whose size is
 * a compile-time constant checked against qnmc_nuts_state_size() at run
 * time, and the lines are formatted here.
 */
#include <stdint.h>
#include <string.h>

#include "model.h"
#include "platform.h"
#include "qnmc.h"

#define WARMUP 1000
#define KEPT 1000
#ifndef SEED
#define SEED 42u /* check.sh builds a host negative control with another seed */
#endif

/* Room for the NUTS state: the firmware's library is built with
   QNMC_FFI_MAX_DIM=3 (a 15 928-byte state, alignment 8, on thumbv7em); the
   host's with the default 32 (49 728 bytes, alignment 64). main checks it. */
#ifndef STATE_BYTES
#if defined(__arm__)
#define STATE_BYTES 15928
#else
#define STATE_BYTES (49728 + 64)
#endif
#endif

static union {
    uint64_t align;
    unsigned char bytes[STATE_BYTES];
} storage;

static model_readings data;

/* ---- a line buffer and the few formats the log needs ---- */

static char line[160];
static unsigned line_len;

static void put_str(const char *s) {
    while (*s != '\0' && line_len + 1 < sizeof line) {
        line[line_len++] = *s++;
    }
    line[line_len] = '\0';
}

static void put_uint(unsigned long v) {
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0) {
        char c[2] = {digits[--n], '\0'};
        put_str(c);
    }
}

static void put_hex64(uint64_t v) {
    static const char hex[] = "0123456789abcdef";
    char s[17];
    int k;
    for (k = 0; k < 16; k++) {
        s[k] = hex[(v >> (60 - 4 * k)) & 0xfu];
    }
    s[16] = '\0';
    put_str(s);
}

/* v with `places` decimals, rounded half away from zero (|v| < 4e9 / 10^places). */
static void put_fixed(double v, int places) {
    unsigned long scale = 1;
    unsigned long scaled;
    unsigned long frac;
    int k;
    for (k = 0; k < places; k++) {
        scale *= 10;
    }
    if (v < 0.0) {
        put_str("-");
        v = -v;
    }
    scaled = (unsigned long)(v * (double)scale + 0.5);
    put_uint(scaled / scale);
    put_str(".");
    frac = scaled % scale;
    for (k = places - 1; k >= 0; k--) {
        unsigned long d = frac;
        int j;
        for (j = 0; j < k; j++) {
            d /= 10;
        }
        {
            char c[2] = {(char)('0' + d % 10), '\0'};
            put_str(c);
        }
    }
}

static void end_line(void) {
    put_str("\n");
    platform_write(line);
    line_len = 0;
    line[0] = '\0';
}

/* ---- the chain's hash: FNV-1a over 64-bit words, as ffi/examples/host/main.c ---- */

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

static int fail(const char *what, int status) {
    put_str("FAIL: ");
    put_str(what);
    put_str(": ");
    put_str(qnmc_error_message(status));
    end_line();
    return 1;
}

int main(void) {
    size_t need = qnmc_nuts_state_size(QNMC_F64, QNMC_METRIC_QUASI_NEWTON);
    size_t align = qnmc_nuts_state_align(QNMC_F64, QNMC_METRIC_QUASI_NEWTON);
    const double initial[MODEL_DIM] = {0.0, 1.0, 0.0};
    double theta[MODEL_DIM];
    double mean[MODEL_DIM] = {0.0, 0.0, 0.0};
    double sigma_mean = 0.0;
    uint64_t hash = 0xcbf29ce484222325u;
    unsigned long divergent = 0;
    unsigned long leapfrog = 0;
    unsigned long stack_size;
    unsigned long stack_peak;
    qnmc_nuts_settings settings;
    unsigned char *state;
    int status;
    int k;
    int j;
    int ok;

    put_str("qnmc C firmware example on ");
    put_str(platform_name);
    put_str(": sensor calibration, ");
    put_uint(MODEL_READINGS);
    put_str(" readings, NUTS (quasi-Newton metric), f64");
    end_line();
    put_str("state: ");
    put_uint(need);
    put_str(" bytes, align ");
    put_uint(align);
    put_str(" (max dimension ");
    put_uint(qnmc_max_dimension());
    put_str(", L-BFGS memory ");
    put_uint(qnmc_lbfgs_memory());
    put_str(", max tree depth ");
    put_uint(qnmc_max_tree_depth());
    put_str("), buffer ");
    put_uint(sizeof storage.bytes);
    put_str(" bytes");
    end_line();
    if (need == 0 || align == 0 || need > sizeof storage.bytes ||
        (align > sizeof storage.align && need + align - 1 > sizeof storage.bytes)) {
        put_str("FAIL: the static buffer is too small for this build of qnmc (needs ");
        put_uint(need);
        put_str(" bytes, align ");
        put_uint(align);
        put_str("): set STATE_BYTES");
        end_line();
        return 1;
    }
    state = storage.bytes + (align - (uintptr_t)storage.bytes % align) % align;

    model_make_readings(&data);
    qnmc_nuts_settings_default(&settings);
    settings.warmup_draws = WARMUP;
    status = qnmc_nuts_init_f64(state, need, &settings, SEED, initial, MODEL_DIM,
                                model_log_density, &data);
    if (status != QNMC_OK) {
        return fail("init", status);
    }
    for (k = 0; k < WARMUP + KEPT; k++) {
        qnmc_stats stats;
        status = qnmc_nuts_step(state, &stats);
        if (status == QNMC_OK) {
            status = qnmc_nuts_position_f64(state, theta, MODEL_DIM);
        }
        if (status != QNMC_OK) {
            return fail("draw", status);
        }
        for (j = 0; j < MODEL_DIM; j++) {
            hash = fnv_word(hash, bits(theta[j]));
        }
        hash = fnv_word(hash, bits(stats.step_size));
        hash = fnv_word(hash, ((uint64_t)stats.leapfrog_steps << 8) | (uint64_t)stats.divergent);
        if (!stats.warmup) {
            for (j = 0; j < MODEL_DIM; j++) {
                mean[j] += theta[j] / KEPT;
            }
            sigma_mean += model_exp(theta[2]) / KEPT;
            divergent += (unsigned long)stats.divergent;
            leapfrog += stats.leapfrog_steps;
        }
    }

    /* The lines check.sh compares with the host: "draws", "posterior mean",
       "chain hash". */
    put_str("draws: warm-up ");
    put_uint(WARMUP);
    put_str(", kept ");
    put_uint(KEPT);
    put_str(": ");
    put_uint(divergent);
    put_str(" divergent, ");
    put_fixed((double)leapfrog / KEPT, 2);
    put_str(" leapfrog steps per draw");
    end_line();
    put_str("posterior mean: offset ");
    put_fixed(mean[0], 4);
    put_str(" (true 0.5), gain ");
    put_fixed(mean[1], 4);
    put_str(" (true 2), sigma ");
    put_fixed(sigma_mean, 4);
    put_str(" (true 0.1)");
    end_line();
    put_str("chain hash ");
    put_hex64(hash);
    end_line();

    stack_peak = platform_stack_peak(&stack_size);
    if (stack_size != 0) {
        put_str("peak stack: ");
        put_uint(stack_peak);
        put_str(" of ");
        put_uint(stack_size);
        put_str(" bytes");
        end_line();
    }
    /* The data were made with offset 0.5, gain 2, sigma 0.1 (300 readings:
       posterior sds about 0.006, 0.005, 0.004). */
    ok = divergent == 0 && mean[0] > 0.45 && mean[0] < 0.55 && mean[1] > 1.95 &&
         mean[1] < 2.05 && sigma_mean > 0.08 && sigma_mean < 0.12;
    put_str(ok ? "result: PASS" : "result: FAIL (posterior means or divergences)");
    end_line();
    return ok ? 0 : 1;
}
