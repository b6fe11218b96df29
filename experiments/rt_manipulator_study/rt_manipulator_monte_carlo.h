// experiments/rt_manipulator_study/rt_manipulator_monte_carlo — the study's Monte Carlo
// (--monte_carlo=N): the simulated flexible manipulator with N noise seeds (--seed, --seed + 1,
// ...), the filter and the smoother of both weightings on each record, and how often the
// smoother's 95 % payload interval contains the true payload (solvers/coverage.h).
//
// Estimators in coverage.csv (parameter payload_kg): smoother_weighting1/2 with the reported
// σ (--covariance: the HAC sandwich with its fixed-b interval, the white sandwich, or S⁻¹ scaled
// by one variance factor), the other two forms as smoother_weighting1/2_<form> (hac, sandwich,
// variance_factor), smoother_weighting1/2_weights_sd with
// the σ in the metric of the weights alone (for comparison), and filter_weighting1/2 (the
// filter's final estimate; no interval).
#ifndef DYNID_EXPERIMENTS_RT_MANIPULATOR_STUDY_RT_MANIPULATOR_MONTE_CARLO_H_
#define DYNID_EXPERIMENTS_RT_MANIPULATOR_STUDY_RT_MANIPULATOR_MONTE_CARLO_H_

#include <string>

#include "dynid/models/rt_manipulator.h"

namespace dynid::rt_manipulator_study {

// Runs the --monte_carlo seeds on --monte_carlo_threads threads, prints the coverage table and
// writes coverage.csv, monte_carlo_runs.csv, coverage.png (--figures) and summary.json to
// --out_dir. False (exit code 1) with a message otherwise.
bool RunMonteCarloStudy(const models::RtManipulatorParameters& parameters, std::string* error);

}  // namespace dynid::rt_manipulator_study

#endif  // DYNID_EXPERIMENTS_RT_MANIPULATOR_STUDY_RT_MANIPULATOR_MONTE_CARLO_H_
