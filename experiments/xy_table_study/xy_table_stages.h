// experiments/xy_table_study/xy_table_stages — the identification stages of xy_table_study: one
// weighted-residual smoother run of a model (estimates, standard deviations scaled by the
// residual variance, identifiability, residuals, model measurements, elastic deformation), and the
// three stages of the thesis (rigid; flexible; flexible with acceleration measurements).
#ifndef DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_STAGES_H_
#define DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_STAGES_H_

#include <ceres/problem.h>

#include <Eigen/Core>
#include <cmath>
#include <string>
#include <vector>

#include "dynid/models/xy_table.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/parameter_covariance.h"
#include "dynid/solvers/weighted_residual_smoother.h"
#include "experiments/xy_table_study/xy_table_case.h"
#include "experiments/xy_table_study/xy_table_flags.h"
#include "experiments/xy_table_study/xy_table_record.h"
#include "experiments/xy_table_study/xy_table_solve.h"

namespace dynid::xy_table_study {

// Draws of the HAC form's white-noise reference (solvers::SandwichOptions): a few percent Monte
// Carlo error on its variances at about the cost of the sandwich itself.
inline constexpr int kHacWhiteReferenceDraws = 64;

struct StageResult {
  XyStage stage;
  Eigen::VectorXd theta, sd, relative_sd;
  std::string identifiability;
  solvers::SolverSummary summary;              // the final solve, with the models' own eps
  std::vector<ContinuationStep> continuation;  // the solves before it (--smoothing_continuation)
  problems::WeightedResidualVariables variables;
  Eigen::MatrixXd zeta, model_z;  // N × (n + l), N × 8
  Eigen::VectorXd deformation;    // x_e(model) − r phi1 (flexible) or 0
  double condition = NAN;
  double residual_variance = NAN;  // the one variance factor 2 cost / (m − u)
  solvers::CovarianceScaling covariance = solvers::CovarianceScaling::kHac;  // of sd
  solvers::SandwichCovariance sandwich;  // kSandwich, kHac: both forms, per-term factors
  double critical_value_95 = 1.96;       // the 95 % interval is theta ± c sd (kHac: fixed-b c)
};

// What the reported ± of `covariance` is, in a sentence (tables, console, JSON).
std::string CovarianceDescription(solvers::CovarianceScaling covariance);

// One smoother run of model (XyTableRigid or XyTableFlexible) on d from theta0 with the flags'
// settings (SolveSettingsFromFlags: --transcription, --trust_region, --max_iterations,
// --smoothing_continuation; SolveXyTableModel); with mode kConstant also the covariance and
// identifiability of theta.
template <class Model>
bool RunStage(const Model& model, XyStage stage, const problems::WeightedResidualData& d,
              const problems::WeightedResidualWeights& weights,
              const models::XyTableParameters& parameters, const Eigen::VectorXd& theta0,
              problems::ParameterMode mode, StageResult* out, std::string* error) {
  constexpr int n = Model::kNumPositions;
  out->stage = stage;
  InitializeXyTableVariables(stage, d, parameters, theta0, &out->variables);
  if (mode == problems::ParameterMode::kFixed) {
    out->variables.mode = mode;
  }
  const XyTableSolveSettings settings = SolveSettingsFromFlags();
  ceres::Problem problem;
  if (!SolveXyTableModel(model, d, weights, mode, settings, &out->variables, &problem,
                         &out->summary, &out->continuation, error)) {
    return false;
  }
  out->theta = out->variables.parameters.col(0);
  if (mode == problems::ParameterMode::kConstant) {
    Eigen::MatrixXd information;
    std::string why;
    if (solvers::ConstantParameterInformation(&problem, &out->variables, &information, &why)) {
      std::vector<std::string> names;
      for (const auto& v : model.Info().parameters) names.push_back(v.name + " [" + v.unit + "]");
      const solvers::IdentifiabilityReport report =
          solvers::AnalyzeIdentifiability(information, out->theta, names);
      // The weights are the thesis's rule, not inverse noise variances: the covariance is the
      // HAC sandwich (--covariance=hac: the terms' residuals summed per sample, correlated over
      // time), the sandwich with a white variance factor per term of the functional (sandwich),
      // or S⁻¹ scaled by one factor (the library's rule: residuals with non-zero weight minus
      // free unknowns).
      const double variance = solvers::ResidualVarianceFactor(
          problem, out->summary.final_cost,
          problems::CountWeightedResiduals(weights, d, WeightedResidualOptionsOf(settings, mode)));
      out->residual_variance = variance;
      out->covariance = settings.covariance;
      out->sd = report.standard_deviation * std::sqrt(variance);
      out->identifiability = report.message;
      out->critical_value_95 = 1.96;
      if (settings.covariance != solvers::CovarianceScaling::kVarianceFactor) {
        std::string sandwich_error;
        // With the HAC form, its white-noise reference: how much of its width the fit alone
        // gives (SandwichCovariance::hac_excess).
        solvers::SandwichOptions sandwich_options;
        if (settings.covariance == solvers::CovarianceScaling::kHac) {
          sandwich_options.white_reference_draws = kHacWhiteReferenceDraws;
        }
        if (solvers::ConstantParameterSandwichCovariance(&problem, &out->variables, model.Info(),
                                                         weights, &out->sandwich, &sandwich_error,
                                                         sandwich_options)) {
          const bool hac = settings.covariance == solvers::CovarianceScaling::kHac;
          out->sd = hac ? out->sandwich.hac_standard_deviation : out->sandwich.standard_deviation;
          if (hac) out->critical_value_95 = out->sandwich.hac_critical_value_95;
        } else {
          out->sd.setConstant(NAN);
          out->identifiability += "; no sandwich covariance: " + sandwich_error;
        }
      }
      out->relative_sd = out->sd.cwiseQuotient(
          out->theta.cwiseAbs().unaryExpr([](double x) { return x > 0.0 ? x : 1.0; }));
      out->condition = report.condition_number;
    } else {
      out->identifiability = why;
    }
  }
  Eigen::MatrixXd xi;
  problems::ComputeWeightedResiduals(model, d, out->variables, &out->zeta, &xi);
  const int N = static_cast<int>(d.time.size());
  out->model_z.resize(N, 8);
  out->deformation.setZero(N);
  for (int k = 0; k < N; ++k) {
    const double* x = out->variables.states.col(k).data();
    const double* pbar = out->variables.inputs.col(k).data();
    double z[8];
    model.Measurements(x, x + n, pbar, pbar + n, out->variables.parameter(k), d.time(k), z);
    for (int j = 0; j < 8; ++j) out->model_z(k, j) = z[j];
    out->deformation(k) = z[0] - parameters.wheel_radius_m * x[0];
  }
  return true;
}

// Stages 1–3 on the record's identification interval with the thesis's weight rule (weights[s]
// of stage s): the rigid model from the thesis's initial guess, then the flexible model, without
// and with the accelerations, from the rigid estimates and the thesis's k0.
bool RunIdentificationStages(const Record& rec, std::vector<StageResult>* stages,
                             std::vector<problems::WeightedResidualWeights>* weights,
                             std::string* error);

}  // namespace dynid::xy_table_study

#endif  // DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_STAGES_H_
