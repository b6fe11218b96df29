// solvers::RunHopfieldEstimator — on-line parameter estimation of a linear-in-the-parameters
// model tau(t) = Phi(t) p with a continuous-time Hopfield neural network (Urrea & Agramonte (2022)
// §3).
//
// The p neurons hold the parameter estimates. The network minimises the energy
// E(t) = ½ ||tau(t) − Phi(t) p||², whose gradient defines the weights and biases
//   W(t) = −gain Phi(t)ᵀ Phi(t),   b(t) = gain Phi(t)ᵀ tau(t),
// and the neuron dynamics are
//   s' = W(t) p + b(t),   p = A tanh(s / beta)  (kTanh, outputs bounded by ±A)
//                         or  p = s               (kLinear, the gradient flow of E).
// With kTanh, dE/dt|_{Phi fixed} = −(W p + b)ᵀ diag(A/beta sech²) (W p + b) <= 0: the energy falls
// monotonically for a frozen regressor. Phi and tau are sampled (row block k holds on
// [t_k, t_{k+1}), zero-order hold) and the network is integrated with classical RK4, the number
// of steps per interval raised so that h · gain · ||Phi_kᵀ Phi_k|| · max(A/beta) <= 2.5 (RK4 is
// stable up to 2.78 on the real axis).
//
// As in the SCARA study the network is used on-line from p(0) = p0; the estimate reported there
// is the time mean of the response over [mean_start_s, end] (default: the whole record, which
// includes the initial transient and so is biased towards p0), and the final value p(t_end) is
// reported separately. On noise-free, persistently exciting data p(t) converges to the LS
// solution.
#ifndef DYNID_SOLVERS_HOPFIELD_ESTIMATOR_H_
#define DYNID_SOLVERS_HOPFIELD_ESTIMATOR_H_

#include <string>

#include <Eigen/Core>

namespace dynid::solvers {

enum class HopfieldActivation { kLinear, kTanh };

struct HopfieldOptions {
  double gain = 1.0;                       // > 0, scales W and b (1/s per unit of Phiᵀ Phi)
  HopfieldActivation activation = HopfieldActivation::kLinear;
  Eigen::VectorXd amplitude;               // A (p), > 0, kTanh only (bounds of the outputs)
  double beta = 1.0;                       // > 0, kTanh only
  Eigen::VectorXd initial_parameters;      // p(0) (p); |p0| < A for kTanh
  double mean_start_s = -1.0;              // < t_0: time mean over the whole record
  int min_steps_per_sample = 1;            // >= 1
  bool IsValid(int num_parameters, std::string* why) const;
};

struct HopfieldResult {
  Eigen::MatrixXd parameters;   // N × p, p(t_k) (row 0 = p0)
  Eigen::VectorXd energy;       // N, E(t_k) = ½ ||tau_k − Phi_k p(t_k)||²
  Eigen::VectorXd mean_estimate;   // time mean of p(t) over the averaging window (trapezoid)
  Eigen::VectorXd mean_std;        // standard deviation of p(t) over the same window
  Eigen::VectorXd final_estimate;  // p(t_{N−1})
  int max_steps_per_sample = 0;
  // Summary
  bool converged = false;  // all finite
  int iterations = 0;      // samples processed
  double cost = 0.0;       // ½ Σ_k ||tau_k − Phi_k p_final||²
  double time_s = 0.0;
  std::string message;
};

// times: N >= 2 strictly increasing; regressor: (N·m) × p, rows k·m .. k·m+m−1 are Phi(t_k);
// torques: N·m stacked the same way.
bool RunHopfieldEstimator(const Eigen::VectorXd& times, const Eigen::MatrixXd& regressor,
                          const Eigen::VectorXd& torques, const HopfieldOptions& options,
                          HopfieldResult* result, std::string* error);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_HOPFIELD_ESTIMATOR_H_
