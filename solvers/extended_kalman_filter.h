// solvers::RunExtendedKalmanFilter — the discrete-time extended Kalman filter on a
// DiscreteStateSpaceSystem (solvers/kalman_smoother.h; Urrea & Agramonte (2022) §3).
//
//   sample 0: update of the prior (x0, P0);
//   predict k → k+1:  x⁻ = f_k(x_k),  P⁻ = F P Fᵀ + Q,  F = ∂f_k/∂x at x_k, C_k = P_k Fᵀ;
//   update at k:  e = y_k − h_k(x⁻), A = H P⁻ Hᵀ + R, K = P⁻ Hᵀ A⁻¹, x = x⁻ + K e,
//                 P = (I − K H) P⁻ (I − K H)ᵀ + K R Kᵀ (Joseph form, symmetrised).
// With a forward-Euler f_k (x + Δt ẋ) this is the EKF of the SCARA study as published; the
// continuous–discrete variant is solvers/continuous_discrete_ekf.h. The record feeds
// RunRtsSmoother. Joint state–parameter estimation is the same filter on an augmented state
// (solvers/mechanical_state_space.h).
#ifndef DYNID_SOLVERS_EXTENDED_KALMAN_FILTER_H_
#define DYNID_SOLVERS_EXTENDED_KALMAN_FILTER_H_

#include <string>

#include <Eigen/Core>

#include "dynid/solvers/kalman_smoother.h"

namespace dynid::solvers {

// EkfOptions: the filter's settings (Q, R, x0, P0, as for every filter of kalman_smoother.h) and,
// with second_order, the truncated (Gaussian) second-order filter (Jazwinski (1970); Gelb (1974)
// §6.1), which keeps the second-order terms of the Taylor expansions of f and h about the
// estimate under a Gaussian density: with the
// Hessians ∇²f_i of the transition at x_k and ∇²h_i of the measurement at x⁻,
//   x⁻ = f(x) + ½ Σ_i e_i tr(∇²f_i P),   P⁻ = F P Fᵀ + Q + ½ Σ_ij e_i e_jᵀ tr(∇²f_i P ∇²f_j P),
//   ŷ = h(x⁻) + ½ Σ_i e_i tr(∇²h_i P⁻),  A = H P⁻ Hᵀ + R + ½ Σ_ij e_i e_jᵀ tr(∇²h_i P⁻ ∇²h_j P⁻),
// the gain and Joseph form with A (its R replaced by A − H P⁻ Hᵀ). For quadratic f and h these
// are the exact Gaussian moments. The Hessians are central differences of the callbacks' exact
// Jacobians, ∂F/∂x_m ≈ (F(x + δ_m e_m) − F(x − δ_m e_m)) / 2δ_m, δ_m = hessian_step ·
// max(1, |x_m|): 2n extra calls of each callback per sample.
struct EkfOptions {
  KalmanFilterOptions filter;  // Q, R, x0, P0
  bool second_order = false;
  double hessian_step = 1e-5;  // > 0, used by second_order
  bool IsValid(const DiscreteStateSpaceSystem& system, std::string* why) const;
};

// measurements: N × l. Returns false with `error` for invalid options/data or divergence
// (non-finite numbers, innovation covariance not positive definite); `record` then holds the
// samples up to that point.
bool RunExtendedKalmanFilter(const DiscreteStateSpaceSystem& system,
                             const Eigen::MatrixXd& measurements, const EkfOptions& options,
                             KalmanFilterRecord* record, std::string* error);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_EXTENDED_KALMAN_FILTER_H_
