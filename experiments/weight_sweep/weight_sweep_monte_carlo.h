// experiments/weight_sweep/weight_sweep_monte_carlo — weight_sweep --monte_carlo=N: the coverage
// of the smoother's reported intervals at chosen weights.
//
// The sweep's bias and spread (summary.csv) say how good the estimates are at each weight; they
// do not say whether the standard deviations the smoother reports describe that spread. The Monte
// Carlo answers it as every study does (solvers/monte_carlo.h, solvers/coverage.h): at the case's
// base weights (no --grid given) or at every point of --grid, the case's experiment over N noise
// seeds --first_seed, --first_seed + 1, ... (the sweep's realisations), per parameter the bias,
// spread, mean reported σ and coverage of the 95 % interval of four estimators that share one
// estimate:
//   smoother           σ = sqrt(diag S⁻¹), the weights read as inverse variances;
//   smoother_scaled    the same × sqrt(solvers::ResidualVarianceFactor) (the sweep's predicted sd);
//   smoother_sandwich  solvers::ConstantParameterSandwichCovariance (a variance factor per term);
//   smoother_hac       its HAC form (the terms' residuals correlated over time), interval ± c σ
//                      with the fixed-b c.
// A scenario is a grid point, named by its weights ("V.z.a_measured=4000;W.v.s=10", or
// "base_weights"). The runs go through the shared runner (experiments/common/monte_carlo_cli.h):
// --monte_carlo_threads threads, journalled and resumable (--monte_carlo_resume), shared out over
// MPI ranks by weight_sweep_mpi. Writes coverage.csv, monte_carlo_runs.csv, coverage.png
// (--figures) and summary.json. A sweep (no --monte_carlo) quotes such a coverage.csv
// (--coverage_csv, or a shipped one) beside the predicted sd of every grid point it matches.
#ifndef DYNID_EXPERIMENTS_WEIGHT_SWEEP_WEIGHT_SWEEP_MONTE_CARLO_H_
#define DYNID_EXPERIMENTS_WEIGHT_SWEEP_WEIGHT_SWEEP_MONTE_CARLO_H_

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dynid/solvers/coverage.h"
#include "experiments/weight_sweep/weight_sweep_flags.h"

namespace dynid::experiments {

// The estimator whose σ the sweep reports as its predicted sd.
inline constexpr const char* kScaledEstimator = "smoother_scaled";
// The estimator with the sandwich covariance (a variance factor per term of the functional).
inline constexpr const char* kSandwichEstimator = "smoother_sandwich";
// The estimator with the sandwich's HAC form.
inline constexpr const char* kHacEstimator = "smoother_hac";

// The scenario name of grid point `point`: "ENTRY=value;ENTRY=value" (%.6g), "base_weights"
// without axes.
std::string GridPointName(const std::vector<solvers::WeightAxis>& axes, int point);

// Runs the Monte Carlo of `setup` and writes its outputs; false with a message (exit code 1).
bool RunWeightMonteCarlo(const SweepSetup& setup, std::string* error);

// The measured coverage a sweep quotes (cli::LoadQuotedCoverage of --coverage_csv or the shipped
// weight_sweep/coverage.csv): the rows, where they came from, and a non-empty `withheld` when they
// were measured at other settings (then no row is quoted). False (exit code 2) for a file that
// cannot be read.
struct QuotedCoverage {
  std::vector<solvers::CoverageRow> rows;
  std::string source;
  std::string withheld;
};
bool LoadSweepCoverage(QuotedCoverage* coverage, std::string* error);

}  // namespace dynid::experiments

#endif  // DYNID_EXPERIMENTS_WEIGHT_SWEEP_WEIGHT_SWEEP_MONTE_CARLO_H_
