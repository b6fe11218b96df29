// experiments/friction_filter_study/friction_filter_filters — the two filters run per case, both
// on models::UnknownForceMass with filter mass --filter_mass: the sliding-surface filter with
// sigma = 0 and sigma = --sigma_demo, and the linear optimal filter (first-order approximation)
// with the friction force e time-varying.
#ifndef DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_FILTERS_H_
#define DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_FILTERS_H_

#include <Eigen/Core>
#include <functional>
#include <string>

#include "dynid/models/unknown_force_mass.h"
#include "dynid/problems/weighted_residual_weights.h"
#include "dynid/solvers/first_order_smoother.h"
#include "dynid/solvers/sliding_surface_filter.h"
#include "experiments/friction_filter_study/friction_filter_flags.h"

namespace dynid::friction_filter_study {

// What both filters share over all cases: the model, the initial estimate and the options.
struct FilterSetup {
  dynid::models::UnknownForceMass model;
  solvers::SlidingSurfaceFilterOptions sliding_options;
  Eigen::Vector3d x0;                                // initial [s, v, e]
  Eigen::Vector2d pbar0;                             // sliding-surface filter: initial [a, f]
  dynid::problems::WeightedResidualWeights weights;  // linear optimal filter
};

// One case's filter runs.
struct FilterRuns {
  solvers::SlidingSurfaceFilterResult sliding, sliding_sigma;
  solvers::SlidingSurfaceFilterSummary sliding_summary, sliding_sigma_summary;
  solvers::LinearOptimalFilterResult optimal;
  double optimal_time_s = 0.0;
};

// The model of filter mass --filter_mass, the initial estimate and the optimal filter's weights
// (the flags' weights by the 1/order² rule, R0 weak).
FilterSetup MakeFilterSetup(const Settings& settings);

// Both filters on the measurements [s, a, f] at `times`; false with a message naming the filter.
// `filter_done` (may be empty) is called after each of the three filter runs with how many are
// done. Without `sigma_demo` the sliding-surface filter with sigma = --sigma_demo is skipped.
bool RunFilters(const FilterSetup& setup, const Eigen::VectorXd& times,
                const Eigen::MatrixXd& measurements, FilterRuns* runs, std::string* error,
                const std::function<void(int done)>& filter_done = {}, bool sigma_demo = true);

}  // namespace dynid::friction_filter_study

#endif  // DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_FILTERS_H_
