/* A stand-in for a Stan model library, for the tests of `qnmc --model`
 * that must run without Stan: it exports the BridgeStan C functions qnmc
 * calls, with BridgeStan's signatures and error conventions.
 *
 * The model: mu ~ N(1, 2), sigma ~ lognormal(0, 0.5) (sigma > 0, sampled as
 * s = log sigma with the Jacobian, so s ~ N(0, 0.5) exactly), and a
 * transformed parameter `scale_sq = sigma^2`. Reported: mu, sigma, scale_sq.
 *
 * The data string steers the failure modes the tests need:
 *   contains "reject_data"   -> bs_model_construct fails
 *   contains "throw_always"  -> every log density evaluation fails
 *   contains "throw_far"     -> evaluations with |mu - 1| > 3 fail
 *   contains "no_parameters" -> bs_param_unc_num returns 0
 * Built with -DQNMC_MOCK_NO_GRADIENT it lacks bs_log_density_gradient. */

#include <stdio.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int throw_always;
  int throw_far;
  int no_parameters;
} mock_model;

static char *copy_text(const char *text) {
  char *copy = malloc(strlen(text) + 1);
  if (copy) strcpy(copy, text);
  return copy;
}

void bs_free_error_msg(char *error_msg) { free(error_msg); }

mock_model *bs_model_construct(const char *data, unsigned int seed,
                               char **error_msg) {
  (void)seed;
  if (data && strstr(data, "reject_data")) {
    if (error_msg) *error_msg = copy_text("variable does not exist; variable name=N");
    return NULL;
  }
  mock_model *m = calloc(1, sizeof(mock_model));
  if (!m) return NULL;
  m->throw_always = data && strstr(data, "throw_always") != NULL;
  m->throw_far = data && strstr(data, "throw_far") != NULL;
  m->no_parameters = data && strstr(data, "no_parameters") != NULL;
  return m;
}

void bs_model_destruct(mock_model *m) { free(m); }

const char *bs_name(const mock_model *m) {
  (void)m;
  return "mock_model";
}

const char *bs_model_info(const mock_model *m) {
  (void)m;
  return "qnmc test mock";
}

const char *bs_param_names(const mock_model *m, bool include_tp, bool include_gq) {
  (void)m;
  (void)include_gq;
  return include_tp ? "mu,sigma,scale_sq" : "mu,sigma";
}

int bs_param_num(const mock_model *m, bool include_tp, bool include_gq) {
  (void)m;
  (void)include_gq;
  return include_tp ? 3 : 2;
}

int bs_param_unc_num(const mock_model *m) { return m->no_parameters ? 0 : 2; }

int bs_param_constrain(const mock_model *m, bool include_tp, bool include_gq,
                       const double *theta_unc, double *theta, void *rng,
                       char **error_msg) {
  (void)m;
  if (include_gq || rng) {
    if (error_msg) *error_msg = copy_text("mock: no generated quantities");
    return -1;
  }
  theta[0] = theta_unc[0];
  theta[1] = exp(theta_unc[1]);
  if (include_tp) theta[2] = theta[1] * theta[1];
  return 0;
}

/* The value after "name": in a flat JSON object; 0 when absent. */
static int json_number(const char *json, const char *name, double *value) {
  char key[32];
  snprintf(key, sizeof key, "\"%s\"", name);
  const char *at = strstr(json, key);
  if (!at) return 0;
  at = strchr(at + strlen(key), ':');
  if (!at) return 0;
  char *end;
  *value = strtod(at + 1, &end);
  return end != at + 1;
}

/* Stan's init format for mu and sigma -> (mu, log sigma). */
int bs_param_unconstrain_json(const mock_model *m, const char *json,
                              double *theta_unc, char **error_msg) {
  double mu, sigma;
  (void)m;
  if (!json_number(json, "mu", &mu) || !json_number(json, "sigma", &sigma)) {
    if (error_msg) *error_msg = copy_text("mock: variable does not exist; the init needs mu and sigma");
    return -1;
  }
  if (!(sigma > 0)) {
    if (error_msg) *error_msg = copy_text("mock: lb_free: Lower bounded variable is -1, but must be >= 0");
    return -1;
  }
  theta_unc[0] = mu;
  theta_unc[1] = log(sigma);
  return 0;
}

#ifndef QNMC_MOCK_NO_GRADIENT
int bs_log_density_gradient(const mock_model *m, bool propto, bool jacobian,
                            const double *theta_unc, double *val, double *grad,
                            char **error_msg) {
  double mu = theta_unc[0], s = theta_unc[1];
  if (!propto || !jacobian) {
    if (error_msg) *error_msg = copy_text("mock: only propto = jacobian = 1");
    return -1;
  }
  if (m->throw_always || (m->throw_far && fabs(mu - 1.0) > 3.0)) {
    if (error_msg)
      *error_msg = copy_text("Exception: normal_lpdf: Location parameter is inf (in 'mock.stan', line 7)");
    return -1;
  }
  /* log N(mu | 1, 2) + log N(s | 0, 0.5), constants dropped. */
  *val = -0.5 * (mu - 1.0) * (mu - 1.0) / 4.0 - 0.5 * s * s / 0.25;
  grad[0] = -(mu - 1.0) / 4.0;
  grad[1] = -s / 0.25;
  return 0;
}
#endif
