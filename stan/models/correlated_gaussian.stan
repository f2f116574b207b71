// N(0, 11' + 4I) in D dimensions: the QNHMC paper's benchmark, qnmc's
// built-in `gaussian` target, written in Stan so that a compiled Stan model
// can be checked against exact moments and a hand-written gradient.
data {
  int<lower=1> D;
}
transformed data {
  matrix[D, D] L = cholesky_decompose(add_diag(rep_matrix(1.0, D, D), 4.0));
}
parameters {
  vector[D] x;
}
model {
  x ~ multi_normal_cholesky(rep_vector(0.0, D), L);
}
