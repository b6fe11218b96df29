// experiments/friction_filter_study/friction_filter_filters — the sliding-surface filter and the
// linear optimal filter run per case (see friction_filter_filters.h). The calls of the optimal
// filter stay in this one file: its first-order approximation's results depend at rounding level
// on what is compiled with it.
#include "experiments/friction_filter_study/friction_filter_filters.h"

#include <chrono>
#include <string>
#include <vector>

#include "dynid/models/unknown_force_mass.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/problems/weighted_residual_weights.h"
#include "dynid/solvers/first_order_smoother.h"
#include "dynid/solvers/sliding_surface_filter.h"
#include "experiments/friction_filter_study/friction_filter_flags.h"

namespace dynid::friction_filter_study {

namespace models = dynid::models;
namespace problems = dynid::problems;

FilterSetup MakeFilterSetup(const Settings& settings) {
  const std::vector<double>& initial_state = settings.initial_state;
  const std::vector<double>& initial_input = settings.initial_input;
  const std::vector<double>& residual_weights = settings.residual_weights;
  const std::vector<double>& kinematic_weights = settings.kinematic_weights;
  const Eigen::Vector3d x0(initial_state[0], initial_state[1], initial_state[2]);
  const Eigen::Vector2d pbar0(initial_input[0], initial_input[1]);
  models::UnknownForceMass::Parameters model_parameters;
  model_parameters.mass_kg = FLAGS_filter_mass;
  const models::UnknownForceMass model(model_parameters);
  // The flags are weights (the 1/order² rule), not standard deviations: no node spacing applies.
  problems::NoiseStandardDeviations given;
  given.kinematic_weights = Eigen::Vector2d(kinematic_weights[0], kinematic_weights[1]);
  given.equation_weights = Eigen::VectorXd::Constant(1, residual_weights[0]);
  given.measurement_weights =
      Eigen::Vector3d(residual_weights[1], residual_weights[2], residual_weights[3]);
  problems::WeightedResidualWeights weights =
      problems::WeightedResidualWeights::FromStandardDeviations(given, 1.0);
  weights.parameter = Eigen::MatrixXd::Constant(1, 1, FLAGS_optimal_parameter_weight);
  // R0: the initial estimate is "just a guess" (weak confidence, Q(t0) = R0⁻¹ large).
  weights.initial = Eigen::Vector3d(1e2, 1e2, 1e-2).asDiagonal();
  weights.initial_guess = x0;
  return {model, settings.sliding_options, x0, pbar0, weights};
}

bool RunFilters(const FilterSetup& setup, const Eigen::VectorXd& times,
                const Eigen::MatrixXd& measurements, FilterRuns* runs, std::string* error,
                const std::function<void(int done)>& filter_done, bool sigma_demo) {
  auto done = [&filter_done](int count) {
    if (filter_done) filter_done(count);
  };
  const models::UnknownForceMass& model = setup.model;
  const solvers::SlidingSurfaceFilterOptions& sliding_options = setup.sliding_options;
  const Eigen::Vector3d& x0 = setup.x0;
  const Eigen::Vector2d& pbar0 = setup.pbar0;
  const problems::WeightedResidualWeights& weights = setup.weights;
  // Sliding-surface filter, sigma = 0 and sigma = sigma_demo.
  solvers::SlidingSurfaceFilterData sliding_data{times, measurements, Eigen::MatrixXd()};
  solvers::SlidingSurfaceFilterResult& sliding = runs->sliding;
  solvers::SlidingSurfaceFilterResult& sliding_sigma = runs->sliding_sigma;
  solvers::SlidingSurfaceFilterSummary& sliding_summary = runs->sliding_summary;
  solvers::SlidingSurfaceFilterSummary& sliding_sigma_summary = runs->sliding_sigma_summary;
  if (!solvers::RunSlidingSurfaceFilter(model, sliding_data, sliding_options, x0, pbar0, &sliding,
                                        &sliding_summary)) {
    *error = "sliding-surface filter: " + sliding_summary.message;
    return false;
  }
  done(1);
  solvers::SlidingSurfaceFilterOptions sigma_options = sliding_options;
  sigma_options.sigma = Eigen::Vector4d::Constant(FLAGS_sigma_demo);
  if (!sigma_demo) {
    sliding_sigma = sliding;
    sliding_sigma_summary = sliding_summary;
  } else if (!solvers::RunSlidingSurfaceFilter(model, sliding_data, sigma_options, x0, pbar0,
                                               &sliding_sigma, &sliding_sigma_summary)) {
    *error = "sliding-surface filter (sigma): " + sliding_sigma_summary.message;
    return false;
  }
  done(2);
  // Linear optimal filter.
  problems::WeightedResidualData optimal_data{times, measurements};
  solvers::LinearOptimalFilterResult& optimal = runs->optimal;
  const auto optimal_start = std::chrono::steady_clock::now();
  if (!solvers::RunLinearOptimalFilter(model, optimal_data, weights,
                                       problems::ParameterMode::kTimeVarying,
                                       Eigen::Matrix<double, 1, 1>(0.0),
                                       solvers::LinearOptimalFilterOptions(), &optimal, error)) {
    *error = "optimal filter: " + *error;
    return false;
  }
  runs->optimal_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - optimal_start).count();
  done(3);
  return true;
}

}  // namespace dynid::friction_filter_study
