// experiments/rt_manipulator_study/rt_manipulator_estimates — the payload estimates of
// rt_manipulator_study with the rigid model: weightings 1 (all equations of motion trusted) and 2
// (2nd equation of motion and phi measurement de-weighted), and for each the linearised optimal
// filter (time-varying payload) and the smoother (constant payload) with their residuals.
#ifndef DYNID_EXPERIMENTS_RT_MANIPULATOR_STUDY_RT_MANIPULATOR_ESTIMATES_H_
#define DYNID_EXPERIMENTS_RT_MANIPULATOR_STUDY_RT_MANIPULATOR_ESTIMATES_H_

#include <cmath>
#include <string>
#include <vector>

#include "dynid/models/rt_manipulator.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/problems/weighted_residual_weights.h"
#include "dynid/solvers/weighted_residual_smoother.h"

namespace dynid::rt_manipulator_study {

// Weighting 1 (base) and weighting 2 (deweighted).
struct Weightings {
  problems::WeightedResidualWeights base;
  problems::WeightedResidualWeights deweighted;
};

struct Estimate {
  std::string name;
  Eigen::VectorXd mass_filter;    // N, filtered payload
  Eigen::MatrixXd states_filter;  // 5 × N
  Eigen::MatrixXd inputs_filter;  // 4 × N
  Eigen::MatrixXd zeta_filter;    // N × 8 at the filtered estimate
  double mass_smoother = NAN;
  // The payload's standard deviation reported (--covariance): the HAC sandwich's, the white
  // sandwich's or the variance factor's. The weights follow the thesis's orders-of-magnitude rule
  // (§5.5), not the noise, so S⁻¹ alone (S the Schur-complement information in the metric of the
  // weights; kept as mass_smoother_sd_weights) is the same at every noise level. The variance
  // factor σ̂² = ResidualVarianceFactor (2 cost / (m − u), m the weighted residual rows, u the free
  // unknowns; solvers/parameter_covariance.h) rescales it to the residuals the data leave (noise
  // and model error alike); the sandwich (solvers::ConstantParameterSandwichCovariance) gives each
  // term of the functional its own factor, and its HAC form takes the residuals' correlation over
  // time.
  double mass_smoother_sd = NAN;
  double mass_smoother_sd_weights = NAN;          // sqrt([S⁻¹]), in the metric of the weights
  double mass_smoother_sd_variance_factor = NAN;  // sqrt(σ̂² [S⁻¹])
  double mass_smoother_sd_sandwich = NAN;         // NaN when it cannot be formed
  double mass_smoother_sd_hac = NAN;              // the sandwich's HAC form (NaN as above)
  double mass_smoother_hac_c = NAN;               // its fixed-b c: interval ± c σ
  // The HAC σ over its white-noise reference (SandwichCovariance::hac_excess; NaN as above).
  double mass_smoother_hac_excess = NAN;
  solvers::CovarianceScaling covariance = solvers::CovarianceScaling::kHac;  // of the sd
  double interval_c = 1.96;               // the reported 95 % interval is mass_smoother ± c sd
  double variance_factor = NAN;           // σ̂²
  Eigen::MatrixXd zeta_smoother;          // N × 8
  solvers::SolverSummary smoother_summary;
  std::string identifiability;
};

// The two weightings (§5.5 rule; weighting 2 with --deweight). False (exit code 1) with a
// message otherwise.
bool MakeWeightings(const models::RtManipulatorRigid& model,
                    const problems::WeightedResidualData& data, Weightings* weightings,
                    std::string* error);

// The filter and the smoother for each weighting ("weighting1", "weighting2"). False (exit code
// 1) with a message otherwise.
// The smoother's payload sd in the covariance form `form` (NaN where it could not be formed).
double ReportedSd(const Estimate& e, solvers::CovarianceScaling form);

bool RunEstimates(const models::RtManipulatorRigid& model,
                  const problems::WeightedResidualData& data, const Weightings& weightings,
                  std::vector<Estimate>* estimates, std::string* error);

}  // namespace dynid::rt_manipulator_study

#endif  // DYNID_EXPERIMENTS_RT_MANIPULATOR_STUDY_RT_MANIPULATOR_ESTIMATES_H_
