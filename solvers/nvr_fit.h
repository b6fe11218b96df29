// Choosing the noise-variance ratio (NVR) of the IRW smoothers from the data
// (Brunot et al. (2018) §3.3 and eqs. 26–28;
// solvers/README.md, "Pitfalls").
//
// Criteria:
// - maximum likelihood: the concentrated prediction-error log-likelihood of the exact diffuse
//   Kalman filter (sigma^2 profiled out, first n_x innovations excluded), one filter pass per
//   evaluation, maximised over log10 NVR by a coarse grid (every two decades) followed by
//   Brent's method in the bracket around the best grid point;
// - generalised cross-validation: GCV(NVR) = N RSS / (N - gamma tr H)^2 with H the smoother's
//   hat matrix; tr H = sum_k P(k|N)(0,0) in NVR-normalised units (the smoothed position variance
//   is sigma^2 times the hat matrix diagonal), minimised the same way. gamma = 1 is classical
//   GCV; gamma > 1 ("modified GCV", Kim & Gu 2004; mgcv's gamma) charges each effective degree
//   of freedom more and so smooths more. On quantised encoder data GCV's minimum is very flat
//   and gamma = 1 under-smooths for derivatives (irw_accuracy measures it); the default 1.4 is
//   the literature's value;
// - the tracking-error approximation of Brunot et al. (2018) eqs. 27–28.
//
// The diffuse likelihood equals the Gaussian likelihood of the n_x-th differences of y,
// z = D y ~ N(0, sigma^2 (NVR I + D D^T)), whose banded covariance gives an independent O(N)
// evaluation (IrwLogLikelihoodBanded) used to cross-check the filter.
#ifndef DYNID_SOLVERS_NVR_FIT_H_
#define DYNID_SOLVERS_NVR_FIT_H_

#include <string>
#include <vector>

#include <Eigen/Core>

#include "dynid/solvers/irw_smoother.h"
#include "dynid/solvers/solver_summary.h"

namespace dynid::solvers {

enum class NvrCriterion { kMaximumLikelihood, kGcv };

bool ParseNvrCriterion(const std::string& text, NvrCriterion* criterion, std::string* error);
const char* NvrCriterionName(NvrCriterion criterion);

struct NvrFitOptions {
  IrwModel model = IrwModel::kIrw1;
  NvrCriterion criterion = NvrCriterion::kMaximumLikelihood;
  double log10_nvr_min = -14.0;
  double log10_nvr_max = 6.0;
  double grid_step_log10 = 2.0;   // coarse grid spacing before Brent's refinement
  double tolerance_log10 = 1e-3;  // Brent's stopping tolerance on log10 NVR (0.23 % in NVR)
  double gcv_gamma = 1.4;         // modified-GCV factor (>= 1) for criterion kGcv
  // Called after every evaluation of the criterion (`iteration` = evaluations so far, `cost` =
  // the value minimised: −log-likelihood or log GCV score); may be empty.
  ProgressCallback progress;
  bool IsValid(std::string* why) const;
};

struct NvrFitSummary {
  double nvr = 0.0;
  double log10_nvr = 0.0;
  double criterion_value = 0.0;  // log-likelihood (ML) or GCV score
  double log_likelihood = 0.0;   // the concentrated log-likelihood at the chosen NVR
  int evaluations = 0;
  bool at_bound = false;  // the optimum lies at the edge of the search interval
  std::string message;
};

// Fits the NVR of `y` (N >= n_x + 3 finite samples). Returns false with a message for bad
// options or data.
bool FitNvr(const Eigen::VectorXd& y, const NvrFitOptions& options, NvrFitSummary* summary,
            std::string* error);

// Maximum-likelihood fit (the name of Brunot et al. (2018)'s `irwsmopt`); FitNvr with criterion ML.
bool FitNvrMaximumLikelihood(const Eigen::VectorXd& y, IrwModel model, NvrFitSummary* summary,
                             std::string* error);

// Smooths every column of `columns` (N × channels, N >= n_x + 3 finite samples each) with its
// own NVR fitted by `fit_options` (criterion, search interval; the smoother uses
// fit_options.model): the fits one after the other, then the smoothing of all columns in
// parallel over `num_threads` threads (0 = hardware concurrency, the default). `names` (empty,
// or one per column) name the columns in error messages ("NVR fit of <name>: ..."; by default
// "column <c>", 1-based). `fits` and `results` get one entry per column. Returns false with a
// message for bad options or data.
bool SmoothColumnsWithFittedNvr(const Eigen::MatrixXd& columns, double sample_period_s,
                                const NvrFitOptions& fit_options,
                                bool compute_standard_deviations,
                                const std::vector<std::string>& names,
                                std::vector<NvrFitSummary>* fits,
                                std::vector<IrwSmootherResult>* results, std::string* error,
                                int num_threads = 0);

// Concentrated log-likelihood by the Kalman filter (exact diffuse).
double IrwLogLikelihood(const Eigen::VectorXd& y, IrwModel model, double nvr);

// The same quantity from the banded covariance of the n_x-th differences of y.
double IrwLogLikelihoodBanded(const Eigen::VectorXd& y, IrwModel model, double nvr);

// (Modified) GCV score N RSS / (N - gamma tr H)^2 of the smoother at this NVR; +Inf when
// gamma tr H >= N.
double IrwGcvScore(const Eigen::VectorXd& y, IrwModel model, double nvr, double gamma = 1.0);

// Brunot et al. (2018) eqs. 27–28: NVR ~ (std(Δ^d eps_tr) / Δq)^2 with eps_tr = q_ref − q_meas the
// tracking error, d = 1 (IRWSM1) or 2 (IRWSM2) and Δq the encoder resolution.
double NvrFromTrackingError(const Eigen::VectorXd& tracking_error, double encoder_resolution,
                            IrwModel model);

}  // namespace dynid::solvers

#endif  // DYNID_SOLVERS_NVR_FIT_H_
