// experiments/xy_table_study/xy_table_monte_carlo — the study's Monte Carlo (--monte_carlo=N): the
// three identification stages (rigid; flexible without and with the acceleration measurements)
// repeated over N simulated records, each estimate's interval (--covariance; with the HAC
// sandwich, the default, also the white sandwich's as "<stage>_sandwich") checked against the
// truth (solvers/coverage.h), and
// the effect of the acceleration measurements (stage 3 against stage 2) as a median and spread
// over the runs.
//
// Run i uses noise seed s = --seed + i and, with --truth=drawn, the true system drawn with
// TruthSeedOfRun(s) = --truth_seed + s − 4 (a new table each run: the coverage is over truths and
// noise); with --truth=thesis every run has the thesis-centred truth. A run depends on its seed
// and the flags only: the runs are journalled (--monte_carlo_resume) and xy_table_study_mpi
// shares them out over MPI ranks. Run 0 repeats the single run's stages at the same --seed.
// The record of a run is simulated only up to the end of the identification interval (the
// samples and the noise on the interval are those of the full record), and the scan, evaluation
// and reconstruction of the single run are skipped. Parameters J1, J2, w1, w2, k; the truth of k
// is the spindle's stiffness k_s (the estimate is the effective stiffness of spindle and belt
// springs in series, so its interval is not expected to cover k_s). A stage that stopped at
// --max_iterations is counted as not converged and left out of its statistics.
#ifndef DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_MONTE_CARLO_H_
#define DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_MONTE_CARLO_H_

#include <string>
#include <vector>

namespace dynid::xy_table_study {

// Runs --monte_carlo seeds on --monte_carlo_threads threads under the truth and mismatch flags,
// with stage 3 also at each of `extra_weights` (--monte_carlo_acceleration_weights; estimator
// "flexible_with_accelerations_w<weight>"), prints the coverage table, the relative errors and
// the acceleration effect, and writes coverage.csv, monte_carlo_runs.csv, coverage.png
// (--figures) and summary.json to --out_dir. False (exit code 1) with a message otherwise.
bool RunMonteCarloStudy(const std::vector<double>& extra_weights, std::string* error);

}  // namespace dynid::xy_table_study

#endif  // DYNID_EXPERIMENTS_XY_TABLE_STUDY_XY_TABLE_MONTE_CARLO_H_
