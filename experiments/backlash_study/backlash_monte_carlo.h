// experiments/backlash_study/backlash_monte_carlo — the study's Monte Carlo (--monte_carlo=N):
// every selected simulated case (--cases) with N noise seeds, each estimator's b and K with the
// interval it reports, and how often those intervals contain the truth (solvers/coverage.h).
//
// Run i uses the noise seeds the single run would use with --seed + i (sim1: --seed + i, sim2:
// + 1, linear: + 2), so run 0 repeats the single run's table. Estimators: saekf and smoother
// (b, K and intervals from the block-bootstrap dead-zone fit of their (Δ, tau_K) pairs),
// smoother_q0 (the same with Q_xx = 0, where the case has a Q_xx), smoother_shape (intervals from
// the Schur complement scaled by the posterior variance factor). Parameters b_rad and K_nm_per_rad.
// A run whose solve stopped at --smoother_iterations is counted as not converged for that
// estimator (EstimatorOutcome::converged) and left out of its statistics.
#ifndef DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_MONTE_CARLO_H_
#define DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_MONTE_CARLO_H_

#include <string>
#include <vector>

#include "experiments/backlash_study/backlash_case.h"

namespace dynid::backlash_study {

// Runs --monte_carlo seeds of `cases` on --monte_carlo_threads threads, prints the coverage
// table and writes coverage.csv, monte_carlo_runs.csv, coverage.png (--figures) and summary.json
// to --out_dir. False (exit code 1) with a message otherwise.
bool RunMonteCarloStudy(const std::vector<Case>& cases, std::string* error);

}  // namespace dynid::backlash_study

#endif  // DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_MONTE_CARLO_H_
