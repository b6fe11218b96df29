// experiments/weight_sweep/weight_sweep_output — what weight_sweep reports: points.csv (one row
// per grid point and seed), summary.csv (bias, spread, RMS error and predicted relative standard
// deviation per grid point), the console's best grid point per parameter, summary.json (flags,
// case, base weights, axes, journal, totals, observability) and the error/spread figures.
#ifndef DYNID_EXPERIMENTS_WEIGHT_SWEEP_WEIGHT_SWEEP_OUTPUT_H_
#define DYNID_EXPERIMENTS_WEIGHT_SWEEP_WEIGHT_SWEEP_OUTPUT_H_

#include <string>

#include "experiments/weight_sweep/weight_sweep_flags.h"
#include "experiments/weight_sweep/weight_sweep_monte_carlo.h"
#include "experiments/weight_sweep/weight_sweep_run.h"

namespace dynid::experiments {

// --list_weights: the case's weight names and base values on stdout.
void PrintWeightEntries(const solvers::WeightGridCase& grid_case);

// Prints the console summary and writes every output into --out_dir as one set, with the
// measured coverage of the predicted sd (`coverage`) at the grid points it measured; false with
// the reason (an internal failure: exit code 1).
bool WriteSweepOutputs(const SweepSetup& setup, const Ranks& ranks, const SweepRun& run,
                       const QuotedCoverage& coverage, std::string* error);

}  // namespace dynid::experiments

#endif  // DYNID_EXPERIMENTS_WEIGHT_SWEEP_WEIGHT_SWEEP_OUTPUT_H_
