// problems::BuildBacklashSmootherProblem — the batch (smoothing) counterpart of the SAEKF of
// Hovland et al. (2002): the transmission states x_k = [x1, x2, x3, x4](t_k) and the
// transmission torque tau_K(t_k) are unknown at every sample of the record and estimated
// together from all the data as one sparse non-linear least-squares problem.
//
// Stochastic model (the SAEKF's, Hovland et al. (2002) eqs. 2–3): x' = f(x, u, tau_K) + v, tau_K' =
// v5 with white v of intensity Q_xx (diagonal) and Q_pp, y_k = h(x_k) + w_k with w_k ~ N(0, R I),
// h = x3 or [x3, x4]. Discretised on the sample grid (step ts, input and tau_K held over the
// interval as in the SAEKF's propagation):
//   x_{k+1} = Φ(x_k, u_k, tau_k) + v_k,  v_k ~ N(0, ts · diag(q)),   q_i = max(Q_xx,ii, floor_i)
//   tau_{k+1} = tau_k + v5_k,             v5_k ~ N(0, ts · Q_pp)
// Φ is `rk4_steps_per_sample` classical RK4 steps of f (models::TransmissionRk4Step), the same
// map as the filter's mean propagation. With tau_hold = kFirstOrder, tau_K is instead linear in
// time between tau_k and tau_{k+1} over the interval (models::TransmissionRk4StepLinearTau: the
// RK4 stages take tau_k, ½ (tau_k + tau_{k+1}), tau_{k+1}), so tau_K,k is the torque at t_k; in
// the shape problem below the line is corrected where Δ crosses a corner of the dead zone.
// The negative log-posterior is ½ Σ |residual|² with
//   interval block k (k = 0 … N−2), parameter blocks node_k, node_{k+1} (5 values each):
//     [ (x_{k+1} − Φ(x_k, u_k, tau_k)) / sqrt(ts q)          4 dynamics residuals
//       (tau_{k+1} − tau_k) / sqrt(ts Q_pp)                  1 random-walk increment
//       (x_{k+1}[2 …] − y_{k+1}) / sqrt(R)          ]        l measurement residuals
//   initial block, parameter block node_0:
//     [ (node_0 − prior mean) / prior std;  (x_0[2 …] − y_0) / sqrt(R) ]   5 + l residuals
// Floor: where Q_xx,ii = 0 (Hovland et al. (2002) sets the position noises, and in Simulation 1 all
// of Q_xx, to zero: hard constraints in the filter) the residual would have infinite weight; the
// floor (default 1e-6 in the state's unit² per second, i.e. a defect of about 1e-5 units per 1e-4 s
// step) makes it a stiff penalty that keeps the normal equations well conditioned in double
// precision while being far tighter than the measurement and tau_K residuals of both seed cases.
//
// The Jacobian is block-banded (each block touches two consecutive nodes); the Ceres solver
// (solvers/backlash_smoother.h) uses SPARSE_NORMAL_CHOLESKY, O(N) per iteration. Derivatives are
// automatic (Jets through the RK4 map), instantiated only in backlash_smoother_problem.cc, except
// for the shape problem's first-order-hold interval cost (by hand; see below).
#ifndef DYNID_PROBLEMS_BACKLASH_SMOOTHER_PROBLEM_H_
#define DYNID_PROBLEMS_BACKLASH_SMOOTHER_PROBLEM_H_

#include <Eigen/Core>
#include <string>
#include <vector>

#include "dynid/models/two_mass_transmission.h"

namespace ceres {
class CostFunction;
class Problem;
}  // namespace ceres

namespace dynid::problems {

struct BacklashSmootherData {
  double sample_period_s = 0.0;  // ts > 0
  Eigen::VectorXd input;         // N motor torques [Nm], u_k held on [t_k, t_{k+1})
  Eigen::MatrixXd measurements;  // N × l: column 0 = x3 [rad/s], column 1 (l = 2) = x4
};

using NodeVector = Eigen::Matrix<double, 5, 1>;  // [x1, x2, x3, x4, tau_K]

// How tau_K enters the dynamics over [t_k, t_{k+1}]: held at tau_k (zero-order, as the SAEKF's
// propagation) or linear from tau_k to tau_{k+1} (first-order hold, trapezoidal in tau_K).
enum class TauHold { kZeroOrder, kFirstOrder };

const char* TauHoldName(TauHold hold);  // "zero", "first"
bool ParseTauHold(const std::string& text, TauHold* hold, std::string* error);

struct BacklashSmootherProblemOptions {
  Eigen::Vector4d state_noise_intensity = Eigen::Vector4d::Zero();      // diag Q_xx, >= 0
  Eigen::Vector4d state_noise_floor = Eigen::Vector4d::Constant(1e-6);  // > 0, see above
  double tau_noise_intensity = 1.0;                                     // Q_pp [(Nm)²/s], > 0
  double measurement_variance = 2.5e-4;        // R per measured velocity, > 0
  NodeVector prior_mean = NodeVector::Zero();  // of node_0
  // Prior std of node_0 (> 0; +inf drops that component's prior). Default: the record starts at
  // rest at a known position, tau_K(t_0) unknown (1 Nm), as the SAEKF's default prior.
  NodeVector prior_std = (NodeVector() << 1e-6, 1e-6, 1e-6, 1e-6, 1.0).finished();
  int rk4_steps_per_sample = 1;  // >= 1
  TauHold tau_hold = TauHold::kZeroOrder;

  bool IsValid(std::string* why) const;
};

// The unknowns: N nodes of 5 doubles, contiguous (node k at values[5 k]).
struct BacklashSmootherVariables {
  int num_samples = 0;
  std::vector<double> values;

  double* node(int k) { return values.data() + 5 * k; }
  const double* node(int k) const { return values.data() + 5 * k; }
  // Sets every node from states (N × 4) and tau (N).
  void Set(const Eigen::MatrixXd& states, const Eigen::VectorXd& tau);
  Eigen::MatrixXd States() const;  // N × 4
  Eigen::VectorXd Tau() const;     // N
};

// Checks data against options (sizes, finiteness). l = measurements.cols() must be 1 or 2.
bool ValidateBacklashSmootherData(const BacklashSmootherData& data, std::string* error);

// Adds all parameter and residual blocks to `problem` (which must be empty). If `variables` does
// not already hold N nodes, they are initialised: positions and tau_K zero, measured velocities
// copied (the arm velocity set to the motor's when only x3 is measured). Returns false with
// `error` on invalid options or data.
bool BuildBacklashSmootherProblem(const models::TwoMassTransmission& model,
                                  const BacklashSmootherData& data,
                                  const BacklashSmootherProblemOptions& options,
                                  BacklashSmootherVariables* variables, ceres::Problem* problem,
                                  std::string* error);

// The residual blocks, for derivative checks. Interval cost: residuals 5 + l, parameter blocks
// (node_k, node_{k+1}); `next_measurement` has l values (y_{k+1}). Initial cost: residuals 5 + l,
// one parameter block node_0.
ceres::CostFunction* CreateBacklashIntervalCost(const models::TwoMassTransmission& model,
                                                const BacklashSmootherProblemOptions& options,
                                                double sample_period_s, double input,
                                                const Eigen::VectorXd& next_measurement);
ceres::CostFunction* CreateBacklashInitialCost(const BacklashSmootherProblemOptions& options,
                                               const Eigen::VectorXd& first_measurement);
// The shape problem's interval cost under a first-order hold (options.tau_hold = kFirstOrder):
// as the interval cost with the increment's weight 0, plus the corner correction of the hold,
// parameter blocks (node_k, node_{k+1}, spring = [c, b, K]); see BuildBacklashShapeProblem.
// Its Jacobian is written by hand (the RK4 map's tangent through the model's analytic ∂f/∂x,
// the correction in closed form, or through 7-dimensional Jets where a corner lies inside the
// interval); the same cost with automatic derivatives through the whole map (the former
// implementation, 4–5 times slower to evaluate in backlash_study at 1e5 samples,
// internal/backlash_shape_reference.h) is the reference it is tested against.
ceres::CostFunction* CreateBacklashShapeIntervalCost(const models::TwoMassTransmission& model,
                                                     const BacklashSmootherProblemOptions& options,
                                                     double sample_period_s, double input,
                                                     const Eigen::VectorXd& next_measurement);

// Shape-constrained refinement. The smoother above leaves tau_K(t) free (a random walk), which
// is what reveals the shape of the transmission torque without assuming one; but a random walk
// rounds the corners where tau_K leaves and enters the dead zone, and a dead-zone curve fitted to
// the rounded (Δ, tau_K) cloud comes out too narrow and too flat (measured on Simulation 2 with
// Q_xx(3,3) = 1000: b −16 %, K −12 %). Once the shape is known, the same batch problem is solved
// again with the random-walk increments replaced by the shape residual
//     (tau_K,k − K dz(Δ − c; b)) / sigma_s          (one per node; Δ: see curve_point below)
// where dz is the dead zone of total width b and spring = [c, b, K] is one extra constant
// parameter block shared by all nodes (c: the centre of the gap in the Δ coordinates of the
// record, whose zero is the initial condition). sigma_s is the admitted shape error; small
// against the noise of the free tau_K estimate so that the curve is effectively enforced.
// b is bounded below by 0; with hold_backlash_at_zero the block is [c, 0, K] with b constant
// (a linear spring).
// First-order hold (options.tau_hold = kFirstOrder): tau_K,k is the torque at t_k and every node
// meets the curve at Δ_k (curve_point is ignored); the interval blocks take the spring block too
// (parameter blocks node_k, node_{k+1}, spring) and replace the line through tau_k, tau_{k+1} by
// one corrected with the curve's exact mean and first moment over the interval, Δ following the
// cubic through Δ_k, Δ_{k+1} with the slopes x3 − x4 of the nodes (in the gap the correction is
// 0; in contact it is the curve's O(h²) departure from the chord; across a corner, where the
// curve breaks, up to K |Δ_{k+1} − Δ_k| / 4). Measured on noise-free Simulation 1 records (ts =
// 1 ms, 20 s, solved from the true states and spring): K +0.039 Nm/rad off with the zero-order
// hold and the interval average, +0.036 with the plain first-order hold (the corners), +0.019
// with the correction on a Δ linear in time, < 1e-5 with the cubic; +0.0098 / +0.0093 / +0.0047
// / < 1e-5 at ts = 0.5 ms (an O(h²) error of the corners). These were measured while the
// transcription was chosen; the plain hold and the linear-Δ correction are not in the code (the
// test FirstOrderHoldRemovesTheDiscretisationBiasOfK checks the zero-order and the shipped hold).
// Zero-order hold, where the curve is evaluated (curve_point): the dynamics hold tau_K,k constant
// over
// [t_k, t_{k+1}] (zero-order hold, as the SAEKF's propagation), so tau_K,k stands for the torque
// over that interval. kIntervalAverage (default) ties it to the mean of the curve over the
// interval with Δ linear in time between Δ_k and Δ_{k+1}, [F(Δ_{k+1}) − F(Δ_k)] / (Δ_{k+1} − Δ_k)
// with F the integral of the curve (exact for linear Δ also when a corner lies inside the
// interval; the midpoint value below 1e-9 rad of travel); kIntervalMidpoint to the curve at
// ½ (Δ_k + Δ_{k+1}) (second order away from the corners); kNode to the curve at Δ_k. The last node
// (no interval after it) always uses Δ_{N−1}. Tying tau_K,k to the curve at Δ_k makes the curve
// half a sample early on both flanks of the gap: measured on Simulation 1 (ts = 1 ms,
// |Δ'| ≈ 2 rad/s at the corners) b comes out 1.1 % low with an interval that misses the truth,
// and the mismatch goes into the residuals (posterior variance factor 13 instead of ≈ 1).
enum class ShapeCurvePoint { kNode, kIntervalMidpoint, kIntervalAverage };

const char* ShapeCurvePointName(ShapeCurvePoint point);  // "node", "midpoint", "average"
bool ParseShapeCurvePoint(const std::string& text, ShapeCurvePoint* point, std::string* error);

struct BacklashShapeOptions {
  double shape_residual_std_nm = 1e-2;  // sigma_s [Nm], > 0
  bool hold_backlash_at_zero = false;
  ShapeCurvePoint curve_point = ShapeCurvePoint::kIntervalAverage;

  bool IsValid(std::string* why) const;
};

// The shape residual of one node: 1 residual, parameter blocks (node_k, spring), curve at Δ_k.
// Both shape costs have hand-written Jacobians (the residual depends on the nodes only through
// Δ and tau_K), checked against numeric differences in the tests, also across a corner.
ceres::CostFunction* CreateBacklashShapeCost(double shape_residual_std_nm);
// The same over interval k (point kIntervalMidpoint or kIntervalAverage): parameter blocks
// (node_k, node_{k+1}, spring).
ceres::CostFunction* CreateBacklashIntervalShapeCost(double shape_residual_std_nm,
                                                     ShapeCurvePoint point);

// As BuildBacklashSmootherProblem, without the tau_K random walk, plus the shape residuals and
// the `spring` block (3 values [c, b, K], initialised by the caller, e.g. from FitDeadZone on the
// free smoother's pairs). Returns false with `error` on invalid options or data.
bool BuildBacklashShapeProblem(const models::TwoMassTransmission& model,
                               const BacklashSmootherData& data,
                               const BacklashSmootherProblemOptions& options,
                               const BacklashShapeOptions& shape_options,
                               BacklashSmootherVariables* variables, double* spring,
                               ceres::Problem* problem, std::string* error);

}  // namespace dynid::problems

#endif  // DYNID_PROBLEMS_BACKLASH_SMOOTHER_PROBLEM_H_
