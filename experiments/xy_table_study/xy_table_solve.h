// experiments/xy_table_study/xy_table_solve — one weighted-residual solve of an xy-table model
// (XyTableRigid or XyTableFlexible) with its settings: transcription, trust-region strategy,
// iteration cap and the smoothing continuation.
//
// The smoothing continuation: the models' smooth dry friction w v / sqrt(v² + eps²) makes the
// weighted-residual problem non-convex in the states near the velocity reversals, and a solve
// from the initial guess ends in one of several minima, which the trust-region strategy decides
// (on the study's default record the rigid stage's final costs differed by 10 % between
// Levenberg–Marquardt, after 1143 iterations, and the dogleg, after 107). With eps ten times
// larger the problem is smooth enough for one optimum found in a few iterations; the models' eps
// is then approached in steps, each solve starting from the previous one's trajectory and
// parameters — a homotopy (Allgower & Georg (1990) ch. 1). The estimate is that of the models'
// own eps, and so is the covariance computed on the final problem.
#ifndef DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_SOLVE_H_
#define DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_SOLVE_H_

#include <ceres/problem.h>

#include <cmath>
#include <string>
#include <vector>

#include "dynid/models/xy_table.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/parameter_covariance.h"
#include "dynid/solvers/weighted_residual_smoother.h"

namespace dynid::xy_table_study {

struct XyTableSolveSettings {
  problems::Transcription transcription = problems::Transcription::kShooting;
  solvers::WeightedResidualSmootherOptions::TrustRegion trust_region =
      solvers::WeightedResidualSmootherOptions::TrustRegion::kDogleg;
  int max_iterations = 300;  // per solve
  // Factors > 1, decreasing, on the models' eps of the solves before the final one (empty: the
  // final solve only, from the initial guess).
  std::vector<double> continuation_factors = {10.0, 4.0, 2.0};
  // The reported covariance of theta: the HAC sandwich (the default), the sandwich with a white
  // variance factor per term of the functional, or S⁻¹ scaled by one variance factor.
  solvers::CovarianceScaling covariance = solvers::CovarianceScaling::kHac;
};

// One solve of the continuation: the friction smoothing eps it used and how it ended.
struct ContinuationStep {
  double friction_smoothing_rad_per_s = NAN;
  solvers::SolverSummary summary;
};

// The problem options of the settings: transcription and parameter mode.
inline problems::WeightedResidualOptions WeightedResidualOptionsOf(
    const XyTableSolveSettings& settings, problems::ParameterMode mode) {
  problems::WeightedResidualOptions options;
  options.transcription = settings.transcription;
  options.parameter_mode = mode;
  return options;
}

// Solves model on d from *variables (in place): the continuation's solves, then the final one on
// *problem (built here over *variables, left for the covariance); *summary is the final solve's,
// *continuation the earlier ones'. False with *error if a problem cannot be built.
template <class Model>
bool SolveXyTableModel(const Model& model, const problems::WeightedResidualData& d,
                       const problems::WeightedResidualWeights& weights,
                       problems::ParameterMode mode, const XyTableSolveSettings& settings,
                       problems::WeightedResidualVariables* variables, ceres::Problem* problem,
                       solvers::SolverSummary* summary, std::vector<ContinuationStep>* continuation,
                       std::string* error) {
  const problems::WeightedResidualOptions options = WeightedResidualOptionsOf(settings, mode);
  solvers::WeightedResidualSmootherOptions solver_options;
  solver_options.max_iterations = settings.max_iterations;
  solver_options.trust_region = settings.trust_region;
  continuation->clear();
  for (double factor : settings.continuation_factors) {
    models::XyTableParameters smoother = model.parameters();
    smoother.friction_smoothing_rad_per_s *= factor;
    const Model smooth_model(smoother);
    ceres::Problem smooth_problem;
    if (!problems::BuildWeightedResidualProblem(smooth_model, d, weights, options, variables,
                                                &smooth_problem, error)) {
      return false;
    }
    continuation->push_back(
        {smoother.friction_smoothing_rad_per_s,
         solvers::SolveWeightedResidual(&smooth_problem, variables, solver_options)});
  }
  if (!problems::BuildWeightedResidualProblem(model, d, weights, options, variables, problem,
                                              error)) {
    return false;
  }
  *summary = solvers::SolveWeightedResidual(problem, variables, solver_options);
  return true;
}

}  // namespace dynid::xy_table_study

#endif  // DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_SOLVE_H_
