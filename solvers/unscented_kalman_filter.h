// solvers::RunSquareRootUkf — the square-root unscented Kalman filter with scaled sigma points
// (Urrea & Agramonte (2022) §3; van der Merwe & Wan (2001)) on a DiscreteStateSpaceSystem with
// additive noise.
//
// Scaled unscented transform, L = n states, 2L + 1 points:
//   lambda = alpha² (L + kappa) − L,  gamma = sqrt(L + lambda),
//   X_0 = x,  X_i = x + gamma S_i,  X_{L+i} = x − gamma S_i  (S_i: column i of S, P = S Sᵀ),
//   Wm_0 = lambda / (L + lambda),  Wc_0 = Wm_0 + 1 − alpha² + beta,  W_i = 1 / (2 (L + lambda)).
// The covariance is carried only as its lower-triangular Cholesky factor S:
//   predict: X⁻_i = f_k(X_i), x⁻ = Σ Wm_i X⁻_i,
//            S⁻ = qr([sqrt(W_1)(X⁻_{1..2L} − x⁻), sqrt(Q)]) then the rank-one update (Wc_0 >= 0)
//            or downdate (Wc_0 < 0) with sqrt(|Wc_0|)(X⁻_0 − x⁻);
//   update:  sigma points redrawn from (x⁻, S⁻), Y_i = h_k(X_i), ŷ = Σ Wm_i Y_i,
//            S_y from the same QR + rank-one step with sqrt(R), P_xy = Σ Wc_i (X_i − x⁻)(Y_i − ŷ)ᵀ,
//            K = P_xy S_y⁻ᵀ S_y⁻¹,  x = x⁻ + K (y − ŷ),  S = downdate of S⁻ by the l columns of K S_y.
// P = S Sᵀ is positive definite exactly when every diagonal element of S is non-zero; a
// downdate that would make a pivot non-positive is reported as a loss of positive definiteness
// (the filter stops, record->message names the sample) instead of being patched. The smallest
// diagonal element of S over the run is returned so a study can assert the margin.
#ifndef DYNID_SOLVERS_UNSCENTED_KALMAN_FILTER_H_
#define DYNID_SOLVERS_UNSCENTED_KALMAN_FILTER_H_

#include <string>

#include <Eigen/Core>

#include "dynid/solvers/kalman_smoother.h"

namespace dynid::solvers {

struct UkfOptions {
  KalmanFilterOptions filter;  // Q, R, x0, P0
  double alpha = 1.0;          // spread, (0, 1]; small alpha makes Wc_0 very negative
  double beta = 2.0;           // prior knowledge of the distribution (2: Gaussian), >= 0
  double kappa = 0.0;          // secondary scaling, >= 0 (here; L + kappa > 0 is what is needed)
  bool IsValid(const DiscreteStateSpaceSystem& system, std::string* why) const;
};

struct UkfResult {
  KalmanFilterRecord record;  // moments per sample (covariances = S Sᵀ), for RunRtsSmoother
  double min_sqrt_diagonal = 0.0;  // min over all samples and both steps of min_i |S_ii|
  bool positive_definite_throughout = false;
  int sigma_point_evaluations = 0;  // calls of f and h
};

bool RunSquareRootUkf(const DiscreteStateSpaceSystem& system, const Eigen::MatrixXd& measurements,
                      const UkfOptions& options, UkfResult* result, std::string* error);

// Rank-one update (sign > 0) or downdate (sign < 0) of a lower-triangular Cholesky factor:
// L Lᵀ + sign x xᵀ = L' L'ᵀ. Returns false (L unchanged in meaning) when a downdate would make
// a pivot non-positive, i.e. the result would not be positive definite. Exposed for tests.
bool CholeskyRankOneUpdate(Eigen::MatrixXd* lower, Eigen::VectorXd x, double sign);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_UNSCENTED_KALMAN_FILTER_H_
