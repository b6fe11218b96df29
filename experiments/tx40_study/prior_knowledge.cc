#include "experiments/tx40_study/prior_knowledge.h"

#include <algorithm>
#include <cmath>

namespace dynid::experiments {

const char* PriorKnowledgeName(PriorKnowledge knowledge) {
  switch (knowledge) {
    case PriorKnowledge::kGood:
      return "good";
    case PriorKnowledge::kPoor:
      return "poor";
    case PriorKnowledge::kNone:
      return "none";
  }
  return "?";
}

bool ParsePriorKnowledge(const std::string& text, PriorKnowledge* knowledge, std::string* error) {
  for (PriorKnowledge k : {PriorKnowledge::kGood, PriorKnowledge::kPoor, PriorKnowledge::kNone}) {
    if (text == PriorKnowledgeName(k)) {
      *knowledge = k;
      return true;
    }
  }
  *error = "unknown prior-knowledge level '" + text + "' (expected good, poor or none)";
  return false;
}

solvers::IdimPreprocessingOptions KnowledgePreprocessing(PriorKnowledge knowledge,
                                                         solvers::IdimDifferentiator differentiator,
                                                         double sample_rate_hz) {
  solvers::IdimPreprocessingOptions options;
  options.differentiator = differentiator;
  options.sample_rate_hz = sample_rate_hz;
  options.butterworth_order = 4;
  double omega_q = 0.0, omega_f = 0.0;
  switch (knowledge) {
    case PriorKnowledge::kGood:
      omega_q = 50.0;
      omega_f = 20.0;
      break;
    case PriorKnowledge::kPoor:
      omega_q = 180.0;
      omega_f = 150.0;
      break;
    case PriorKnowledge::kNone:
      break;
  }
  options.position_cutoff_hz = omega_q;
  options.decimation_factor =
      omega_f > 0.0 ? std::max(1, static_cast<int>(std::lround(0.4 * sample_rate_hz / omega_f)))
                    : 1;
  return options;
}

}  // namespace dynid::experiments
