#include "dynid/solvers/nvr_fit.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include <glog/logging.h>

#include "dynid/solvers/internal/banded.h"
#include "dynid/solvers/internal/difference_stencil.h"

namespace dynid::solvers {
namespace {

// Brent's minimisation of f on [a, b] (golden section + parabolic steps).
double BrentMinimize(const std::function<double(double)>& f, double a, double b,
                     double tolerance, int* evaluations, double* f_min) {
  const double golden = 0.3819660112501051;
  double x = a + golden * (b - a);
  double w = x;
  double v = x;
  double fx = f(x);
  ++*evaluations;
  double fw = fx;
  double fv = fx;
  double d = 0.0;
  double e = 0.0;
  for (int iteration = 0; iteration < 200; ++iteration) {
    const double middle = 0.5 * (a + b);
    const double tol1 = tolerance + 1e-12 * std::abs(x);
    const double tol2 = 2.0 * tol1;
    if (std::abs(x - middle) <= tol2 - 0.5 * (b - a)) break;
    bool golden_step = true;
    if (std::abs(e) > tol1) {
      double r = (x - w) * (fx - fv);
      double q = (x - v) * (fx - fw);
      double p = (x - v) * q - (x - w) * r;
      q = 2.0 * (q - r);
      if (q > 0.0) p = -p;
      q = std::abs(q);
      const double previous_e = e;
      e = d;
      if (std::abs(p) < std::abs(0.5 * q * previous_e) && p > q * (a - x) && p < q * (b - x)) {
        d = p / q;
        const double u = x + d;
        if (u - a < tol2 || b - u < tol2) d = (middle >= x) ? tol1 : -tol1;
        golden_step = false;
      }
    }
    if (golden_step) {
      e = (x >= middle) ? a - x : b - x;
      d = golden * e;
    }
    const double u = x + (std::abs(d) >= tol1 ? d : (d > 0 ? tol1 : -tol1));
    const double fu = f(u);
    ++*evaluations;
    if (fu <= fx) {
      if (u >= x) a = x; else b = x;
      v = w; fv = fw;
      w = x; fw = fx;
      x = u; fx = fu;
    } else {
      if (u < x) a = u; else b = u;
      if (fu <= fw || w == x) {
        v = w; fv = fw;
        w = u; fw = fu;
      } else if (fu <= fv || v == x || v == w) {
        v = u; fv = fu;
      }
    }
  }
  *f_min = fx;
  return x;
}

}  // namespace

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
  const auto start = std::chrono::steady_clock::now();
  int evaluations = 0;
  auto objective = [&](double log10_nvr) {
    const double nvr = std::pow(10.0, log10_nvr);
    const double value = ml ? -IrwLogLikelihood(y, options.model, nvr)
                            : std::log(IrwGcvScore(y, options.model, nvr, options.gcv_gamma));
    if (options.progress) {
      IterationProgress progress;
      progress.iteration = ++evaluations;
      progress.cost = value;
      progress.elapsed_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      options.progress(progress);
    }
    return value;
  };
  *summary = NvrFitSummary();
  const double lo = options.log10_nvr_min;
  const double hi = options.log10_nvr_max;
  const int grid_points =
      std::max(3, static_cast<int>(std::ceil((hi - lo) / options.grid_step_log10)) + 1);
  const double step = (hi - lo) / (grid_points - 1);
  int best = 0;
  double best_value = std::numeric_limits<double>::infinity();
  for (int i = 0; i < grid_points; ++i) {
    const double value = objective(lo + i * step);
    ++summary->evaluations;
    if (value < best_value) {
      best_value = value;
      best = i;
    }
  }
  const double a = lo + std::max(0, best - 1) * step;
  const double b = lo + std::min(grid_points - 1, best + 1) * step;
  double f_min = 0.0;
  double x = BrentMinimize(objective, a, b, options.tolerance_log10, &summary->evaluations,
                           &f_min);
  if (best_value < f_min) {  // keep the grid point if Brent did not improve on it
    x = lo + best * step;
    f_min = best_value;
  }
  summary->log10_nvr = x;
  summary->nvr = std::pow(10.0, x);
  summary->at_bound = (x - lo) < 2.0 * options.tolerance_log10 + 1e-9 ||
                      (hi - x) < 2.0 * options.tolerance_log10 + 1e-9;
  summary->criterion_value = ml ? -f_min : std::exp(f_min);
  summary->log_likelihood = IrwLogLikelihood(y, options.model, summary->nvr);
  summary->message = std::string(NvrCriterionName(options.criterion)) + " NVR " +
                     std::to_string(summary->nvr) + " after " +
                     std::to_string(summary->evaluations) + " evaluations" +
                     (summary->at_bound ? " (at the edge of the search interval)" : "");
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
  const int channels = static_cast<int>(columns.cols());
  CHECK(names.empty() || static_cast<int>(names.size()) == channels)
      << "expected " << channels << " column names, got " << names.size();
  std::vector<IrwSmootherOptions> options(channels);
  fits->assign(channels, NvrFitSummary());
  for (int c = 0; c < channels; ++c) {
    if (!FitNvr(columns.col(c), fit_options, &(*fits)[c], error)) {
      const std::string name = names.empty() ? "column " + std::to_string(c + 1) : names[c];
      *error = "NVR fit of " + name + ": " + *error;
      return false;
    }
    options[c].model = fit_options.model;
    options[c].nvr = (*fits)[c].nvr;
    options[c].compute_standard_deviations = compute_standard_deviations;
  }
  return SmoothIrwColumns(columns, sample_period_s, options, results, error, num_threads);
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
