// solvers:: weight-grid studies of the weighted-residual smoother: an estimator evaluated over a
// grid of weighting matrices and Monte Carlo seeds (van de Molengraft (1990); solvers/README.md,
// "Pitfalls"; "weighted-residual estimation is not maximum likelihood for theta").
//
// The estimates of the weighted-residual smoother depend on the weights W (kinematic couplings),
// V (equations of motion and measurements) and R0 (initial guess). A weight grid sets chosen
// diagonal entries of these matrices on log-spaced values (the Cartesian product of one axis per
// entry), and at every grid point estimates theta on several Monte Carlo noise realisations of
// the same simulated experiment, recording estimates, covariance, residual norms, cost,
// convergence and time. Bias and spread are then summarised per grid point, separately (§8).
//
// The pieces, for a study over one's own model and estimator:
//  - WeightEntry / ListWeightEntries / ParseWeightEntry (problems/weighted_residual_weights.h):
//    names for every diagonal entry of W, V, R0 of a model ("W.v.s", "V.eom.force_balance",
//    "V.z.a_measured", "R0.theta.mass", or by index "V[2]").
//  - WeightAxis / NumGridPoints / GridPointValues / ApplyGridPoint: the grid and its points.
//  - WeightGridCase: a model plus its simulated data, noise levels and base weights, type-erased
//    so that the evaluation needs no model templates; Run estimates theta at one weight setting
//    and seed into a GridPointResult.
//  - EvaluateWeightGrid: runs a case at chosen (grid point, seed) tasks on a thread pool, handing
//    each result to a callback one at a time (where a program journals it or shows progress).
//  - SummarizeWeightGrid: per grid point bias, spread and RMS error of every parameter.
// The weight_sweep program (experiments/weight_sweep/) adds its cases, the --grid text, a
// resumable journal and MPI on top of these.
#ifndef DYNID_SOLVERS_WEIGHT_GRID_H_
#define DYNID_SOLVERS_WEIGHT_GRID_H_

#include <Eigen/Core>
#include <functional>
#include <string>
#include <vector>

#include "dynid/models/mechanical_model.h"
#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/problems/weighted_residual_weights.h"
#include "dynid/solvers/observability.h"
#include "dynid/solvers/weighted_residual_smoother.h"

namespace dynid::solvers {

// The names of the diagonal entries of W, V, R0 (problems/weighted_residual_weights.h), used here
// as solvers:: names as well.
using problems::ListWeightEntries;
using problems::ParseWeightEntry;
using problems::WeightEntry;
using problems::WeightMatrix;

// One axis of the grid: `count` log-spaced values from `low` to `high` (count 1: low only).
struct WeightAxis {
  WeightEntry entry;
  double low = 1.0;
  double high = 1.0;
  int count = 1;
  // The axis's values, low and high exactly.
  std::vector<double> Values() const;
};

// Number of grid points (product of the counts) and the values of point `index` (the first axis
// varies slowest).
int NumGridPoints(const std::vector<WeightAxis>& axes);
std::vector<double> GridPointValues(const std::vector<WeightAxis>& axes, int index);

// Applies the values of one grid point to `weights`: each entry is set to the value (absolute)
// or multiplied by it (relative). An R0 entry on empty R0 first creates R0 = 0 of the right size
// (the caller sets q0). False when a relative value meets a zero base entry.
bool ApplyGridPoint(const std::vector<WeightAxis>& axes, const std::vector<double>& values,
                    bool relative, int num_parameters, problems::WeightedResidualWeights* weights,
                    std::string* error);

// Solver settings shared by all points of a grid.
struct WeightGridSettings {
  int max_iterations = 50;
  double function_tolerance = 1e-10;
  double theta_start_factor = 1.2;  // theta starts at factor × truth
  double noise_scale = 1.0;         // multiplies the case's noise standard deviations
  problems::Transcription transcription = problems::Transcription::kShooting;
  // The smoother's trust region (WeightedResidualSmootherOptions::trust_region).
  WeightedResidualSmootherOptions::TrustRegion trust_region =
      WeightedResidualSmootherOptions::TrustRegion::kLevenbergMarquardt;

  // True when every setting is in range; otherwise false with "<setting> must be ..." in `why`.
  bool IsValid(std::string* why) const;
};

// The record of one (grid point, seed). Everything numeric.
struct GridPointResult {
  int point = 0;       // grid point index
  int seed_index = 0;  // 0 .. num_seeds − 1
  int seed = 0;        // noise seed
  bool converged = false;
  int iterations = 0;
  double initial_cost = 0.0;
  double final_cost = 0.0;
  double time_s = 0.0;
  bool identifiable = false;
  double condition_number = 0.0;              // of the relative information of theta
  Eigen::VectorXd theta;                      // p, estimate
  Eigen::VectorXd standard_deviation;         // p, sqrt(diag(S⁻¹)) in the metric of the weights
  Eigen::VectorXd scaled_standard_deviation;  // p, × sqrt(ResidualVarianceFactor)
  // p, the sandwich covariance's (ConstantParameterSandwichCovariance: a variance factor per
  // term of the functional); NaN when it cannot be formed.
  Eigen::VectorXd sandwich_standard_deviation;
  // p, the sandwich's HAC form (SandwichCovariance::hac_standard_deviation), its 95 % interval
  // ± hac_critical_value_95 σ (the fixed-b c); NaN when it cannot be formed.
  Eigen::VectorXd hac_standard_deviation;
  double hac_critical_value_95 = NAN;
  Eigen::VectorXd zeta_rms;                   // n + l, RMS over nodes of each zeta component
  Eigen::VectorXd xi_rms;                     // 2n, RMS over intervals of xi_s, xi_v
};

// A model with simulated data: everything a weight grid needs, behind a type-erased interface.
// Implementations are immutable after construction, so Run may be called from many threads.
class WeightGridCase {
 public:
  virtual ~WeightGridCase() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  virtual const models::ModelInfo& info() const = 0;
  virtual const Eigen::VectorXd& true_parameters() const = 0;
  virtual const Eigen::VectorXd& noise_standard_deviation() const = 0;  // l, before noise_scale
  virtual const problems::WeightedResidualWeights& base_weights() const = 0;
  virtual int num_nodes() const = 0;
  // Estimates theta with `weights` on the data with noise seed `seed`. Fills everything but
  // point/seed_index. False (with a message) only for invalid inputs; a solver that fails to
  // converge is a valid result (converged = false).
  virtual bool Run(const problems::WeightedResidualWeights& weights, int seed,
                   const WeightGridSettings& settings, GridPointResult* result,
                   std::string* error) const = 0;
  // The rank tests of the model along the noise-free trajectory and the identifiability of theta
  // from the Jacobian of the weighted-residual problem with `weights` at the truth.
  virtual bool Observability(const problems::WeightedResidualWeights& weights,
                             ObservabilityReport* report, std::string* error) const = 0;
};

// How EvaluateWeightGrid runs the estimator.
struct WeightGridOptions {
  bool relative = false;  // grid values multiply the base weights instead of replacing them
  int num_seeds = 1;      // seeds per grid point
  int first_seed = 1;     // noise seed of seed_index 0 (then +1, +2, ...)
  int num_threads = 1;    // worker threads (>= 1)
  WeightGridSettings settings;
};

// Evaluates `grid_case` at every task of `tasks` (task = point × num_seeds + seed_index) on
// options.num_threads threads (tasks are taken in order): the base weights with the grid point
// applied (ApplyGridPoint), then Run with seed first_seed + seed_index, into (*results)[task]
// (`results` must have num_points × num_seeds entries). `on_result` is called after each
// estimate, one call at a time (a journal, a progress bar); returning false stops the evaluation.
// Returns false with the first error of Run, ApplyGridPoint or on_result (the remaining tasks are
// skipped).
bool EvaluateWeightGrid(
    const WeightGridCase& grid_case, const std::vector<WeightAxis>& axes,
    const WeightGridOptions& options, const std::vector<int>& tasks,
    const std::function<bool(const GridPointResult& result, std::string* error)>& on_result,
    std::vector<GridPointResult>* results, std::string* error);

// Per grid point: number of converged seeds, and per parameter the mean relative error (bias),
// its standard deviation over seeds (spread), the RMS relative error and the mean predicted
// relative standard deviations (scaled, of the sandwich and of its HAC form).
struct GridPointSummary {
  int point = 0;
  int num_seeds = 0;
  int num_converged = 0;
  double mean_final_cost = 0.0;
  double mean_time_s = 0.0;
  Eigen::VectorXd bias;           // p, mean (theta − truth)/|truth|
  Eigen::VectorXd spread;         // p, standard deviation over seeds of the relative error
  Eigen::VectorXd rms_error;      // p, sqrt(mean relative error²)
  Eigen::VectorXd predicted_rsd;  // p, mean scaled_standard_deviation / |truth|
  Eigen::VectorXd sandwich_rsd;   // p, mean sandwich_standard_deviation / |truth|
  Eigen::VectorXd hac_rsd;        // p, mean hac_standard_deviation / |truth|
};

// The summaries of points 0 .. num_points − 1 from `results`, which must hold every
// (point, seed) once (relative errors against `truth`; a zero truth entry counts as 1).
std::vector<GridPointSummary> SummarizeWeightGrid(const std::vector<GridPointResult>& results,
                                                  int num_points, const Eigen::VectorXd& truth);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_WEIGHT_GRID_H_
