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

// measurements: N × l. Returns false with `error` for invalid options/data or divergence
// (non-finite numbers, innovation covariance not positive definite); `record` then holds the
// samples up to that point.
bool RunExtendedKalmanFilter(const DiscreteStateSpaceSystem& system,
                             const Eigen::MatrixXd& measurements,
                             const KalmanFilterOptions& options, KalmanFilterRecord* record,
                             std::string* error);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_EXTENDED_KALMAN_FILTER_H_
