// experiments/backlash_study/backlash_estimators — the estimators run on one case: the record
// (simulated with noise, or the measured one), the SAEKF, the batch smoother (also with
// Q_xx = 0), the dead-zone fit of each estimate and the shape-constrained smoother, with the
// tau_K errors against the truth and the wall and CPU times.
#ifndef DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_ESTIMATORS_H_
#define DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_ESTIMATORS_H_

#include <Eigen/Core>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "dynid/models/two_mass_transmission.h"
#include "dynid/solvers/backlash_smoother.h"
#include "dynid/solvers/continuous_discrete_ekf.h"
#include "dynid/solvers/dead_zone_fit.h"
#include "experiments/backlash_study/backlash_case.h"

namespace dynid::backlash_study {

struct EstimatorOutcome {
  Eigen::VectorXd tau, delta;
  Eigen::MatrixXd states;
  solvers::DeadZoneFit fit;
  // Against the true tau_K(Δ(t_k)), and against ½ (tau_K(t_k) + tau_K(t_{k+1})), k < N − 1
  // (NaN for a measured record).
  double tau_rms_error = std::numeric_limits<double>::quiet_NaN();
  double tau_rms_error_interval = std::numeric_limits<double>::quiet_NaN();
  double time_s = 0.0;     // wall time of the estimator's solve
  double cpu_s = 0.0;      // process CPU time of the same (std::clock)
  double fit_cpu_s = 0.0;  // process CPU time of its dead-zone fit (with the bootstrap)
  // The estimator's solve met its convergence test (the SAEKF: the filter ran to the end). When
  // false, fit.backlash_detected is false and fit.verdict says that there is no verdict.
  bool converged = true;
};

// The verdict column of the console table: "backlash", "no backlash detected", "backlash not
// established" or, for an estimator that did not converge, "NOT CONVERGED: no verdict".
std::string VerdictLabel(const EstimatorOutcome& outcome);

struct CaseRun {
  Case config;
  int samples = 0;
  models::TransmissionRecord record;
  Eigen::MatrixXd measurements;
  solvers::SaekfResult saekf;
  solvers::BacklashSmootherResult smoother;
  EstimatorOutcome filter_outcome, smoother_outcome;
  bool has_q0 = false;  // the second smoother (Q_xx = 0) ran
  solvers::BacklashSmootherResult smoother_q0;
  EstimatorOutcome q0_outcome;
  bool has_shape = false;  // the shape-constrained refinement ran
  solvers::BacklashShapeResult shape;
  EstimatorOutcome shape_outcome;

  std::vector<std::pair<std::string, const EstimatorOutcome*>> Outcomes() const {
    std::vector<std::pair<std::string, const EstimatorOutcome*>> list = {
        {"saekf", &filter_outcome}, {"smoother", &smoother_outcome}};
    if (has_q0) list.push_back({"smoother_q0", &q0_outcome});
    if (has_shape) list.push_back({"smoother_shape", &shape_outcome});
    return list;
  }
};

// The fitted centre at sample k of n (the fit ran on every k-th pair, at most --max_fit_pairs).
double FittedCenter(const solvers::DeadZoneFit& fit, int k, int n);

// The first `samples` samples of `config` (simulated with the noise seed `seed`, or measured)
// and every estimator on them with random-walk intensity `qpp`; false with a message.
bool RunCase(const Case& config, int samples, double qpp, std::uint64_t seed, CaseRun* run,
             std::string* error);

}  // namespace dynid::backlash_study

#endif  // DYNID_EXPERIMENTS_BACKLASH_STUDY_BACKLASH_ESTIMATORS_H_
