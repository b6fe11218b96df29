// solvers:: observability of the identification model and identifiability of its parameters
// along a trajectory (van de Molengraft (1990) §2.9).
//
// The identification model linearised at a node, E z = C x + D p̄ with x = [s; v; theta] and
// p̄ = [a; u], C = [C_s C_v C_theta] = ∂(f + F p̄)/∂x and D = [D_a D_u] = F ((n + l) rows: the
// n equations of motion, then the l measurements), gives two rank tests:
//
//   eq. 2.26 (time-invariant):  Q = [C_s  C_theta  D_u],                 (n + l) × (n + p + m),
//            full observability iff rank Q = n + p + m (so l >= p + m is necessary);
//   eq. 2.28 (slowly time-varying C, D): with the time derivatives Ċ, Ḋ
//            Q = [ C_s   0    C_theta   D_u   0   ]
//                [ Ċ_s   C_s  Ċ_theta   Ḋ_u   D_u ],        2(n + l) × (2n + p + 2m),
//            columns [s, v = s', theta, u, u'], full iff rank Q = 2n + p + 2m.
// C_v and D_a do not enter: v and a follow from s by differentiation. Both tests are evaluated
// at every node (Ċ, Ḋ by central differences of the linearisation; one-sided at the ends) with
// a numerical rank: singular values of the column-scaled Q (each column divided by its RMS over
// the trajectory, a change of units that leaves the rank alone) above `relative_tolerance` × the
// largest. Null-space directions at the node of highest rank are reported with the columns named
// ("theta.mass", "u.f", ...): the combinations that no single node determines.
//
// Rank tests are local; the third test is global: the information of theta, the Schur
// complement of the whole linearised weighted-residual problem along the trajectory
// (solvers/parameter_covariance.h), analysed by AnalyzeIdentifiability, which names the
// parameter combinations the trajectory does not determine. This is the numerical singular-value
// test of the linearised problem (its eigenvalues are the squared singular values of the
// Jacobian restricted to theta after eliminating the trajectory).
#ifndef DYNID_SOLVERS_OBSERVABILITY_H_
#define DYNID_SOLVERS_OBSERVABILITY_H_

#include <ceres/problem.h>

#include <Eigen/Core>
#include <string>
#include <vector>

#include "dynid/models/mechanical_model.h"
#include "dynid/models/model_linearization.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/parameter_covariance.h"

namespace dynid::solvers {

struct ObservabilityOptions {
  double relative_tolerance = 1e-9;  // numerical rank threshold, relative to the largest
  bool IsValid(std::string* why) const;
};

struct ObservabilityReport {
  int required_rank_226 = 0;       // n + p + m
  int required_rank_228 = 0;       // 2n + p + 2m
  Eigen::VectorXi rank_226;        // per node
  Eigen::VectorXi rank_228;        // per node
  double fraction_full_226 = 0.0;  // fraction of nodes with full rank
  double fraction_full_228 = 0.0;
  int worst_node_226 = 0, worst_node_228 = 0;  // first node of the lowest rank
  int best_node_226 = 0, best_node_228 = 0;    // first node of the highest rank
  std::vector<std::string> columns_226, columns_228;
  // Null-space directions at the best node: what no single node determines (empty when the
  // best node has full rank). Coefficients in the column-scaled coordinates.
  std::vector<std::string> null_directions_226;
  std::vector<std::string> null_directions_228;
  bool has_parameters = false;       // the global test was run
  IdentifiabilityReport parameters;  // identifiability of theta along the whole trajectory
  std::string message;
};

// The rank tests from linearisations at the nodes: C[k] is (n + l) × (2n + p), D[k] is
// (n + l) × (n + m), `time` the N node times (N >= 2, strictly increasing). Names come from
// `info`. False (with a message) on inconsistent sizes.
bool ObservabilityRankTests(const models::ModelInfo& info, const Eigen::VectorXd& time,
                            const std::vector<Eigen::MatrixXd>& C,
                            const std::vector<Eigen::MatrixXd>& D,
                            const ObservabilityOptions& options, ObservabilityReport* report,
                            std::string* error);

// Describes a null-space direction: "+0.707 theta.a - 0.707 theta.b" (coefficients below 0.05
// of the largest omitted, sign fixed so the largest is positive).
std::string DescribeDirection(const Eigen::VectorXd& direction,
                              const std::vector<std::string>& names);

// Linearises `model` (models::LinearizeModel, instantiated per model) along `trajectory` at
// parameters `theta` and runs the rank tests.
template <class Model>
bool AnalyzeObservability(const Model& model, const models::Trajectory& trajectory,
                          const Eigen::VectorXd& theta, const ObservabilityOptions& options,
                          ObservabilityReport* report, std::string* error) {
  constexpr int n = Model::kNumPositions, m = Model::kNumInputs, p = Model::kNumParameters,
                l = Model::kNumMeasurements;
  const int num_nodes = static_cast<int>(trajectory.time.size());
  if (theta.size() != p || trajectory.positions.rows() != num_nodes ||
      trajectory.positions.cols() != n || trajectory.velocities.rows() != num_nodes ||
      trajectory.accelerations.rows() != num_nodes || trajectory.inputs.rows() != num_nodes ||
      trajectory.inputs.cols() != m) {
    *error = "observability: trajectory or theta sizes do not match model " + model.Info().name;
    return false;
  }
  std::vector<Eigen::MatrixXd> C(num_nodes), D(num_nodes);
  for (int k = 0; k < num_nodes; ++k) {
    const Eigen::Matrix<double, n, 1> s = trajectory.positions.row(k).transpose();
    const Eigen::Matrix<double, n, 1> v = trajectory.velocities.row(k).transpose();
    const Eigen::Matrix<double, n, 1> a = trajectory.accelerations.row(k).transpose();
    const Eigen::Matrix<double, m, 1> u = trajectory.inputs.row(k).transpose();
    models::ModelLinearization<Model> lin;
    models::LinearizeModel(model, s.data(), v.data(), a.data(), u.data(), theta.data(),
                           trajectory.time(k), &lin);
    C[k].resize(n + l, 2 * n + p);
    C[k] << lin.J_r_x, lin.J_z_x;
    D[k].resize(n + l, n + m);
    D[k] << lin.J_r_pbar, lin.J_z_pbar;
  }
  return ObservabilityRankTests(model.Info(), trajectory.time, C, D, options, report, error);
}

// The global test: builds the weighted-residual problem (ParameterMode::kConstant) with
// `weights` on the noise-free measurements of `trajectory`, with the trajectory unknowns and
// theta at the truth, and analyses the Schur-complement information of theta. Needs
// problems::BuildWeightedResidualProblem<Model> (instantiated for the library's models).
template <class Model>
bool ParameterIdentifiabilityAlongTrajectory(
    const Model& model, const models::Trajectory& trajectory, const Eigen::VectorXd& theta,
    const problems::WeightedResidualWeights& weights, problems::Transcription transcription,
    double relative_tolerance, IdentifiabilityReport* report, std::string* error) {
  constexpr int n = Model::kNumPositions, m = Model::kNumInputs;
  const int num_nodes = static_cast<int>(trajectory.time.size());
  problems::WeightedResidualData data{trajectory.time, trajectory.measurements};
  problems::WeightedResidualVariables variables;
  problems::ResizeVariables(n, m, theta, num_nodes, problems::ParameterMode::kConstant, &variables);
  variables.states.topRows(n) = trajectory.positions.transpose();
  variables.states.bottomRows(n) = trajectory.velocities.transpose();
  variables.inputs.topRows(n) = trajectory.accelerations.transpose();
  variables.inputs.bottomRows(m) = trajectory.inputs.transpose();
  problems::WeightedResidualOptions options;
  options.transcription = transcription;
  options.parameter_mode = problems::ParameterMode::kConstant;
  problems::WeightedResidualWeights w = weights;
  if (w.initial.size() > 0) {
    w.initial_guess.resize(w.initial.rows());
    w.initial_guess << variables.states.col(0), theta;
  }
  ceres::Problem problem;
  if (!problems::BuildWeightedResidualProblem(model, data, w, options, &variables, &problem,
                                              error)) {
    return false;
  }
  Eigen::MatrixXd information;
  if (!ParameterInformationBySchur(&problem, variables.TrajectoryBlocks(),
                                   {variables.ConstantParameterBlock()}, &information, error)) {
    return false;
  }
  std::vector<std::string> names;
  for (const auto& parameter : model.Info().parameters) {
    names.push_back(parameter.name + " [" + parameter.unit + "]");
  }
  *report = AnalyzeIdentifiability(information, theta, names, relative_tolerance);
  return true;
}

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_OBSERVABILITY_H_
