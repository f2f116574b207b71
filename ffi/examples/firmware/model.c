/* The sensor-calibration model: see model.h. Compile with -ffp-contract=off. */
#include "model.h"

#include <string.h>

/* xorshift64 and a uniform in [0, 1): integer operations only (as in
   ffi/examples/host/main.c), so the data are the same bits on every machine. */
static uint64_t next_u64(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double uniform(uint64_t *s) {
    return (double)(next_u64(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Approximately standard normal: the sum of 12 uniforms minus 6. */
static double normal(uint64_t *s) {
    double sum = 0.0;
    int k;
    for (k = 0; k < 12; k++) {
        sum += uniform(s);
    }
    return sum - 6.0;
}

void model_make_readings(model_readings *data) {
    uint64_t s = 0x9E3779B97F4A7C15u;
    int i;
    for (i = 0; i < MODEL_READINGS; i++) {
        double x = 4.0 * uniform(&s) - 2.0;
        data->x[i] = x;
        data->y[i] = 0.5 + 2.0 * x + 0.1 * normal(&s);
    }
}

/* 2^k for -1022 <= k <= 1023, built from its bits (exact). */
static double pow2(int k) {
    uint64_t u = (uint64_t)(k + 1023) << 52;
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

double model_exp(double x) {
    static const double ln2_hi = 6.93147180369123816490e-01; /* low 32 bits zero */
    static const double ln2_lo = 1.90821492927058770002e-10;
    static const double inv_ln2 = 1.44269504088896338700e+00;
    static const double p1 = 1.66666666666666019037e-01;
    static const double p2 = -2.77777777770155933842e-03;
    static const double p3 = 6.61375632143793436117e-05;
    static const double p4 = -1.65339022054652515390e-06;
    static const double p5 = 4.13813679705723846039e-08;
    double hi, lo, r, t, c, y;
    int k;
    if (x != x) {
        return x; /* NaN */
    }
    if (x > 709.782712893383973096) {
        return pow2(1023) * 2.0; /* overflow: +inf */
    }
    if (x < -745.133219101941108420) {
        return 0.0;
    }
    /* x = k ln2 + r, |r| <= ln2 / 2; k * ln2_hi is exact (|k| <= 1075). */
    k = (int)(x * inv_ln2 + (x < 0.0 ? -0.5 : 0.5));
    hi = x - (double)k * ln2_hi;
    lo = (double)k * ln2_lo;
    r = hi - lo;
    /* e^r = 1 + 2r / (R(r^2) - r), R from fdlibm's Remez fit. */
    t = r * r;
    c = r - t * (p1 + t * (p2 + t * (p3 + t * (p4 + t * p5))));
    y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
    if (k >= -1021) {
        return k == 1024 ? y * 2.0 * pow2(1023) : y * pow2(k);
    }
    return y * pow2(k + 1000) * pow2(-1000); /* subnormal result */
}

/* Priors: offset ~ N(0, 10^2), gain ~ N(1, 10^2), log sigma ~ N(0, 2^2);
   the same density as ffi/examples/host/main.c, with model_exp for exp. */
double model_log_density(void *ctx, const double *theta, double *grad) {
    const model_readings *data = (const model_readings *)ctx;
    double a = theta[0];
    double b = theta[1];
    double s = theta[2];
    double w = model_exp(-2.0 * s); /* 1 / sigma^2 */
    double sr = 0.0;
    double srx = 0.0;
    double srr = 0.0;
    int i;
    for (i = 0; i < MODEL_READINGS; i++) {
        double r = data->y[i] - a - b * data->x[i];
        sr += r;
        srx += r * data->x[i];
        srr += r * r;
    }
    grad[0] = w * sr - a / 100.0;
    grad[1] = w * srx - (b - 1.0) / 100.0;
    grad[2] = -(double)MODEL_READINGS + w * srr - s / 4.0;
    return -(double)MODEL_READINGS * s - 0.5 * w * srr - a * a / 200.0 -
           (b - 1.0) * (b - 1.0) / 200.0 - s * s / 8.0;
}
