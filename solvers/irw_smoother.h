// Integrated-random-walk smoothing differentiators IRWSM1 and IRWSM2 (Brunot et al.
// (2018) §3, eqs. 13–22; Brunot et al. (2017) §3).
//
// Signal model for one sampled channel y(k), k = 0..N-1 (sample period Ts):
//   x(k) = A x(k-1) + G eta(k-1),  y(k) = h x(k) + e(k),  e ~ N(0, sigma^2), eta ~ N(0, NVR sigma^2)
//   IRWSM1: x = [x, ∇x],        A = [[1,1],[0,1]],               G = [0,1]^T
//   IRWSM2: x = [x, ∇x, ∇²x],   A = [[1,1,0],[0,1,1],[0,0,1]],   G = [0,0,1]^T,  h = [1 0 ...].
// ∇x(k) is the increment from sample k to k+1 and ∇²x(k) = ∇x(k+1) − ∇x(k).
//
// The filter is the NVR-normalised Kalman filter (eqs. 13–17) with an EXACT diffuse start:
// the first n_x samples determine the initial state; its posterior is computed in closed form
// from them (a small generalised least-squares problem, no "large P0"), after which the filter
// runs from x̂(n_x−1 | n_x−1). The smoother is the Rauch–Tung–Striebel form of the
// fixed-interval smoother (algebraically equal to eqs. 19–21), extended back over the diffuse
// samples through their joint posterior with x(n_x−1). sigma^2 is estimated by eq. 22 and the
// concentrated log-likelihood excludes the first n_x innovations.
//
// Outputs are centred on the sample instants: the velocity at k is the mean of the increments
// on either side of k, not the forward increment ∇x̂(k) (which is half a sample ahead).
#ifndef DYNID_SOLVERS_IRW_SMOOTHER_H_
#define DYNID_SOLVERS_IRW_SMOOTHER_H_

#include <string>
#include <vector>

#include <Eigen/Core>

namespace dynid::solvers {

enum class IrwModel {
  kIrw1,  // 2 states: position, increment
  kIrw2,  // 3 states: position, increment, second increment
};

// "irw1" / "irw2" <-> IrwModel.
bool ParseIrwModel(const std::string& text, IrwModel* model, std::string* error);
const char* IrwModelName(IrwModel model);
int IrwStateSize(IrwModel model);

struct IrwSmootherOptions {
  IrwModel model = IrwModel::kIrw1;
  double nvr = 1e-3;                  // Q_eta / sigma_e^2 > 0
  bool compute_standard_deviations = true;
  bool IsValid(std::string* why) const;
};

struct IrwSmootherResult {
  // Per sample, physical units (signal units, /s, /s^2), centred on the sample instants.
  Eigen::VectorXd position, velocity, acceleration;
  // Standard deviations sqrt(diag P*(k|N)) of the same quantities (empty unless requested).
  Eigen::VectorXd position_std, velocity_std, acceleration_std;
  // Smoothed states x̂(k|N), one column per sample (n_x x N), per-sample units as in the state
  // model: row 0 the signal, row 1 ∇x (increment to the next sample), row 2 ∇²x (IRWSM2).
  Eigen::MatrixXd states;
  double nvr = 0.0;
  double sigma2 = 0.0;          // eq. 22
  double log_likelihood = 0.0;  // concentrated, exact diffuse (see FitNvr in nvr_fit.h)
  double sample_period = 0.0;
};

// Smooths `y` (N >= n_x + 2 samples, finite) sampled every `sample_period_s` seconds.
// Returns false with a message for invalid options or data.
bool SmoothIrw(const Eigen::VectorXd& y, double sample_period_s,
               const IrwSmootherOptions& options, IrwSmootherResult* result,
               std::string* error);

// The filter part only: innovations' contribution to the concentrated likelihood.
// Sum over k >= n_x of log nu(k) and of eps(k)^2 / nu(k); O(N), no storage.
struct IrwInnovationSums {
  double sum_log_nu = 0.0;
  double sum_squared_normalised = 0.0;
  int count = 0;  // N - n_x
};
IrwInnovationSums IrwFilterInnovations(const Eigen::VectorXd& y, IrwModel model, double nvr);

// Concentrated Gaussian log-likelihood from the innovation sums (sigma^2 profiled out):
//   -1/2 sum log nu - count/2 log(sigma2_hat) - count/2 (1 + log 2 pi).
double ConcentratedLogLikelihood(const IrwInnovationSums& sums);

// Trace of the smoother's hat matrix (d x̂ / d y): sum_k P(k|N)(0,0) in NVR-normalised units,
// data-independent and computed in O(1) memory with the middle of long records in closed form.
double IrwHatMatrixTrace(IrwModel model, double nvr, int num_samples);

// Smooths every column of `columns` independently (N x channels), in parallel over
// `num_threads` threads (0 = hardware concurrency). One options entry per column.
bool SmoothIrwColumns(const Eigen::MatrixXd& columns, double sample_period_s,
                      const std::vector<IrwSmootherOptions>& options,
                      std::vector<IrwSmootherResult>* results, std::string* error,
                      int num_threads = 0);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_IRW_SMOOTHER_H_
