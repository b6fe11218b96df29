// solvers::RunContinuousDiscreteEkf — the continuous–discrete extended Kalman filter, and
// solvers::RunSaekf — its instance for the state-augmented EKF of Hovland et al. (2002) Table 1.
//
// Continuous–discrete EKF. System x' = f_k(t, x) + v (v white, intensity Q, n × n) between the
// samples t_k, measurements y_k = h_k(x(t_k)) + w_k (w_k ~ N(0, R), l × l). With F = ∂f/∂x:
//   propagation t_k → t_{k+1}: x̂' = f_k(t, x̂),  P' = F P + P Fᵀ + Q, integrated together with
//     classical RK4 in `steps_per_sample` equal steps (step h = (t_{k+1} − t_k)/steps_per_sample).
//     RK4 is only stable for h |λ| < 2.78, and the Riccati equation has the eigenvalues 2λ of F:
//     with stable_steps (default) the number of steps of an interval is raised to
//     ceil(2 ‖F(x̂(t_k))‖∞ Δt / 2.5) when that is larger (a stiff Coulomb slope Cc (2/π) α / m1 of
//     2e4 1/s needs about 4 steps per 1e-4 s sample; with one step P_xx grows without bound).
//     F is re-evaluated at every RK4 stage at the propagated mean, or (freeze_jacobian, the
//     literal reading of Hovland et al. (2002) Table 1: "linearised at the current estimates at
//     time t_k") once at x̂(t_k) for the whole interval.
//   update at t_{k+1}: e = y − h(x̂⁻), A = H P⁻ Hᵀ + R, K = P⁻ Hᵀ A⁻¹,
//     x̂ = x̂⁻ + K e, P = P⁻ − K A Kᵀ (symmetrised).
// The first sample is an update of the prior (x0, P0) without propagation. The subscript k on f
// lets the caller hold inputs constant over the interval [t_k, t_{k+1}) (zero-order hold).
//
// SAEKF (Hovland et al. (2002) §3–4): augment the transmission state x = [x1, x2, x3, x4] with p =
// tau_K and p' = v5, so the augmented state is X = [x; p] (5), f_aug = [f(x, u_k, p); 0] and
// Q_aug = blockdiag(Q_xx, Q_pp). Written out in blocks, P' = F P + P Fᵀ + Q with
// F = [[∂f/∂x, ∂f/∂p], [0, 0]] is exactly Table 1's three Riccati equations (P_xx, P_xp, P_pp),
// and the update with H = [∂h/∂x, ∂h/∂p] gives Table 1's gains K, L and covariance updates. The
// state is propagated with the full non-linear model and p̂ held at p̂(t_k), as in Table 1.
#ifndef DYNID_SOLVERS_CONTINUOUS_DISCRETE_EKF_H_
#define DYNID_SOLVERS_CONTINUOUS_DISCRETE_EKF_H_

#include <Eigen/Core>
#include <functional>
#include <string>

#include "dynid/models/two_mass_transmission.h"

namespace dynid::solvers {

struct ContinuousDiscreteSystem {
  int state_size = 0;        // n >= 1
  int measurement_size = 0;  // l >= 1
  // f_k(t, x) for t in [t_k, t_{k+1}]; writes f (n) and, when F is non-null, ∂f/∂x (n × n).
  std::function<void(int k, double t, const Eigen::VectorXd& x, Eigen::VectorXd* f,
                     Eigen::MatrixXd* F)>
      dynamics;
  // h_k(x) at sample k; writes y (l) and, when H is non-null, ∂h/∂x (l × n).
  std::function<void(int k, const Eigen::VectorXd& x, Eigen::VectorXd* y, Eigen::MatrixXd* H)>
      measurement;
};

struct ContinuousDiscreteEkfOptions {
  Eigen::MatrixXd process_noise_intensity;  // Q, n × n, symmetric positive semi-definite
  Eigen::MatrixXd measurement_covariance;   // R, l × l, symmetric positive definite
  Eigen::VectorXd initial_state;            // x0 (n), prior mean at t_0
  Eigen::MatrixXd initial_covariance;       // P0 (n × n), symmetric positive semi-definite
  int steps_per_sample = 1;                 // RK4 steps between samples, >= 1
  bool freeze_jacobian = false;             // F from x̂(t_k) over the whole interval
  bool stable_steps = true;                 // raise the step count for RK4 stability (above)

  // Checks sizes against the system and the matrix properties.
  bool IsValid(const ContinuousDiscreteSystem& system, std::string* why) const;
};

struct ContinuousDiscreteEkfResult {
  Eigen::MatrixXd states;                  // N × n, filtered x̂(t_k)
  Eigen::MatrixXd state_std;               // N × n, sqrt(diag P(t_k))
  Eigen::MatrixXd predicted_measurements;  // N × l, ŷ(t_k) = h(x̂(t_k⁻))
  Eigen::MatrixXd prediction_errors;       // N × l, e(t_k) = y_k − ŷ(t_k)
  Eigen::MatrixXd prediction_error_std;    // N × l, sqrt(diag A(t_k))
  Eigen::MatrixXd final_covariance;        // n × n, P(t_{N−1})
  double log_likelihood = 0.0;             // Σ −½ (eᵀ A⁻¹ e + log det 2πA)
  int max_steps_per_sample = 0;            // largest RK4 step count used for an interval
  // Summary
  bool converged = false;  // true when every sample was processed with finite numbers
  int iterations = 0;      // samples processed
  double time_s = 0.0;
  std::string message;
};

// Runs the filter over times (N, strictly increasing) and measurements (N × l). Returns false
// with `error` on invalid options or data and when the filter diverges (non-finite numbers or an
// innovation covariance that is not positive definite; `result` then holds the samples up to
// that point and `message` names the sample).
bool RunContinuousDiscreteEkf(const ContinuousDiscreteSystem& system, const Eigen::VectorXd& times,
                              const Eigen::MatrixXd& measurements,
                              const ContinuousDiscreteEkfOptions& options,
                              ContinuousDiscreteEkfResult* result, std::string* error);

// ----------------------------------------------------------------------------------------------
// SAEKF of Hovland et al. (2002) Table 1 on models::TwoMassTransmission.

struct SaekfOptions {
  Eigen::Vector4d state_noise_intensity = Eigen::Vector4d::Zero();  // diag Q_xx, >= 0
  double tau_noise_intensity = 1.0;      // Q_pp [(Nm)²/s], > 0 (the main tuning knob)
  double measurement_variance = 2.5e-4;  // R per measured velocity [(rad/s)²], > 0
  bool measure_arm_velocity = false;     // y = x3 (false) or [x3, x4] (true)
  Eigen::Vector4d initial_state = Eigen::Vector4d::Zero();  // x̂(t_0) prior mean
  double initial_tau = 0.0;                                 // p̂(t_0) prior mean [Nm]
  // Prior standard deviations of [x1, x2, x3, x4, tau_K]: the record starts at rest at a known
  // position by default (tiny std), tau_K unknown (1 Nm).
  Eigen::Matrix<double, 5, 1> initial_std =
      (Eigen::Matrix<double, 5, 1>() << 1e-6, 1e-6, 1e-6, 1e-6, 1.0).finished();
  int steps_per_sample = 1;  // RK4 steps per sample interval (at least; see stable_steps)
  bool freeze_jacobian = false;
  bool stable_steps = true;

  bool IsValid(std::string* why) const;
};

struct SaekfResult {
  Eigen::MatrixXd states;              // N × 4, x̂(t_k)
  Eigen::VectorXd tau;                 // N, p̂(t_k) = tau_K estimate [Nm]
  Eigen::VectorXd tau_std;             // N
  Eigen::VectorXd delta;               // N, x̂1 − x̂2
  ContinuousDiscreteEkfResult filter;  // the augmented filter's full output (5 states)
};

// input (N, ZOH torque samples), measurements (N × 1 or N × 2 as options.measure_arm_velocity),
// sample period ts. The model supplies m1, m2, D, Kr, Cv, Cc, alpha (its spring is not used).
bool RunSaekf(const models::TwoMassTransmission& model, const Eigen::VectorXd& input,
              double sample_period_s, const Eigen::MatrixXd& measurements,
              const SaekfOptions& options, SaekfResult* result, std::string* error);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_CONTINUOUS_DISCRETE_EKF_H_
