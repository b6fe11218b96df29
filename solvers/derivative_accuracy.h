// Accuracy of derivative estimators against a known truth: the IRW smoothers with a
// data-driven NVR (ML or GCV) and the conventional Butterworth(order 4, zero-phase) +
// central-difference differentiator at the cut-off that is best in hindsight (the grid search
// uses the truth, so it is the best the conventional method can do with perfect bandwidth
// knowledge). Errors are RMS over the interior samples (a margin at both ends, common to all
// methods, excludes edge transients).
#ifndef DYNID_SOLVERS_DERIVATIVE_ACCURACY_H_
#define DYNID_SOLVERS_DERIVATIVE_ACCURACY_H_

#include <string>
#include <vector>

#include <Eigen/Core>

#include "dynid/solvers/irw_smoother.h"
#include "dynid/solvers/nvr_fit.h"

namespace dynid::solvers {

struct DerivativeErrors {
  std::string method;
  double velocity_rms = 0.0;
  double acceleration_rms = 0.0;
  double velocity_setting = 0.0;      // NVR (IRW) or cut-off in Hz (Butterworth) for velocity
  double acceleration_setting = 0.0;  // the same for acceleration
};

struct AccuracyCase {
  Eigen::VectorXd measured;  // sampled positions
  Eigen::VectorXd velocity;  // true velocity at the samples
  Eigen::VectorXd acceleration;
  double sample_rate_hz = 0.0;
  int margin = 0;  // samples excluded at each end
};

// IRW with the NVR fitted as `fit` says (model, criterion, GCV gamma). Velocity from IRWSM1 or
// IRWSM2; acceleration from the same model, or, when `twice` is set (IRWSM1 only), by
// smoothing the IRWSM1 velocity again with IRWSM1 and its own fitted NVR (Brunot et al. (2018)
// §3.4).
bool IrwDerivativeErrors(const AccuracyCase& data, const NvrFitOptions& fit, bool twice,
                         DerivativeErrors* errors, std::string* error);

// Butterworth(order 4) filtfilt + central differences at every cut-off of `cutoffs_hz`; returns
// the best velocity and the best acceleration error separately, with their cut-offs.
bool BestButterworthErrors(const AccuracyCase& data, const std::vector<double>& cutoffs_hz,
                           DerivativeErrors* errors, std::string* error);

// Log-spaced cut-off grid from `low_hz` to `high_hz`, `per_decade` points per decade.
std::vector<double> LogGrid(double low_hz, double high_hz, int per_decade);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_DERIVATIVE_ACCURACY_H_
