// solvers::DiscreteStateSpaceSystem, solvers::KalmanFilterRecord and solvers::RunRtsSmoother —
// the discrete-time system the recursive estimators run on, what a filter pass records, and the
// Rauch–Tung–Striebel fixed-interval smoother on that record (Urrea & Agramonte (2022) §3).
//
// System: x_{k+1} = f_k(x_k) + w_k, w_k ~ N(0, Q);  y_k = h_k(x_k) + v_k, v_k ~ N(0, R).
//
// A forward filter (solvers/extended_kalman_filter.h, solvers/unscented_kalman_filter.h) records,
// for every sample k, the predicted moments (x⁻_k, P⁻_k) (k = 0: the prior), the filtered moments
// (x_k, P_k), and for k < N−1 the cross-covariance C_k = Cov(x_k, x⁻_{k+1} | y_0..y_k).
// The RTS pass is then the same for both filters:
//   G_k = C_k (P⁻_{k+1})⁻¹,
//   xs_k = x_k + G_k (xs_{k+1} − x⁻_{k+1}),   Ps_k = P_k + G_k (Ps_{k+1} − P⁻_{k+1}) G_kᵀ,
// starting from xs_{N−1} = x_{N−1}. For the EKF C_k = P_k F_kᵀ (F_k = ∂f_k/∂x at x_k), which is
// the classical linearised RTS smoother; for the UKF C_k is the sigma-point cross-covariance,
// which is the unscented RTS smoother of Särkkä (2008). On a linear-Gaussian system both equal
// the exact fixed-interval smoother, i.e. the batch least-squares solution of the whole record.
#ifndef DYNID_SOLVERS_KALMAN_SMOOTHER_H_
#define DYNID_SOLVERS_KALMAN_SMOOTHER_H_

#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace dynid::solvers {

struct DiscreteStateSpaceSystem {
  int state_size = 0;        // n >= 1
  int measurement_size = 0;  // l >= 1
  // f_k: x_{k+1} = f_k(x_k) (k = 0 .. N−2); writes x_next (n) and, when F is non-null, ∂f_k/∂x.
  std::function<void(int k, const Eigen::VectorXd& x, Eigen::VectorXd* x_next,
                     Eigen::MatrixXd* F)>
      transition;
  // h_k: y_k = h_k(x_k); writes y (l) and, when H is non-null, ∂h_k/∂x (l × n).
  std::function<void(int k, const Eigen::VectorXd& x, Eigen::VectorXd* y, Eigen::MatrixXd* H)>
      measurement;
};

// Options shared by the discrete filters.
struct KalmanFilterOptions {
  Eigen::MatrixXd process_noise;           // Q, n × n, symmetric positive semi-definite
  Eigen::MatrixXd measurement_covariance;  // R, l × l, symmetric positive definite
  Eigen::VectorXd initial_state;           // x0, prior mean at sample 0
  Eigen::MatrixXd initial_covariance;      // P0, symmetric positive definite
  bool IsValid(const DiscreteStateSpaceSystem& system, std::string* why) const;
};

struct KalmanFilterRecord {
  Eigen::MatrixXd filtered_states;                   // N × n, x_k
  std::vector<Eigen::MatrixXd> filtered_covariances; // N, P_k
  Eigen::MatrixXd predicted_states;                  // N × n, x⁻_k (row 0: the prior)
  std::vector<Eigen::MatrixXd> predicted_covariances;// N, P⁻_k
  std::vector<Eigen::MatrixXd> cross_covariances;    // N − 1, C_k
  Eigen::MatrixXd innovations;                       // N × l, y_k − ŷ⁻_k
  double log_likelihood = 0.0;                       // Σ −½ (eᵀ A⁻¹ e + log det 2πA)
  // Summary
  bool converged = false;  // every sample processed with finite numbers
  int iterations = 0;      // samples processed
  double time_s = 0.0;
  std::string message;
  // sqrt(diag P_k) per sample, N × n (convenience for reports).
  Eigen::MatrixXd FilteredStd() const;
};

struct RtsSmootherResult {
  Eigen::MatrixXd states;                    // N × n, xs_k
  std::vector<Eigen::MatrixXd> covariances;  // N, Ps_k
  Eigen::MatrixXd state_std;                 // N × n, sqrt(diag Ps_k)
  bool converged = false;
  int iterations = 0;
  double time_s = 0.0;
  std::string message;
};

// Smooths a complete filter record (converged, N >= 1). Returns false with `error` when the
// record is inconsistent or a predicted covariance is singular.
bool RunRtsSmoother(const KalmanFilterRecord& record, RtsSmootherResult* result,
                    std::string* error);

// Is the symmetric matrix positive definite (Cholesky succeeds, all finite)?
bool IsPositiveDefinite(const Eigen::MatrixXd& matrix);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_KALMAN_SMOOTHER_H_
