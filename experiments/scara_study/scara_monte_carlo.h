// experiments/scara_study/scara_monte_carlo — the study's Monte Carlo (--monte_carlo=N): the
// simulated closed-loop record with N noise seeds (--seed, --seed + 1, ...; run i is the single
// run with --seed + i), every estimator of the comparison on each record, and how often each
// estimator's reported 95 % interval contains the true parameter (solvers/coverage.h).
//
// Estimators in coverage.csv (parameters IZZ1, IZZ2, mr, m3), named as in estimates.csv: LS and
// HNN on the noise-free q, q', q'' (the idealised case), LS_irw and HNN_irw on the IRWSM2
// kinematics of the noisy joint states the filters see, the filters and their RTS passes, the
// weighted-residual smoother with its reported σ (the sandwich's, a variance factor per term),
// WR_smoother_variance_factor with S⁻¹ scaled by one variance factor, WR_smoother_weights_sd
// with the σ in the metric of the weights alone, and WR_smoother_hac with the sandwich's HAC
// form (interval ± its fixed-b c).
// HNN's "σ" is the spread of its response about the time mean (the published "Dev."), not a
// covariance; HNN_final has none (no interval). The EKF sign statistics and the tracking
// validation are not repeated.
#ifndef DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_MONTE_CARLO_H_
#define DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_MONTE_CARLO_H_

#include <Eigen/Core>
#include <string>

namespace dynid::scara_study {

// Runs the --monte_carlo seeds on --monte_carlo_threads threads, prints the coverage table and
// writes coverage.csv, monte_carlo_runs.csv, coverage.png (--figures) and summary.json to
// --out_dir. False (exit code 1) with a message otherwise.
bool RunMonteCarloStudy(const Eigen::Vector3d& torque_noise, std::string* error);

}  // namespace dynid::scara_study

#endif  // DYNID_EXPERIMENTS_SCARA_STUDY_SCARA_MONTE_CARLO_H_
