#include "dynid/solvers/nvr_fit.h"

#include <cmath>
#include <limits>
#include <vector>

#include <glog/logging.h>

#include "dynid/solvers/internal/banded.h"
#include "dynid/solvers/internal/difference_stencil.h"
#include "dynid/solvers/internal/nvr_search.h"

namespace dynid::solvers {

bool ParseNvrCriterion(const std::string& text, NvrCriterion* criterion, std::string* error) {
  if (text == "ml") {
    *criterion = NvrCriterion::kMaximumLikelihood;
    return true;
  }
  if (text == "gcv") {
    *criterion = NvrCriterion::kGcv;
    return true;
  }
  *error = "unknown NVR criterion '" + text + "' (expected ml or gcv)";
  return false;
}

const char* NvrCriterionName(NvrCriterion criterion) {
  return criterion == NvrCriterion::kMaximumLikelihood ? "ml" : "gcv";
}

bool NvrFitOptions::IsValid(std::string* why) const {
  if (!(log10_nvr_min < log10_nvr_max) || !std::isfinite(log10_nvr_min) ||
      !std::isfinite(log10_nvr_max)) {
    *why = "NVR search interval must satisfy log10_nvr_min < log10_nvr_max";
    return false;
  }
  if (log10_nvr_min < -300 || log10_nvr_max > 300) {
    *why = "NVR search interval outside [1e-300, 1e300]";
    return false;
  }
  if (!(gcv_gamma >= 1.0) || !std::isfinite(gcv_gamma)) {
    *why = "gcv_gamma must be >= 1";
    return false;
  }
  if (!(tolerance_log10 > 0.0) || !(grid_step_log10 > 0.0)) {
    *why = "tolerance_log10 and grid_step_log10 must be positive";
    return false;
  }
  return true;
}

double IrwLogLikelihood(const Eigen::VectorXd& y, IrwModel model, double nvr) {
  return ConcentratedLogLikelihood(IrwFilterInnovations(y, model, nvr));
}

double IrwLogLikelihoodBanded(const Eigen::VectorXd& y, IrwModel model, double nvr) {
  const int order = IrwStateSize(model);
  const std::vector<double> stencil = internal::DifferenceStencil(order);
  const int m = static_cast<int>(y.size()) - order;
  CHECK_GE(m, 2) << "IrwLogLikelihoodBanded: too few samples";
  Eigen::VectorXd z(m);
  for (int i = 0; i < m; ++i) {
    double sum = 0.0;
    for (int j = 0; j <= order; ++j) sum += stencil[j] * y[i + j];
    z[i] = sum;
  }
  // Cov(z) / sigma^2 = NVR I + D D^T: Toeplitz, bandwidth `order`.
  BandedSpdMatrix covariance(m, order);
  for (int lag = 0; lag <= order; ++lag) {
    double autocorrelation = 0.0;
    for (int j = 0; j + lag <= order; ++j) autocorrelation += stencil[j] * stencil[j + lag];
    for (int i = 0; i + lag < m; ++i) covariance.At(i + lag, i) = autocorrelation;
  }
  for (int i = 0; i < m; ++i) covariance.At(i, i) += nvr;
  BandedCholesky cholesky;
  CHECK(cholesky.Factorize(covariance)) << "NVR I + D D^T must be positive definite";
  const double quadratic = z.dot(cholesky.Solve(z));
  return -0.5 * cholesky.LogDeterminant() - 0.5 * m * std::log(quadratic / m) -
         0.5 * m * (1.0 + std::log(2.0 * M_PI));
}

double IrwGcvScore(const Eigen::VectorXd& y, IrwModel model, double nvr, double gamma) {
  IrwSmootherOptions options;
  options.model = model;
  options.nvr = nvr;
  options.compute_standard_deviations = false;
  IrwSmootherResult result;
  std::string error;
  CHECK(SmoothIrw(y, 1.0, options, &result, &error)) << error;
  const double n = static_cast<double>(y.size());
  const double rss = (y - result.position).squaredNorm();
  const double trace = IrwHatMatrixTrace(model, nvr, static_cast<int>(y.size()));
  const double dof = n - gamma * trace;
  if (!(dof > 0.0)) return std::numeric_limits<double>::infinity();
  return n * rss / (dof * dof);
}

bool FitNvr(const Eigen::VectorXd& y, const NvrFitOptions& options, NvrFitSummary* summary,
            std::string* error) {
  CHECK(summary != nullptr && error != nullptr);
  if (!options.IsValid(error)) return false;
  const int nx = IrwStateSize(options.model);
  if (y.size() < nx + 3) {
    *error = "NVR fitting needs at least " + std::to_string(nx + 3) + " samples, got " +
             std::to_string(y.size());
    return false;
  }
  if (!y.allFinite()) {
    *error = "the signal contains NaN or Inf";
    return false;
  }
  // The objective is minimised; ML minimises the negative log-likelihood, GCV its log score.
  const bool ml = options.criterion == NvrCriterion::kMaximumLikelihood;
  auto cost = [&](double log10_nvr) {
    const double nvr = std::pow(10.0, log10_nvr);
    return ml ? -IrwLogLikelihood(y, options.model, nvr)
              : std::log(IrwGcvScore(y, options.model, nvr, options.gcv_gamma));
  };
  const double f_min = internal::MinimizeOverLog10Nvr(cost, options, summary);
  summary->criterion_value = ml ? -f_min : std::exp(f_min);
  summary->log_likelihood = IrwLogLikelihood(y, options.model, summary->nvr);
  return true;
}

bool FitNvrMaximumLikelihood(const Eigen::VectorXd& y, IrwModel model, NvrFitSummary* summary,
                             std::string* error) {
  NvrFitOptions options;
  options.model = model;
  options.criterion = NvrCriterion::kMaximumLikelihood;
  return FitNvr(y, options, summary, error);
}

bool SmoothColumnsWithFittedNvr(const Eigen::MatrixXd& columns, double sample_period_s,
                                const NvrFitOptions& fit_options,
                                bool compute_standard_deviations,
                                const std::vector<std::string>& names,
                                std::vector<NvrFitSummary>* fits,
                                std::vector<IrwSmootherResult>* results, std::string* error,
                                int num_threads) {
  return internal::FitThenSmoothColumns(columns, nullptr, sample_period_s, fit_options,
                                        compute_standard_deviations, names, fits, results, error,
                                        num_threads);
}

double NvrFromTrackingError(const Eigen::VectorXd& tracking_error, double encoder_resolution,
                            IrwModel model) {
  const int order = model == IrwModel::kIrw1 ? 1 : 2;
  CHECK_GT(tracking_error.size(), order + 1);
  CHECK_GT(encoder_resolution, 0.0);
  Eigen::VectorXd difference = tracking_error;
  for (int d = 0; d < order; ++d) {
    difference = (difference.tail(difference.size() - 1) -
                  difference.head(difference.size() - 1)).eval();
  }
  const double mean = difference.mean();
  const double variance =
      (difference.array() - mean).square().sum() / static_cast<double>(difference.size() - 1);
  return variance / (encoder_resolution * encoder_resolution);
}

}  // namespace dynid::solvers
