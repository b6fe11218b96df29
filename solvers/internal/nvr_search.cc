#include "dynid/solvers/internal/nvr_search.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "dynid/data/parallel_for.h"
#include "dynid/solvers/irw_irregular.h"

namespace dynid::solvers::internal {

namespace {

// Brent's minimisation of f on [a, b] (golden section + parabolic steps).
double BrentMinimize(const std::function<double(double)>& f, double a, double b, double tolerance,
                     int* evaluations, double* f_min) {
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
      if (u >= x)
        a = x;
      else
        b = x;
      v = w;
      fv = fw;
      w = x;
      fw = fx;
      x = u;
      fx = fu;
    } else {
      if (u < x)
        a = u;
      else
        b = u;
      if (fu <= fw || w == x) {
        v = w;
        fv = fw;
        w = u;
        fw = fu;
      } else if (fu <= fv || v == x || v == w) {
        v = u;
        fv = fu;
      }
    }
  }
  *f_min = fx;
  return x;
}

}  // namespace

double MinimizeOverLog10Nvr(const std::function<double(double log10_nvr)>& cost,
                            const NvrFitOptions& options, NvrFitSummary* summary) {
  const auto start = std::chrono::steady_clock::now();
  int evaluations = 0;
  auto objective = [&](double log10_nvr) {
    const double value = cost(log10_nvr);
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
  double x = BrentMinimize(objective, a, b, options.tolerance_log10, &summary->evaluations, &f_min);
  if (best_value < f_min) {  // keep the grid point if Brent did not improve on it
    x = lo + best * step;
    f_min = best_value;
  }
  summary->log10_nvr = x;
  summary->nvr = std::pow(10.0, x);
  summary->at_bound = (x - lo) < 2.0 * options.tolerance_log10 + 1e-9 ||
                      (hi - x) < 2.0 * options.tolerance_log10 + 1e-9;
  summary->message = std::string(NvrCriterionName(options.criterion)) + " NVR " +
                     std::to_string(summary->nvr) + " after " +
                     std::to_string(summary->evaluations) + " evaluations" +
                     (summary->at_bound ? " (at the edge of the search interval)" : "");
  return f_min;
}

bool SmoothEachColumn(int channels, int num_threads,
                      const std::function<bool(int c, IrwSmootherResult*, std::string*)>& smooth,
                      std::vector<IrwSmootherResult>* results, std::string* error) {
  results->assign(channels, IrwSmootherResult());
  std::vector<std::string> errors(channels);
  std::vector<char> ok(channels, 0);
  data::ParallelFor(0, channels, num_threads,
                    [&](int c) { ok[c] = smooth(c, &(*results)[c], &errors[c]); });
  for (int c = 0; c < channels; ++c) {
    if (!ok[c]) {
      *error = "column " + std::to_string(c + 1) + ": " + errors[c];
      return false;
    }
  }
  return true;
}

bool FitThenSmoothColumns(const Eigen::MatrixXd& columns, const Eigen::VectorXd* times,
                          double sample_period_s, const NvrFitOptions& fit_options,
                          bool compute_standard_deviations, const std::vector<std::string>& names,
                          std::vector<NvrFitSummary>* fits, std::vector<IrwSmootherResult>* results,
                          std::string* error, int num_threads) {
  const int channels = static_cast<int>(columns.cols());
  CHECK(names.empty() || static_cast<int>(names.size()) == channels)
      << "expected " << channels << " column names, got " << names.size();
  std::vector<IrwSmootherOptions> options(channels);
  fits->assign(channels, NvrFitSummary());
  for (int c = 0; c < channels; ++c) {
    const bool fitted = times != nullptr
                            ? FitNvrAtTimes(*times, columns.col(c), fit_options, &(*fits)[c], error)
                            : FitNvr(columns.col(c), fit_options, &(*fits)[c], error);
    if (!fitted) {
      const std::string name = names.empty() ? "column " + std::to_string(c + 1) : names[c];
      *error = "NVR fit of " + name + ": " + *error;
      return false;
    }
    options[c].model = fit_options.model;
    options[c].nvr = (*fits)[c].nvr;
    options[c].compute_standard_deviations = compute_standard_deviations;
  }
  return SmoothEachColumn(
      channels, num_threads,
      [&](int c, IrwSmootherResult* result, std::string* column_error) {
        return times != nullptr
                   ? SmoothIrwAtTimes(*times, columns.col(c), options[c], result, column_error)
                   : SmoothIrw(columns.col(c), sample_period_s, options[c], result, column_error);
      },
      results, error);
}

}  // namespace dynid::solvers::internal
