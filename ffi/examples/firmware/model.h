/*
 * The sensor-calibration model shared by the C firmware (built for
 * Cortex-M4F) and its host build: the same source, compiled by both
 * compilers, so both run the same function (docs/C_API.md, "The C firmware").
 *
 * A temperature sensor reads y = offset + gain * x + noise for reference
 * temperatures x. MODEL_READINGS synthetic readings (offset 0.5, gain 2,
 * noise sd 0.1) are generated with integer operations; the parameters are
 * theta = (offset, gain, log sigma), as in ffi/examples/host/main.c.
 *
 * Portable bits: everything here uses only + - * / on IEEE doubles (and
 * integer operations), no libm, so the log density is the same bits on every
 * machine that rounds IEEE double arithmetic correctly (x86-64 SSE2, the
 * Arm soft-float routines, ...) when compiled with -ffp-contract=off (no fused
 * multiply-add). The one transcendental function, exp, is model_exp below
 * (fdlibm's algorithm, about 1 ulp), not the C library's: newlib's and glibc's
 * exp may differ in the last bit.
 */
#ifndef QNMC_FIRMWARE_MODEL_H
#define QNMC_FIRMWARE_MODEL_H

#include <stdint.h>

#define MODEL_READINGS 300
#define MODEL_DIM 3

typedef struct {
    double x[MODEL_READINGS]; /* reference temperatures */
    double y[MODEL_READINGS]; /* sensor readings */
} model_readings;

/* Fills `data` with the synthetic readings (the same bits everywhere). */
void model_make_readings(model_readings *data);

/* log p(offset, gain, log sigma | readings) up to a constant, and its gradient
   in grad[0..3): the qnmc_log_density_f64 callback, ctx = model_readings. */
double model_log_density(void *ctx, const double *theta, double *grad);

/* e^x with + - * / only: fdlibm's range reduction and rational
   approximation (error below 1 ulp); the same bits on every IEEE machine. */
double model_exp(double x);

#endif
