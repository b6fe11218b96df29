// experiments/xy_table_study/xy_table_stages — the identification stages of xy_table_study (see
// xy_table_stages.h).
#include "experiments/xy_table_study/xy_table_stages.h"

#include <cmath>
#include <string>
#include <vector>

namespace dynid::xy_table_study {

namespace models = dynid::models;
namespace problems = dynid::problems;

std::string CovarianceDescription(solvers::CovarianceScaling covariance) {
  switch (covariance) {
    case solvers::CovarianceScaling::kHac:
      return "± is the HAC sandwich σ (every term's residuals summed per sample, their "
             "correlation over time by Bartlett weights; the 95 % interval is ± c σ with each "
             "stage's fixed-b c, summary.json's interval_critical_value_95)";
    case solvers::CovarianceScaling::kSandwich:
      return "± is the sandwich σ (a white variance factor per term of the functional, from its "
             "residuals); the 95 % interval is ± 1.96 σ";
    case solvers::CovarianceScaling::kVarianceFactor:
      break;
  }
  return "± is the Schur-complement σ scaled by the residual variance factor; the 95 % interval "
         "is ± 1.96 σ";
}

bool RunIdentificationStages(const Record& rec, std::vector<StageResult>* stages_out,
                             std::vector<problems::WeightedResidualWeights>* weights_out,
                             std::string* error) {
  const problems::WeightedResidualData& d = rec.d;
  const models::XyTableParameters& parameters = rec.parameters;
  const XyTableCaseOptions& case_options = rec.case_options;
  const models::XyTableRigid rigid(parameters);
  const models::XyTableFlexible flexible(parameters);
  std::vector<StageResult>& stages = *stages_out;
  std::vector<problems::WeightedResidualWeights>& weights = *weights_out;
  stages.resize(3);
  weights.resize(3);
  for (int s = 0; s < 3; ++s) {
    weights[s] = XyTableWeights(static_cast<XyStage>(s), d, parameters, case_options.weights);
  }
  if (!RunStage(rigid, XyStage::kRigid, d, weights[0], parameters, XyTableThesisInitialGuess(false),
                problems::ParameterMode::kConstant, &stages[0], error)) {
    *error = "rigid stage: " + *error;
    return false;
  }
  // The rigid estimates start the flexible model, with the thesis's k0 (as in the thesis).
  Eigen::VectorXd theta_flexible0 = XyTableThesisInitialGuess(true);
  theta_flexible0.head<4>() = stages[0].theta;
  for (int s = 1; s < 3; ++s) {
    if (!RunStage(flexible, static_cast<XyStage>(s), d, weights[s], parameters, theta_flexible0,
                  problems::ParameterMode::kConstant, &stages[s], error)) {
      *error = std::string(XyStageName(static_cast<XyStage>(s))) + ": " + *error;
      return false;
    }
  }
  return true;
}

}  // namespace dynid::xy_table_study
