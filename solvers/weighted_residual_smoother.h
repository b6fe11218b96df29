// solvers::SolveWeightedResidual — solves a weighted-residual estimation problem built by
// problems::BuildWeightedResidualProblem (van de Molengraft (1990)) with Ceres, and extracts the
// covariance of constant parameters (solvers/parameter_covariance.h).
//
// Linear algebra: SPARSE_NORMAL_CHOLESKY with SuiteSparse; for ParameterMode::kConstant the
// shared theta block is put in a second elimination group so the fill-reducing ordering
// eliminates the banded trajectory first and theta last (the dense theta rows then add O(N p)
// work, and the cost per node stays flat in N).
//
// Long runs report progress (solver_summary.h): the callback `progress.callback` after every
// iteration and, with `progress.log_progress`, a LOG(INFO) line at most every
// `progress.progress_period_s` seconds.
#ifndef DYNID_SOLVERS_WEIGHTED_RESIDUAL_SMOOTHER_H_
#define DYNID_SOLVERS_WEIGHTED_RESIDUAL_SMOOTHER_H_

#include <functional>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/parameter_covariance.h"
#include "dynid/solvers/solver_summary.h"

namespace ceres {
class Problem;
}

namespace dynid::solvers {

struct WeightedResidualSmootherOptions {
  int max_iterations = 100;
  double function_tolerance = 1e-12;
  double gradient_tolerance = 1e-12;
  double parameter_tolerance = 1e-12;
  int num_threads = 1;
  bool order_parameters_last = true;  // theta (kConstant) in the last elimination group
  // Sparse Cholesky of the normal equations: SuiteSparse (CHOLMOD, the default) or Eigen's
  // simplicial LDLT (often faster on these narrow-band problems; see bench_weighted_residual).
  enum class SparseLibrary { kSuiteSparse, kEigenSparse };
  SparseLibrary sparse_library = SparseLibrary::kSuiteSparse;
  // Trust-region strategy: Levenberg–Marquardt (the default) or Powell's dogleg (Nocedal & Wright
  // (2006) §4.1). With a smoothed dry-friction model the optimum can lie at the end of a long
  // curved valley, where Levenberg–Marquardt creeps on with a step ratio near one half for
  // hundreds of iterations; the dogleg, which moves along the steepest descent direction before
  // the Gauss–Newton one, reached a lower cost in tens (see the xy_table_study README).
  enum class TrustRegion { kLevenbergMarquardt, kDogleg };
  TrustRegion trust_region = TrustRegion::kLevenbergMarquardt;
  ProgressOptions progress;  // callback after every iteration, periodic LOG(INFO) lines

  bool IsValid(std::string* why) const;
};

// "levenberg_marquardt" or "dogleg" (the programs' flag values).
const char* TrustRegionName(WeightedResidualSmootherOptions::TrustRegion trust_region);

// Solves `problem` (built over `variables`) in place. Convergence means Ceres stopped on one of
// its tolerances; hitting max_iterations or a failure is reported in `message`.
SolverSummary SolveWeightedResidual(
    ceres::Problem* problem, problems::WeightedResidualVariables* variables,
    const WeightedResidualSmootherOptions& options);

// Information S of the constant theta block (kConstant only) by the O(N) Schur complement of the
// banded trajectory (ParameterInformationBySchur) and its identifiability analysis.
bool ConstantParameterInformation(ceres::Problem* problem,
                                  problems::WeightedResidualVariables* variables,
                                  Eigen::MatrixXd* information, std::string* error);

// Sandwich covariance of the constant theta (kConstant only; ParameterSandwichCovarianceBySchur)
// for a problem built by problems::BuildWeightedResidualProblem from `weights` for a model with
// `info`: one residual group per term of the functional — each zeta component over the nodes
// (V.eom.<equation>, V.z.<measurement>) and each xi component over the intervals (W.s.<position>,
// W.v.<position>; both Gauss points of an element in the same group) — each with its own
// variance factor estimated from the fitted residuals; the initial term (R0) is a prior. With a
// non-diagonal V or W the rows are those of its square-root factor, named V[i] / W[i]. The HAC
// form is computed too, with node k's zeta rows and interval [k, k+1]'s xi rows at sample k
// (and its white-noise reference with options.white_reference_draws > 0).
// Fails with a message on another mode, on a residual block the builder does not add, or as
// ParameterSandwichCovarianceBySchur does.
bool ConstantParameterSandwichCovariance(ceres::Problem* problem,
                                         problems::WeightedResidualVariables* variables,
                                         const models::ModelInfo& info,
                                         const problems::WeightedResidualWeights& weights,
                                         SandwichCovariance* result, std::string* error,
                                         const SandwichOptions& options = SandwichOptions());

// Full covariance of every node's unknowns, node k's block ordered [s_k; v_k; a_k; u_k
// (; theta_k for kTimeVarying)] (2n + n + m [+ p] square), with its cross-covariance with the
// constant theta (kConstant; empty columns otherwise) and cov(theta): banded selected inversion
// of the trajectory plus the rank-p correction for theta (TrajectoryCovarianceBySelectedInversion),
// O(N). kFixed theta is held constant and contributes no uncertainty.
bool NodeCovarianceBlocks(ceres::Problem* problem, problems::WeightedResidualVariables* variables,
                          TrajectoryCovariance* covariance, std::string* error);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_WEIGHTED_RESIDUAL_SMOOTHER_H_
