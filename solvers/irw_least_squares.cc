#include "dynid/solvers/irw_least_squares.h"

#include <cmath>
#include <vector>

#include <ceres/ceres.h>
#include <glog/logging.h>

#include "dynid/problems/irw_problem.h"
#include "dynid/solvers/internal/banded.h"
#include "dynid/solvers/internal/difference_stencil.h"

namespace dynid::solvers {
namespace {

bool CheckInputs(const Eigen::VectorXd& y, IrwModel model, double nvr, std::string* error) {
  if (!(nvr > 0.0) || !std::isfinite(nvr)) {
    *error = "nvr must be a positive finite number";
    return false;
  }
  if (y.size() < IrwStateSize(model) + 2) {
    *error = "too few samples for IRW smoothing";
    return false;
  }
  if (!y.allFinite()) {
    *error = "the signal contains NaN or Inf";
    return false;
  }
  return true;
}

}  // namespace

Eigen::MatrixXd IrwStatesFromPositions(const Eigen::VectorXd& x, IrwModel model) {
  const int n = static_cast<int>(x.size());
  const int nx = IrwStateSize(model);
  Eigen::MatrixXd states(n, nx);
  states.col(0) = x;
  if (model == IrwModel::kIrw1) {
    for (int k = 0; k + 1 < n; ++k) states(k, 1) = x[k + 1] - x[k];
    states(n - 1, 1) = states(n - 2, 1);
  } else {
    for (int k = 0; k + 2 < n; ++k) states(k, 2) = x[k + 2] - 2.0 * x[k + 1] + x[k];
    states(n - 2, 2) = states(n - 3, 2);
    states(n - 1, 2) = states(n - 3, 2);
    for (int k = 0; k + 1 < n; ++k) states(k, 1) = x[k + 1] - x[k];
    states(n - 1, 1) = states(n - 2, 1) + states(n - 2, 2);
  }
  return states;
}

bool SmoothIrwBanded(const Eigen::VectorXd& y, IrwModel model, double nvr,
                     Eigen::MatrixXd* states, std::string* error) {
  if (!CheckInputs(y, model, nvr, error)) return false;
  const int n = static_cast<int>(y.size());
  const int order = IrwStateSize(model);
  const std::vector<double> stencil = internal::DifferenceStencil(order);
  // Normal matrix I + D^T D / NVR, accumulated row by row of D.
  BandedSpdMatrix normal(n, order);
  for (int k = 0; k < n; ++k) normal.At(k, k) = 1.0;
  const double weight = 1.0 / nvr;
  for (int r = 0; r + order < n; ++r) {
    for (int i = 0; i <= order; ++i) {
      for (int j = 0; j <= i; ++j) normal.At(r + i, r + j) += weight * stencil[i] * stencil[j];
    }
  }
  BandedCholesky cholesky;
  int pivot = -1;
  if (!cholesky.Factorize(normal, &pivot)) {
    *error = "banded Cholesky failed at pivot " + std::to_string(pivot) +
             " (NVR too small for the normal equations; use the recursive smoother)";
    return false;
  }
  *states = IrwStatesFromPositions(cholesky.Solve(y), model);
  return true;
}

bool SmoothIrwCeres(const Eigen::VectorXd& y, IrwModel model, double nvr,
                    Eigen::MatrixXd* states, IrwCeresSummary* summary, std::string* error) {
  if (!CheckInputs(y, model, nvr, error)) return false;
  std::vector<double> positions(y.data(), y.data() + y.size());
  ceres::Problem::Options problem_options;
  problem_options.enable_fast_removal = false;
  ceres::Problem problem(problem_options);
  problems::BuildIrwProblem(y, IrwStateSize(model), nvr, &positions, &problem);
  ceres::Solver::Options options;
  options.linear_solver_type = ceres::SPARSE_NORMAL_CHOLESKY;
  options.sparse_linear_algebra_library_type = ceres::SUITE_SPARSE;
  // The problem is linear: one Gauss-Newton step solves it. A huge trust region makes the
  // Levenberg-Marquardt regularisation negligible; the second iteration confirms convergence.
  options.initial_trust_region_radius = 1e16;
  options.max_trust_region_radius = 1e32;
  options.max_num_iterations = 5;
  options.function_tolerance = 1e-16;
  options.gradient_tolerance = 1e-20;
  options.parameter_tolerance = 1e-16;
  options.num_threads = 1;
  options.logging_type = ceres::SILENT;
  std::string why;
  if (!options.IsValid(&why)) {
    *error = "Ceres options: " + why;
    return false;
  }
  ceres::Solver::Summary ceres_summary;
  ceres::Solve(options, &problem, &ceres_summary);
  summary->converged = ceres_summary.IsSolutionUsable();
  summary->iterations = static_cast<int>(ceres_summary.iterations.size()) - 1;
  summary->final_cost = ceres_summary.final_cost;
  summary->solve_time_s = ceres_summary.total_time_in_seconds;
  summary->message = ceres_summary.BriefReport();
  if (!summary->converged) {
    *error = "Ceres did not produce a usable solution: " + ceres_summary.message;
    return false;
  }
  *states = IrwStatesFromPositions(Eigen::Map<const Eigen::VectorXd>(positions.data(),
                                                                     y.size()), model);
  return true;
}

}  // namespace dynid::solvers
