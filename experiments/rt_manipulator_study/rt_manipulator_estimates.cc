// experiments/rt_manipulator_study/rt_manipulator_estimates — the weightings, the linearised
// optimal filter and the smoother of rt_manipulator_study (see rt_manipulator_estimates.h).
#include "experiments/rt_manipulator_study/rt_manipulator_estimates.h"

#include <ceres/problem.h>
#include <glog/logging.h>

#include <cmath>
#include <string>
#include <vector>

#include "dynid/models/mechanical_model.h"
#include "dynid/models/rt_manipulator.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/problems/weighted_residual_weights.h"
#include "dynid/solvers/first_order_smoother.h"
#include "dynid/solvers/monte_carlo.h"
#include "dynid/solvers/parameter_covariance.h"
#include "dynid/solvers/weighted_residual_smoother.h"
#include "experiments/rt_manipulator_study/rt_manipulator_flags.h"

namespace dynid::rt_manipulator_study {

bool MakeWeightings(const models::RtManipulatorRigid& model,
                    const problems::WeightedResidualData& data, Weightings* weightings,
                    std::string* error) {
  // Weights (§5.5 rule: 1 / (order of magnitude of the term)², the per-sample weights of
  // standard deviations equal to the orders, h = 1).
  const dynid::models::ModelInfo info = model.Info();
  problems::NoiseStandardDeviations orders;
  orders.kinematic = Eigen::Vector4d(1e-3, 1e-3, 1e-2, 1e-2);
  orders.equations = Eigen::Vector2d(1e-2, 1e-2);
  orders.measurements.resize(6);
  orders.measurements << 1e-4, 1e-4, 1e-2, 1e-2, 1e-2, 1e-2;
  problems::WeightedResidualWeights base =
      problems::WeightedResidualWeights::FromStandardDeviations(orders, 1.0);
  base.parameter = Eigen::MatrixXd::Constant(1, 1, 1.0);
  Eigen::VectorXd r0(5);
  r0 << 1e8, 1e8, 1e8, 1e8, 1e-2;  // initial pose known, payload 0 kg "just a number"
  base.initial = r0.asDiagonal();
  base.initial_guess = Eigen::VectorXd::Zero(5);
  base.initial_guess(0) = data.measurements(0, 0);
  base.initial_guess(1) = data.measurements(0, 1);
  // Weighting 2: the 2nd equation of motion and the phi measurement de-weighted.
  problems::WeightedResidualWeights deweighted = base;
  for (const char* name : {"V.eom.joint_torque_balance", "V.z.phi_measured"}) {
    if (!deweighted.Set(info, name, FLAGS_deweight, error)) return false;
  }
  weightings->base = base;
  weightings->deweighted = deweighted;
  return true;
}

double ReportedSd(const Estimate& e, solvers::CovarianceScaling form) {
  switch (form) {
    case solvers::CovarianceScaling::kHac:
      return e.mass_smoother_sd_hac;
    case solvers::CovarianceScaling::kSandwich:
      return e.mass_smoother_sd_sandwich;
    case solvers::CovarianceScaling::kVarianceFactor:
      break;
  }
  return e.mass_smoother_sd_variance_factor;
}

bool RunEstimates(const models::RtManipulatorRigid& model,
                  const problems::WeightedResidualData& data, const Weightings& weightings,
                  std::vector<Estimate>* estimates_out, std::string* error_out) {
  const dynid::models::ModelInfo info = model.Info();
  const problems::WeightedResidualWeights& base = weightings.base;
  const problems::WeightedResidualWeights& deweighted = weightings.deweighted;
  const int num_nodes = static_cast<int>(data.time.size());
  std::vector<Estimate>& estimates = *estimates_out;
  estimates.assign(2, Estimate());
  estimates[0].name = "weighting1";
  estimates[1].name = "weighting2";
  for (int w = 0; w < 2; ++w) {
    Estimate& e = estimates[w];
    problems::WeightedResidualWeights weights = w == 0 ? base : deweighted;
    // On-line: the linearised optimal filter with a time-varying payload.
    solvers::LinearOptimalFilterResult filtered;
    std::string error;
    if (!solvers::RunLinearOptimalFilter(
            model, data, weights, problems::ParameterMode::kTimeVarying,
            Eigen::Matrix<double, 1, 1>(0.0), solvers::LinearOptimalFilterOptions(), &filtered,
            &error)) {
      *error_out = e.name + " filter: " + error;
      return false;
    }
    e.mass_filter = filtered.states.row(4).transpose();
    e.states_filter = filtered.states;
    e.inputs_filter = filtered.inputs;
    {
      problems::WeightedResidualVariables at_filter;
      problems::ResizeVariables(2, 2, Eigen::VectorXd::Zero(1), num_nodes,
                                problems::ParameterMode::kTimeVarying, &at_filter);
      at_filter.states = filtered.states.topRows(4);
      at_filter.inputs = filtered.inputs;
      at_filter.parameters = filtered.states.bottomRows(1);
      Eigen::MatrixXd xi;
      problems::ComputeWeightedResiduals(model, data, at_filter, &e.zeta_filter, &xi);
    }
    // Off-line: the smoother with a constant payload, started from the filter's trajectory.
    problems::WeightedResidualVariables variables;
    problems::ResizeVariables(2, 2, Eigen::VectorXd::Zero(1), num_nodes,
                              problems::ParameterMode::kConstant, &variables);
    variables.states = filtered.states.topRows(4);
    variables.inputs = filtered.inputs;
    problems::WeightedResidualOptions options;
    options.transcription = problems::Transcription::kCollocation;
    options.parameter_mode = problems::ParameterMode::kConstant;
    // The smoother needs no prior on the payload.
    if (!weights.Set(info, "R0.theta.payload_mass", 1e-8, &error)) {
      *error_out = error;
      return false;
    }
    ceres::Problem problem;
    if (!problems::BuildWeightedResidualProblem(model, data, weights, options, &variables, &problem,
                                                &error)) {
      *error_out = e.name + " smoother: " + error;
      return false;
    }
    solvers::WeightedResidualSmootherOptions solver_options;
    solver_options.max_iterations = 200;
    e.smoother_summary = solvers::SolveWeightedResidual(&problem, &variables, solver_options);
    if (!e.smoother_summary.converged) {
      LOG(WARNING) << e.name << " smoother: " << e.smoother_summary.message;
    }
    e.mass_smoother = variables.parameters(0, 0);
    // The a posteriori variance factor over the weighted rows only (the zero-weight rows of
    // the problem carry no degree of freedom; solvers/README.md, "Pitfalls").
    e.variance_factor =
        solvers::ResidualVarianceFactor(problem, e.smoother_summary.final_cost,
                                        problems::CountWeightedResiduals(weights, data, options));
    Eigen::MatrixXd information;
    if (solvers::ConstantParameterInformation(&problem, &variables, &information, &error)) {
      const solvers::IdentifiabilityReport report = solvers::AnalyzeIdentifiability(
          information, variables.parameters.col(0), {"payload_mass [kg]"});
      e.mass_smoother_sd_weights = report.standard_deviation(0);
      e.mass_smoother_sd_variance_factor =
          e.mass_smoother_sd_weights * std::sqrt(e.variance_factor);
      e.identifiability = report.message;
      solvers::SandwichCovariance sandwich;
      solvers::SandwichOptions sandwich_options;
      sandwich_options.white_reference_draws = 64;  // a few percent Monte Carlo error
      if (solvers::ConstantParameterSandwichCovariance(&problem, &variables, info, weights,
                                                       &sandwich, &error, sandwich_options)) {
        e.mass_smoother_sd_sandwich = sandwich.standard_deviation(0);
        e.mass_smoother_sd_hac = sandwich.hac_standard_deviation(0);
        e.mass_smoother_hac_c = sandwich.hac_critical_value_95;
        e.mass_smoother_hac_excess = sandwich.hac_excess(0);
      } else {
        e.identifiability += "; no sandwich covariance: " + error;
      }
      CovarianceFromFlags(&e.covariance);  // checked by ValidateFlags
      e.mass_smoother_sd = ReportedSd(e, e.covariance);
      e.interval_c = e.covariance == solvers::CovarianceScaling::kHac ? e.mass_smoother_hac_c
                                                                      : solvers::kNormalQuantile975;
    } else {
      e.identifiability = error;
    }
    Eigen::MatrixXd xi;
    problems::ComputeWeightedResiduals(model, data, variables, &e.zeta_smoother, &xi);
  }
  return true;
}

}  // namespace dynid::rt_manipulator_study
