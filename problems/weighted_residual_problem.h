// problems::BuildWeightedResidualProblem — van de Molengraft's weighted-residual optimal
// estimation problem (van de Molengraft (1990) eq. 3.1) transcribed into a sparse Ceres problem.
//
// The identification model (van de Molengraft (1990) eq. 2.11) of a models::MechanicalModel with
// augmented state x = [s; v; theta] (2n + p) and augmented input p̄ = [a; u] (n + m):
//
//     x' = A x + B p̄ + xi,        E z_m = f(x, t) + F(x, t) p̄ + zeta,
//
// with xi = [xi_s; xi_v; xi_theta] = [s' − v; v' − a; theta'] and
// zeta = [−(M a + h + H u); z_m − (g + G a + R u)]. The functional
//
//     J = ½ ∫ (xiᵀ W xi + zetaᵀ V zeta) dt + ½ (x(t0) − q0)ᵀ R0 (x(t0) − q0)
//
// is discretised on the nodes t_0 < … < t_{N−1} (the measurement instants) and handed to Ceres as
// ½ Σ |residual|². Unknowns (parameter blocks, all owned by WeightedResidualVariables):
//   state_k  = [s_k; v_k]      (2n)     one per node
//   input_k  = [a_k; u_k] = p̄_k (n + m) one per node
//   theta    (p): kFixed — one block held constant (not estimated);
//                 kConstant — one block shared by all nodes ("smoother-like", theta' = 0 exactly);
//                 kTimeVarying — one block per node with process residual xi_theta weighted by
//                 W_theta ("filter-like": theta may drift to absorb model error, van de
//                 Molengraft (1990) §3.7).
//
// zeta is evaluated at the nodes and weighted by the trapezoidal weights w_k (h_0/2, (h_{k−1} +
// h_k)/2, h_{N−2}/2): one residual block sqrt(w_k V) zeta_k per node, the same in both
// transcriptions. xi differs:
//   kCollocation (finite elements, van de Molengraft (1990) §3.6): x and p̄ interpolated
//     linearly on each element [t_k, t_{k+1}]; xi(τ) = x' − A x(τ) − B p̄(τ) integrated exactly
//     by 2-point Gauss–Legendre quadrature: residual sqrt(W h_k / 2) xi(τ_g) for both Gauss
//     points (one block per element).
//   kShooting (multiple shooting): p̄ and xi piecewise constant on each interval, one RK4 step of
//     x' = A x + B p̄_k + xi_k from x_k must land on x_{k+1}. Because A is nilpotent (A² = 0) and
//     the forcing is constant, RK4 is exact here: x_{k+1} = (I + hA) x_k + h (I + hA/2)(B p̄_k + xi_k),
//     so the unknown xi_k is eliminated in closed form,
//       xi_s = (s_{k+1} − s_k)/h − (v_k + v_{k+1})/2,   xi_v = (v_{k+1} − v_k)/h − a_k,
//     and weighted by sqrt(W h_k) (one block per interval).
// In both, xi_theta = (theta_{k+1} − theta_k)/h_k with weight sqrt(W_theta h_k) (kTimeVarying).
// The initial term sqrt(R0)(x_0 − q0) is added when R0 is not zero (x_0 = [s_0; v_0] for kFixed,
// [s_0; v_0; theta] otherwise).
//
// The Jacobian is block-banded in node order; the solver orders theta (kConstant) last so that it
// is eliminated after the trajectory (solvers/weighted_residual_smoother.h). Residual blocks are
// small (one node or element each) and use automatic differentiation; the templates are
// defined in weighted_residual_problem.hxx, included at the end of this header, so that any model
// (the library's or a user's) works by including this header.
//
// The weights W, W_theta, V, R0, q0 (WeightedResidualWeights), the names of their diagonal
// entries and their construction from noise standard deviations are in
// problems/weighted_residual_weights.h.
#ifndef DYNID_PROBLEMS_WEIGHTED_RESIDUAL_PROBLEM_H_
#define DYNID_PROBLEMS_WEIGHTED_RESIDUAL_PROBLEM_H_

#include <string>
#include <vector>

#include <Eigen/Core>

#include "dynid/problems/weighted_residual_weights.h"

namespace ceres {
class Problem;
}

namespace dynid::problems {

enum class Transcription { kCollocation, kShooting };
enum class ParameterMode { kFixed, kConstant, kTimeVarying };

const char* TranscriptionName(Transcription transcription);
const char* ParameterModeName(ParameterMode mode);

struct WeightedResidualData {
  Eigen::VectorXd time;          // N node times (s), strictly increasing, N >= 2
  Eigen::MatrixXd measurements;  // N × l measured z_m at the nodes
};

struct WeightedResidualOptions {
  Transcription transcription = Transcription::kShooting;
  ParameterMode parameter_mode = ParameterMode::kConstant;
};

// The unknowns. Columns are contiguous, so column k is node k's parameter block.
struct WeightedResidualVariables {
  ParameterMode mode = ParameterMode::kConstant;
  Eigen::MatrixXd states;      // 2n × N, column k = [s_k; v_k]
  Eigen::MatrixXd inputs;      // (n + m) × N, column k = p̄_k = [a_k; u_k]
  Eigen::MatrixXd parameters;  // p × N (kTimeVarying) or p × 1

  int num_nodes() const { return static_cast<int>(states.cols()); }
  double* state(int k) { return states.col(k).data(); }
  double* input(int k) { return inputs.col(k).data(); }
  // theta at node k (the single block unless kTimeVarying).
  double* parameter(int k) {
    return parameters.col(mode == ParameterMode::kTimeVarying ? k : 0).data();
  }
  const double* parameter(int k) const {
    return parameters.col(mode == ParameterMode::kTimeVarying ? k : 0).data();
  }

  // Parameter blocks of the trajectory in node order (state_k, input_k[, theta_k]) — the order of
  // the banded structure — and the shared theta block (nullptr unless kConstant).
  std::vector<double*> TrajectoryBlocks();
  double* ConstantParameterBlock();
};

// Sizes `variables` for `num_nodes` nodes of a model with the given dimensions and `mode`,
// zero-filled except theta, which is set to `theta` in every column.
void ResizeVariables(int n, int m, const Eigen::VectorXd& theta, int num_nodes, ParameterMode mode,
                     WeightedResidualVariables* variables);

// Checks data, weights and variables against the model sizes; false with a message naming the
// offending item otherwise.
bool ValidateWeightedResidualInputs(int n, int m, int p, int l, const WeightedResidualData& data,
                                    const WeightedResidualWeights& weights,
                                    const WeightedResidualOptions& options,
                                    const WeightedResidualVariables& variables,
                                    std::string* error);

// Trapezoidal node weights w_k of the zeta term (see above), N values.
Eigen::VectorXd TrapezoidalNodeWeights(const Eigen::VectorXd& time);

// A factor S with Sᵀ S = A for symmetric positive semi-definite A (eigen-decomposition; rows for
// zero eigenvalues are zero). Returns false when A is not symmetric or has an eigenvalue below
// −1e-12 max|eig|, or, with `require_definite`, one not above 1e-14 max|eig|.
bool SquareRootFactor(const Eigen::MatrixXd& A, bool require_definite, Eigen::MatrixXd* S,
                      std::string* error);

// The number of residual components that carry weight in the problem that
// BuildWeightedResidualProblem builds from the same weights, data and options: the number of
// weighted observations m of the a posteriori variance factor σ̂² = rᵀWr / (m − u)
// (solvers::ResidualVarianceFactor). With N nodes,
//   m = N rank(V) + (N − 1) c rank(W) [+ (N − 1) rank(W_theta) for kTimeVarying] [+ rank(R0)],
// c = 1 for kShooting (one xi per interval) and 2 for kCollocation (two Gauss points). The
// trapezoidal node weights are positive, so a residual row carries weight exactly when its row
// of the square-root factor of V (W, W_theta, R0) is non-zero; the number of such independent
// rows is the rank (eigenvalues above 1e-14 × the largest). A zero-weight row (a measurement
// weighted 0, a zero diagonal entry of V) is always zero in the problem: it adds to
// ceres::Problem::NumResiduals but carries no information and no degree of freedom.
// CHECK-fails on fewer than 2 nodes or a non-square weight.
int CountWeightedResiduals(const WeightedResidualWeights& weights,
                           const WeightedResidualData& data,
                           const WeightedResidualOptions& options);

// Adds all residual blocks of the transcribed functional to `problem`, with parameter blocks in
// `variables` (which must be sized by ResizeVariables and hold the initial guess; they must
// outlive the problem). Returns false (problem untouched) on invalid inputs.
template <class Model>
bool BuildWeightedResidualProblem(const Model& model, const WeightedResidualData& data,
                                  const WeightedResidualWeights& weights,
                                  const WeightedResidualOptions& options,
                                  WeightedResidualVariables* variables, ceres::Problem* problem,
                                  std::string* error);

// The unweighted residuals at the current variables: zeta at the nodes (N × (n + l); the first n
// columns are minus the equations of motion, the last l the measurement residuals z_m − z) and
// the shooting-form xi on the intervals ((N − 1) × (2n + p), xi_theta zero unless kTimeVarying).
template <class Model>
void ComputeWeightedResiduals(const Model& model, const WeightedResidualData& data,
                              const WeightedResidualVariables& variables, Eigen::MatrixXd* zeta,
                              Eigen::MatrixXd* xi) {
  constexpr int n = Model::kNumPositions, l = Model::kNumMeasurements, p = Model::kNumParameters;
  const int num_nodes = variables.num_nodes();
  zeta->resize(num_nodes, n + l);
  xi->setZero(num_nodes - 1, 2 * n + p);
  for (int k = 0; k < num_nodes; ++k) {
    const double* x = variables.states.col(k).data();
    const double* pbar = variables.inputs.col(k).data();
    double r[n], z[l];
    model.EquationsOfMotion(x, x + n, pbar, pbar + n, variables.parameter(k), data.time(k), r);
    model.Measurements(x, x + n, pbar, pbar + n, variables.parameter(k), data.time(k), z);
    for (int i = 0; i < n; ++i) (*zeta)(k, i) = -r[i];
    for (int i = 0; i < l; ++i) (*zeta)(k, n + i) = data.measurements(k, i) - z[i];
    if (k + 1 == num_nodes) continue;
    const double h = data.time(k + 1) - data.time(k);
    const double* x1 = variables.states.col(k + 1).data();
    for (int i = 0; i < n; ++i) {
      (*xi)(k, i) = (x1[i] - x[i]) / h - 0.5 * (x[n + i] + x1[n + i]);
      (*xi)(k, n + i) = (x1[n + i] - x[n + i]) / h - pbar[i];
    }
    if (variables.mode == ParameterMode::kTimeVarying) {
      for (int i = 0; i < p; ++i) {
        (*xi)(k, 2 * n + i) = (variables.parameters(i, k + 1) - variables.parameters(i, k)) / h;
      }
    }
  }
}

}  // namespace dynid::problems

#include "dynid/problems/weighted_residual_problem.hxx"

#endif  // DYNID_PROBLEMS_WEIGHTED_RESIDUAL_PROBLEM_H_
