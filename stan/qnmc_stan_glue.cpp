// The C functions of BridgeStan's API that qnmc calls, for one Stan model,
// written for qnmc (not taken from BridgeStan). `stan/build-model.py`
// compiles this file with the C++ that stanc generated from a `.stan` file
// (passed as QNMC_STAN_MODEL_HPP) into a shared library that `qnmc run
// --model` loads exactly like a library built by BridgeStan.
//
// Exported (same names, argument lists and conventions as bridgestan.h):
//   bs_model_construct, bs_model_destruct, bs_free_error_msg, bs_name,
//   bs_model_info, bs_param_names, bs_param_unc_names, bs_param_num,
//   bs_param_unc_num, bs_param_constrain, bs_param_unconstrain_json (for
//   `qnmc run --init`), bs_log_density, bs_log_density_gradient.
// Not exported: the Hessian functions, the RNG functions, bs_param_unconstrain
// (from an array), the print callback, and the bs_*_version numbers (this is
// not BridgeStan, so it does not claim one of its versions).
//
// Conventions: a function that can fail returns 0 on success and -1 on
// failure; on failure, when `error_msg` is not null, *error_msg points to a
// message allocated with malloc that the caller frees with
// bs_free_error_msg. Stan's print() statements go to standard output.

#include QNMC_STAN_MODEL_HPP

#include <stan/io/empty_var_context.hpp>
#include <stan/io/json/json_data.hpp>
#include <stan/math/rev/core/chainablestack.hpp>
#include <stan/model/log_prob_grad.hpp>
#include <stan/model/log_prob_propto.hpp>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#define QNMC_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// Joins names with commas, the form bs_param_names returns.
std::string join_names(const std::vector<std::string>& names) {
  std::string joined;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) joined += ',';
    joined += names[i];
  }
  return joined;
}

// Stores `message` in *error_msg (if asked for) as a malloc'd C string.
void set_error(char** error_msg, const std::string& message) {
  if (error_msg == nullptr) return;
  char* copy = static_cast<char*>(std::malloc(message.size() + 1));
  if (copy != nullptr) std::memcpy(copy, message.c_str(), message.size() + 1);
  *error_msg = copy;
}

// With STAN_THREADS each thread needs its own autodiff stack; a thread
// that qnmc (not TBB) created gets one on its first call here.
void ensure_autodiff_stack() {
  static thread_local stan::math::ChainableStack autodiff_stack;
  (void)autodiff_stack;
}

}  // namespace

// One model instance with its data, and the name lists computed once.
struct bs_model {
  stan_model* model;
  std::string name;
  std::string info;
  std::string names_params;           // parameters
  std::string names_params_tp;        // + transformed parameters
  std::string names_params_gq;        // + generated quantities
  std::string names_params_tp_gq;     // all three
  std::string names_unconstrained;
  int num_params, num_params_tp, num_params_gq, num_params_tp_gq;
  int num_unconstrained;
};

QNMC_EXPORT void bs_free_error_msg(char* error_msg) { std::free(error_msg); }

QNMC_EXPORT bs_model* bs_model_construct(const char* data, unsigned int seed,
                                         char** error_msg) {
  bs_model* m = nullptr;
  try {
    ensure_autodiff_stack();
    std::string text = data == nullptr ? std::string() : std::string(data);
    stan::model::model_base* base;
    if (text.empty()) {
      stan::io::empty_var_context empty;
      base = &new_model(empty, seed, &std::cout);
    } else {
      std::istringstream stream(text);
      stan::json::json_data context(stream);
      base = &new_model(context, seed, &std::cout);
    }
    m = new bs_model();
    m->model = static_cast<stan_model*>(base);
    m->name = m->model->model_name();
    m->info = "qnmc Stan glue; model " + m->name +
              " compiled by stan/build-model.py";
    std::vector<std::string> names;
    const bool flags[4][2] = {{false, false}, {true, false}, {false, true},
                              {true, true}};
    std::string* lists[4] = {&m->names_params, &m->names_params_tp,
                             &m->names_params_gq, &m->names_params_tp_gq};
    int* counts[4] = {&m->num_params, &m->num_params_tp, &m->num_params_gq,
                      &m->num_params_tp_gq};
    for (int k = 0; k < 4; ++k) {
      names.clear();
      m->model->constrained_param_names(names, flags[k][0], flags[k][1]);
      *lists[k] = join_names(names);
      *counts[k] = static_cast<int>(names.size());
    }
    names.clear();
    m->model->unconstrained_param_names(names, false, false);
    m->names_unconstrained = join_names(names);
    m->num_unconstrained = static_cast<int>(m->model->num_params_r());
    return m;
  } catch (const std::exception& e) {
    if (m != nullptr) {
      delete m->model;
      delete m;
    }
    set_error(error_msg, std::string("error constructing the model: ") + e.what());
  } catch (...) {
    set_error(error_msg, "error constructing the model: unknown exception");
  }
  return nullptr;
}

QNMC_EXPORT void bs_model_destruct(bs_model* m) {
  if (m == nullptr) return;
  delete m->model;
  delete m;
}

QNMC_EXPORT const char* bs_name(const bs_model* m) { return m->name.c_str(); }

QNMC_EXPORT const char* bs_model_info(const bs_model* m) {
  return m->info.c_str();
}

QNMC_EXPORT const char* bs_param_names(const bs_model* m, bool include_tp,
                                       bool include_gq) {
  if (include_tp && include_gq) return m->names_params_tp_gq.c_str();
  if (include_tp) return m->names_params_tp.c_str();
  if (include_gq) return m->names_params_gq.c_str();
  return m->names_params.c_str();
}

QNMC_EXPORT const char* bs_param_unc_names(const bs_model* m) {
  return m->names_unconstrained.c_str();
}

QNMC_EXPORT int bs_param_num(const bs_model* m, bool include_tp,
                             bool include_gq) {
  if (include_tp && include_gq) return m->num_params_tp_gq;
  if (include_tp) return m->num_params_tp;
  if (include_gq) return m->num_params_gq;
  return m->num_params;
}

QNMC_EXPORT int bs_param_unc_num(const bs_model* m) {
  return m->num_unconstrained;
}

// `rng` must be null: this glue writes parameters and transformed
// parameters, not generated quantities (they would need Stan's RNG).
QNMC_EXPORT int bs_param_constrain(const bs_model* m, bool include_tp,
                                   bool include_gq, const double* theta_unc,
                                   double* theta, void* rng,
                                   char** error_msg) {
  if (include_gq || rng != nullptr) {
    set_error(error_msg,
              "generated quantities are not written by qnmc's Stan glue");
    return -1;
  }
  try {
    ensure_autodiff_stack();
    std::vector<double> params_r(theta_unc, theta_unc + m->num_unconstrained);
    std::vector<int> params_i;
    std::vector<double> values;
    static thread_local stan::rng_t unused_rng(0);
    m->model->write_array(unused_rng, params_r, params_i, values, include_tp,
                          false, &std::cout);
    std::copy(values.begin(), values.end(), theta);
    return 0;
  } catch (const std::exception& e) {
    set_error(error_msg, std::string("param_constrain: ") + e.what());
  } catch (...) {
    set_error(error_msg, "param_constrain: unknown exception");
  }
  return -1;
}

// The unconstrained point of the constrained values in `json` (Stan's init
// format): what `qnmc run --init FILE.json` starts from.
QNMC_EXPORT int bs_param_unconstrain_json(const bs_model* m, const char* json,
                                          double* theta_unc,
                                          char** error_msg) {
  try {
    ensure_autodiff_stack();
    std::istringstream stream(json == nullptr ? std::string() : std::string(json));
    stan::json::json_data context(stream);
    std::vector<int> params_i;
    std::vector<double> params_r;
    std::ostringstream messages;
    m->model->transform_inits(context, params_i, params_r, &messages);
    if (static_cast<int>(params_r.size()) != m->num_unconstrained) {
      set_error(error_msg, "param_unconstrain_json: the init gave " +
                               std::to_string(params_r.size()) +
                               " unconstrained values, the model has " +
                               std::to_string(m->num_unconstrained));
      return -1;
    }
    std::copy(params_r.begin(), params_r.end(), theta_unc);
    return 0;
  } catch (const std::exception& e) {
    set_error(error_msg, std::string("param_unconstrain_json: ") + e.what());
  } catch (...) {
    set_error(error_msg, "param_unconstrain_json: unknown exception");
  }
  return -1;
}

template <bool propto, bool jacobian>
static double log_density_value(const bs_model* m,
                                std::vector<double>& params_r) {
  std::vector<int> params_i;
  if (propto) {
    // Dropping constants needs autodiff types, as in Stan's services.
    return stan::model::log_prob_propto<jacobian>(*m->model, params_r,
                                                  params_i, &std::cout);
  }
  return m->model->template log_prob<false, jacobian>(params_r, params_i,
                                                      &std::cout);
}

QNMC_EXPORT int bs_log_density(const bs_model* m, bool propto, bool jacobian,
                               const double* theta_unc, double* lp,
                               char** error_msg) {
  try {
    ensure_autodiff_stack();
    std::vector<double> params_r(theta_unc, theta_unc + m->num_unconstrained);
    if (propto && jacobian) {
      *lp = log_density_value<true, true>(m, params_r);
    } else if (propto) {
      *lp = log_density_value<true, false>(m, params_r);
    } else if (jacobian) {
      *lp = log_density_value<false, true>(m, params_r);
    } else {
      *lp = log_density_value<false, false>(m, params_r);
    }
    return 0;
  } catch (const std::exception& e) {
    set_error(error_msg, std::string("log_density: ") + e.what());
  } catch (...) {
    set_error(error_msg, "log_density: unknown exception");
  }
  return -1;
}

QNMC_EXPORT int bs_log_density_gradient(const bs_model* m, bool propto,
                                        bool jacobian,
                                        const double* theta_unc, double* val,
                                        double* grad, char** error_msg) {
  try {
    ensure_autodiff_stack();
    std::vector<double> params_r(theta_unc, theta_unc + m->num_unconstrained);
    std::vector<int> params_i;
    std::vector<double> gradient;
    double lp;
    if (propto && jacobian) {
      lp = stan::model::log_prob_grad<true, true>(*m->model, params_r,
                                                  params_i, gradient,
                                                  &std::cout);
    } else if (propto) {
      lp = stan::model::log_prob_grad<true, false>(*m->model, params_r,
                                                   params_i, gradient,
                                                   &std::cout);
    } else if (jacobian) {
      lp = stan::model::log_prob_grad<false, true>(*m->model, params_r,
                                                   params_i, gradient,
                                                   &std::cout);
    } else {
      lp = stan::model::log_prob_grad<false, false>(*m->model, params_r,
                                                    params_i, gradient,
                                                    &std::cout);
    }
    *val = lp;
    std::copy(gradient.begin(), gradient.end(), grad);
    return 0;
  } catch (const std::exception& e) {
    set_error(error_msg, std::string("log_density_gradient: ") + e.what());
  } catch (...) {
    set_error(error_msg, "log_density_gradient: unknown exception");
  }
  return -1;
}
