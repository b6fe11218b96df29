#include "dynid/solvers/weighted_residual_smoother.h"

#include <ceres/ordered_groups.h>
#include <ceres/problem.h>
#include <ceres/solver.h>
#include <glog/logging.h>

#include <chrono>
#include <map>
#include <memory>
#include <sstream>

#include "dynid/solvers/internal/ceres_progress.h"

namespace dynid::solvers {

bool WeightedResidualSmootherOptions::IsValid(std::string* why) const {
  std::ostringstream out;
  std::string message;
  if (max_iterations < 1) out << "max_iterations must be >= 1, got " << max_iterations;
  else if (!(function_tolerance >= 0.0) || !(gradient_tolerance >= 0.0) ||
           !(parameter_tolerance >= 0.0))
    out << "tolerances must be >= 0";
  else if (num_threads < 1) out << "num_threads must be >= 1, got " << num_threads;
  else progress.IsValid(&message);
  if (!message.empty()) out << message;
  if (out.str().empty()) return true;
  if (why != nullptr) *why = out.str();
  return false;
}

const char* TrustRegionName(WeightedResidualSmootherOptions::TrustRegion trust_region) {
  switch (trust_region) {
    case WeightedResidualSmootherOptions::TrustRegion::kLevenbergMarquardt:
      return "levenberg_marquardt";
    case WeightedResidualSmootherOptions::TrustRegion::kDogleg:
      return "dogleg";
  }
  return "?";
}

SolverSummary SolveWeightedResidual(
    ceres::Problem* problem, problems::WeightedResidualVariables* variables,
    const WeightedResidualSmootherOptions& options) {
  CHECK(problem != nullptr && variables != nullptr) << "expected problem and variables";
  SolverSummary result;
  std::string why;
  if (!options.IsValid(&why)) {
    result.message = "invalid options: " + why;
    return result;
  }
  ceres::Solver::Options solver_options;
  solver_options.linear_solver_type = ceres::SPARSE_NORMAL_CHOLESKY;
  solver_options.sparse_linear_algebra_library_type =
      options.sparse_library == WeightedResidualSmootherOptions::SparseLibrary::kEigenSparse
          ? ceres::EIGEN_SPARSE
          : ceres::SUITE_SPARSE;
  solver_options.trust_region_strategy_type =
      options.trust_region == WeightedResidualSmootherOptions::TrustRegion::kDogleg
          ? ceres::DOGLEG
          : ceres::LEVENBERG_MARQUARDT;
  solver_options.max_num_iterations = options.max_iterations;
  solver_options.function_tolerance = options.function_tolerance;
  solver_options.gradient_tolerance = options.gradient_tolerance;
  solver_options.parameter_tolerance = options.parameter_tolerance;
  solver_options.num_threads = options.num_threads;
  solver_options.logging_type = ceres::SILENT;
  double* theta = variables->ConstantParameterBlock();
  if (options.order_parameters_last && theta != nullptr) {
    auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
    for (double* block : variables->TrajectoryBlocks()) ordering->AddElementToGroup(block, 0);
    ordering->AddElementToGroup(theta, 1);
    solver_options.linear_solver_ordering = ordering;
  }
  internal::CeresProgress callback("weighted-residual smoother", options.progress,
                                  std::chrono::steady_clock::now());
  if (options.progress.log_progress || options.progress.callback) {
    solver_options.callbacks.push_back(&callback);
    solver_options.update_state_every_iteration = false;
  }
  ceres::Solver::Summary summary;
  ceres::Solve(solver_options, problem, &summary);
  result.converged = summary.termination_type == ceres::CONVERGENCE;
  result.iterations = static_cast<int>(summary.iterations.size()) - 1;
  result.initial_cost = summary.initial_cost;
  result.final_cost = summary.final_cost;
  result.time_s = summary.total_time_in_seconds;
  result.linear_solver_time_s = summary.linear_solver_time_in_seconds;
  result.jacobian_time_s = summary.jacobian_evaluation_time_in_seconds;
  result.message = summary.message;
  if (!summary.IsSolutionUsable()) result.message = "no usable solution: " + summary.message;
  return result;
}

bool ConstantParameterInformation(ceres::Problem* problem,
                                  problems::WeightedResidualVariables* variables,
                                  Eigen::MatrixXd* information, std::string* error) {
  CHECK(variables != nullptr) << "expected variables";
  double* theta = variables->ConstantParameterBlock();
  if (theta == nullptr) {
    *error = std::string("parameter information needs ParameterMode::kConstant, got ") +
             problems::ParameterModeName(variables->mode);
    return false;
  }
  return ParameterInformationBySchur(problem, variables->TrajectoryBlocks(), {theta}, information,
                                     error);
}

bool ConstantParameterSandwichCovariance(ceres::Problem* problem,
                                         problems::WeightedResidualVariables* variables,
                                         const models::ModelInfo& info,
                                         const problems::WeightedResidualWeights& weights,
                                         SandwichCovariance* result, std::string* error,
                                         const SandwichOptions& options) {
  CHECK(problem != nullptr && variables != nullptr) << "expected a problem and variables";
  double* theta = variables->ConstantParameterBlock();
  if (theta == nullptr) {
    *error = std::string("the sandwich covariance needs ParameterMode::kConstant, got ") +
             problems::ParameterModeName(variables->mode);
    return false;
  }
  const int n = static_cast<int>(info.positions.size());
  const int zeta_size = static_cast<int>(weights.residual.rows());
  if (variables->states.rows() != 2 * n || weights.kinematic.rows() != 2 * n) {
    *error = "the model info does not match the variables and weights (" + std::to_string(n) +
             " positions)";
    return false;
  }
  // Groups: W entries (2n), then V entries (n + l), named as problems::ListWeightEntries does
  // when the matrix is diagonal (its factor's rows are then the entries).
  const std::vector<problems::WeightEntry> entries = problems::ListWeightEntries(info);
  ResidualRowLayout layout;
  for (int i = 0; i < 2 * n + zeta_size; ++i) {
    const bool kinematic = i < 2 * n;
    const bool diagonal =
        kinematic ? weights.kinematic.isDiagonal() : weights.residual.isDiagonal();
    layout.group_names.push_back(
        diagonal ? entries[i].name
                 : (kinematic ? "W[" + std::to_string(i) : "V[" + std::to_string(i - 2 * n)) +
                       "] (row of its square-root factor)");
  }
  std::map<const double*, int> state_node;
  for (int k = 0; k < variables->num_nodes(); ++k) state_node[variables->state(k)] = k;
  problem->GetResidualBlocks(&layout.residual_blocks);
  std::vector<double*> blocks;
  for (const ceres::ResidualBlockId id : layout.residual_blocks) {
    problem->GetParameterBlocksForResidualBlock(id, &blocks);
    const int rows = problem->GetCostFunctionForResidualBlock(id)->num_residuals();
    const auto first = blocks.empty() ? state_node.end() : state_node.find(blocks[0]);
    const bool starts_at_state = first != state_node.end();
    if (starts_at_state && blocks.size() == 3 && blocks[2] == theta && rows == zeta_size) {
      for (int r = 0; r < rows; ++r) layout.group.push_back(2 * n + r);  // zeta at a node
      layout.sample.resize(layout.group.size(), first->second);
    } else if (starts_at_state && blocks.size() >= 3 &&
               first->second + 1 < variables->num_nodes() &&
               blocks[1] == variables->state(first->second + 1) && rows % (2 * n) == 0) {
      for (int r = 0; r < rows; ++r) layout.group.push_back(r % (2 * n));  // xi on an interval
      layout.sample.resize(layout.group.size(), first->second);
    } else if (starts_at_state && first->second == 0 &&
               (blocks.size() == 1 || (blocks.size() == 2 && blocks[1] == theta))) {
      for (int r = 0; r < rows; ++r) layout.group.push_back(-1);  // the initial term: a prior
      layout.sample.resize(layout.group.size(), -1);
    } else {
      *error = "a residual block that problems::BuildWeightedResidualProblem does not add (" +
               std::to_string(blocks.size()) + " parameter blocks, " + std::to_string(rows) +
               " residuals)";
      return false;
    }
  }
  return ParameterSandwichCovarianceBySchur(problem, variables->TrajectoryBlocks(), {theta}, layout,
                                            result, error, options);
}

bool NodeCovarianceBlocks(ceres::Problem* problem, problems::WeightedResidualVariables* variables,
                          TrajectoryCovariance* covariance, std::string* error) {
  CHECK(variables != nullptr) << "expected variables";
  double* theta = variables->ConstantParameterBlock();
  std::vector<double*> parameter_blocks;
  if (theta != nullptr) parameter_blocks.push_back(theta);
  const int blocks_per_node = variables->mode == problems::ParameterMode::kTimeVarying ? 3 : 2;
  return TrajectoryCovarianceBySelectedInversion(problem, variables->TrajectoryBlocks(),
                                                 parameter_blocks, blocks_per_node, covariance,
                                                 error);
}

}  // namespace dynid::solvers
