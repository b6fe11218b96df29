#include "dynid/solvers/first_order_smoother.h"

#include <sstream>

#include "dynid/solvers/internal/first_order_smoother.h"

namespace dynid::solvers {

bool FirstOrderSmootherOptions::IsValid(std::string* why) const {
  std::ostringstream out;
  if (max_iterations < 1)
    out << "max_iterations must be >= 1, got " << max_iterations;
  else if (!(damping > 0.0 && damping <= 1.0))
    out << "damping must be in (0, 1], got " << damping;
  else if (!(tolerance >= 0.0))
    out << "tolerance must be >= 0, got " << tolerance;
  else if (num_threads < 1)
    out << "num_threads must be >= 1, got " << num_threads;
  if (out.str().empty()) return true;
  if (why != nullptr) *why = out.str();
  return false;
}

bool LinearOptimalFilterOptions::IsValid(std::string* why) const {
  if (relinearizations >= 1) return true;
  if (why != nullptr) {
    *why = "relinearizations must be >= 1, got " + std::to_string(relinearizations);
  }
  return false;
}

namespace internal {

// Each alternative of FirstOrderModel instantiates the sweeps for that model's sizes.
FirstOrderSmootherSummary RunFirstOrderSmootherOn(FirstOrderModel model,
                                                  const problems::WeightedResidualData& data,
                                                  const problems::WeightedResidualWeights& weights,
                                                  const FirstOrderSmootherOptions& options,
                                                  problems::WeightedResidualVariables* variables) {
  return std::visit(
      [&](const auto* m) {
        return internal::RunFirstOrderSmoother(*m, data, weights, options, variables);
      },
      model);
}

bool RunLinearOptimalFilterOn(FirstOrderModel model, const problems::WeightedResidualData& data,
                              const problems::WeightedResidualWeights& weights,
                              problems::ParameterMode mode, const Eigen::VectorXd& fixed_theta,
                              const LinearOptimalFilterOptions& options,
                              LinearOptimalFilterResult* result, std::string* error) {
  return std::visit(
      [&](const auto* m) {
        return internal::RunLinearOptimalFilter(*m, data, weights, mode, fixed_theta, options,
                                                result, error);
      },
      model);
}

}  // namespace internal
}  // namespace dynid::solvers
