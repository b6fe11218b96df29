// experiments/friction_filter_study/friction_filter_monte_carlo — friction_filter_study
// --monte_carlo=N: the simulation of every true mass repeated for noise seeds --seed ..
// --seed + N − 1 (solvers::RunMonteCarlo, on --monte_carlo_threads threads), per filter the
// median and quartiles over the seeds of the RMS friction error, the jump lags, overshoots and
// errors in the jump windows (monte_carlo_measures.csv), and the coverage of the optimal filter's
// reported standard deviations of the friction and velocity at --coverage_times_s
// (coverage.csv, monte_carlo_runs.csv, coverage.png; solvers::WriteCoverageOutputs). The
// sliding-surface filter reports no uncertainty: its rows carry bias and spread only. Each run's
// error and jump measures travel with its estimates (solvers::MonteCarloEstimate::measure), so a
// run depends on its seed and the flags only: the runs are journalled and resumable
// (--monte_carlo_resume), and friction_filter_study_mpi shares them out over MPI ranks.
#ifndef DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_MONTE_CARLO_H_
#define DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_MONTE_CARLO_H_

#include <string>

#include "experiments/friction_filter_study/friction_filter_filters.h"
#include "experiments/friction_filter_study/friction_filter_flags.h"
#include "experiments/friction_filter_study/friction_filter_record.h"

namespace dynid::friction_filter_study {

// Runs the Monte Carlo and writes its outputs and summary.json to --out_dir; false with a
// message on a failure.
bool RunMonteCarloStudy(const Record& record, const Settings& settings, const FilterSetup& setup,
                        std::string* error);

}  // namespace dynid::friction_filter_study

#endif  // DYNID_EXPERIMENTS_FRICTION_FILTER_STUDY_FRICTION_FILTER_MONTE_CARLO_H_
