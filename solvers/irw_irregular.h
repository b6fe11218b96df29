// Integrated-random-walk smoothing differentiators on irregular (non-uniform) time stamps: the
// continuous-time integrated Wiener process sampled at t_0 < t_1 < ... < t_{N-1} (Wecker &
// Ansley (1983); Särkkä (2013) for the exact discretisation, the Kalman filter and the
// Rauch–Tung–Striebel smoother), the irregular-step counterpart of IRWSM1/IRWSM2
// (irw_smoother.h).
//
// Signal model for one channel (m = 1 for "irw1", m = 2 for "irw2"):
//   irw1: state x(t) = [p, v],     dv/dt = white noise of intensity q
//   irw2: state x(t) = [p, v, a],  da/dt = white noise of intensity q
//   y_k = p(t_k) + e_k,  e_k ~ N(0, sigma^2),
// with p the signal, v its rate (signal units / s) and a its second rate (/ s^2). Over a step
// h_k = t_{k+1} − t_k the exact discretisation is x(t_{k+1}) = F(h_k) x(t_k) + w_k,
// w_k ~ N(0, q Qbar(h_k)):
//   irw1: F = [[1, h], [0, 1]],                        Qbar = [[h³/3, h²/2], [h²/2, h]]
//   irw2: F = [[1, h, h²/2], [0, 1, h], [0, 0, 1]],    Qbar = [[h⁵/20, h⁴/8, h³/6],
//                                                             [h⁴/8,  h³/3, h²/2],
//                                                             [h³/6,  h²/2, h   ]].
// NVR: relative to the nominal step h0 = the median step of t,
//   q = NVR sigma^2 / h0^(2m+1).
// Over one nominal step the rate then varies as in the uniform models: Var(v(t + h0) − v(t)) =
// NVR sigma^2 / h0^2 (irw1) and Var(a(t + h0) − a(t)) = NVR sigma^2 / h0^4 (irw2), which are the
// variances NVR sigma^2 of the random-walk inputs of IRWSM1 and IRWSM2 on their per-sample
// increments ∇x ≈ v h0 and ∇²x ≈ a h0². NVR values of the two smoothers are comparable; the
// discretisations differ (here the noise acts continuously between the samples, there it enters
// the last state once per sample), so on a uniform grid the two give close, not equal, results.
//
// The filter runs with a flat prior on x(t_0) (exact diffuse start: the posterior from the first
// n_x samples in closed form, no "large P0"), then Kalman updates with the per-step F(h_k) and
// Q(h_k); the Rauch–Tung–Striebel smoother runs back over the same steps. sigma^2 is the mean of
// the squared normalised innovations (the prediction-error estimate, cf. Brunot et al. (2018)
// eq. 22) and the concentrated log-likelihood excludes the first n_x innovations (the diffuse
// likelihood). The states are the values at the sample instants: no centring is needed.
//
// Outputs at the sample instants, physical units:
//   position p̂(t_k), velocity v̂(t_k); irw2: acceleration â(t_k).
//   irw1: acceleration = the second derivative at t_k of the posterior-mean path. Between samples
//   that path is the cubic Hermite interpolant of the smoothed (p, v) at both ends (the conditional
//   mean of the integrated Wiener bridge), and with the diffuse start the whole path is the
//   natural cubic smoothing spline with knots at the samples (Wecker & Ansley (1983)), whose
//   second derivative is continuous, so it is well defined at every sample and, by the natural
//   end conditions, zero at the first and last samples. It is computed on the step after t_k
//   (before it at the last sample). As with IRWSM1, for accelerations prefer irw2 or irw1 applied
//   again to the velocity.
#ifndef DYNID_SOLVERS_IRW_IRREGULAR_H_
#define DYNID_SOLVERS_IRW_IRREGULAR_H_

#include <Eigen/Core>
#include <string>
#include <vector>

#include "dynid/solvers/irw_smoother.h"
#include "dynid/solvers/nvr_fit.h"

namespace dynid::solvers {

// The nominal step h0 of the NVR: the median of t_{k+1} − t_k (the mean of the two middle steps
// for an even count). Requires at least two time stamps.
double MedianTimeStep(const Eigen::VectorXd& t);

// Checks a channel on irregular time stamps: t and y of the same length, at least `min_samples`
// of them, all finite, t strictly increasing. Returns false with a message naming the first
// offending sample (0-based), e.g. "time stamps not strictly increasing at sample 17 (t = 0.17 s
// after 0.17 s)".
bool CheckIrregularSamples(const Eigen::VectorXd& t, const Eigen::VectorXd& y, int min_samples,
                           std::string* error);

// Smooths `y` sampled at the times `t` (seconds; N >= n_x + 2 samples, finite, t strictly
// increasing). options.nvr is relative to MedianTimeStep(t) (see above). In `result`: position,
// velocity and acceleration at the sample instants (see above for irw1's acceleration), their
// standard deviations sqrt(sigma^2 diag P(k|N)) when requested, `states` the smoothed states
// x̂(t_k | N) in physical units (n_x × N: p, v(, a)), nvr, sigma2, log_likelihood and
// sample_period = h0. Returns false with a message for invalid options or data.
bool SmoothIrwAtTimes(const Eigen::VectorXd& t, const Eigen::VectorXd& y,
                      const IrwSmootherOptions& options, IrwSmootherResult* result,
                      std::string* error);

// The filter only: sums of log nu(k) and eps(k)^2 / nu(k) over k >= n_x (O(N), no storage), for
// ConcentratedLogLikelihood (irw_smoother.h). Requires valid data (CHECK).
IrwInnovationSums IrwFilterInnovationsAtTimes(const Eigen::VectorXd& t, const Eigen::VectorXd& y,
                                              IrwModel model, double nvr);

// ConcentratedLogLikelihood(IrwFilterInnovationsAtTimes(t, y, model, nvr)).
double IrwLogLikelihoodAtTimes(const Eigen::VectorXd& t, const Eigen::VectorXd& y, IrwModel model,
                               double nvr);

// Maximum-likelihood NVR (relative to MedianTimeStep(t)) of `y` at the times `t` (N >= n_x + 3
// samples): the search of FitNvr (coarse grid, then Brent's method over log10 NVR) on the
// concentrated diffuse log-likelihood of IrwLogLikelihoodAtTimes. Only criterion
// kMaximumLikelihood is available (GCV's hat-matrix trace is not implemented for irregular
// steps). Returns false with a message for bad options or data.
bool FitNvrAtTimes(const Eigen::VectorXd& t, const Eigen::VectorXd& y, const NvrFitOptions& options,
                   NvrFitSummary* summary, std::string* error);

// SmoothColumnsWithFittedNvr (nvr_fit.h) on irregular time stamps: every column of `columns`
// (N × channels, sampled at the N times `t`) gets its own NVR from FitNvrAtTimes, one column
// after the other, then all columns are smoothed by SmoothIrwAtTimes in parallel over
// `num_threads` threads (0 = hardware concurrency). `names` (empty, or one per column) name the
// columns in error messages ("NVR fit of <name>: ..."; by default "column <c>", 1-based). `fits`
// and `results` get one entry per column. Returns false with a message for bad options or data.
bool SmoothColumnsAtTimesWithFittedNvr(const Eigen::VectorXd& t, const Eigen::MatrixXd& columns,
                                       const NvrFitOptions& fit_options,
                                       bool compute_standard_deviations,
                                       const std::vector<std::string>& names,
                                       std::vector<NvrFitSummary>* fits,
                                       std::vector<IrwSmootherResult>* results, std::string* error,
                                       int num_threads = 0);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_IRW_IRREGULAR_H_
