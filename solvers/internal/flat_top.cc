#include "dynid/solvers/internal/flat_top.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>

namespace dynid::solvers::internal {
namespace {

// K_T and the largest m̂ searched, ceil(sqrt(t)) + K_T, at most t − 1.
int ConsecutiveInsignificant(double t) {
  return std::max(5, static_cast<int>(std::ceil(std::sqrt(std::log10(t)))));
}
int LargestLag(Eigen::Index t) {
  const double n = static_cast<double>(t);
  return std::min<int>(static_cast<int>(t) - 1,
                       static_cast<int>(std::ceil(std::sqrt(n))) + ConsecutiveInsignificant(n));
}

}  // namespace

int FlatTopReach(Eigen::Index t) {
  CHECK_GE(t, 2) << "flat-top window: a series of at least 2 samples";
  return std::min<int>(static_cast<int>(t) - 1, 2 * LargestLag(t));
}

FlatTopEstimate FlatTopSums(const Eigen::VectorXd& r, Eigen::Index t) {
  const int reach = FlatTopReach(t);
  CHECK_GE(r.size(), reach + 1) << "flat-top window: autocovariances up to lag " << reach;
  CHECK_GT(r[0], 0.0) << "flat-top window: a series of positive variance";
  const double n = static_cast<double>(t);
  const int k_n = ConsecutiveInsignificant(n);
  const int max_lag = LargestLag(t);
  const double bound = 2.0 * std::sqrt(std::log10(n) / n);
  // m̂: the first lag followed by k_n insignificant autocorrelations.
  int m = max_lag - k_n;
  for (int lag = 0; lag + k_n <= max_lag; ++lag) {
    bool insignificant = true;
    for (int k = 1; k <= k_n && insignificant; ++k) {
      insignificant = std::abs(r[lag + k] / r[0]) < bound;
    }
    if (insignificant) {
      m = lag;
      break;
    }
  }
  FlatTopEstimate estimate;
  estimate.window = std::min(2 * std::max(m, 1), reach);
  estimate.g = r[0];
  for (int k = 1; k <= estimate.window; ++k) {
    const double u = static_cast<double>(k) / estimate.window;
    const double lambda = u <= 0.5 ? 1.0 : 2.0 * (1.0 - u);
    estimate.g += 2.0 * lambda * r[k];
    estimate.big_g += 2.0 * lambda * k * r[k];
  }
  return estimate;
}

bool FlatTopOfSeries(const Eigen::VectorXd& grid, Eigen::Index n, FlatTopEstimate* estimate,
                     double* lag1) {
  const Eigen::Index span = grid.size();
  const int reach = FlatTopReach(n);
  CHECK_GE(span, reach + 1) << "flat-top window: a grid of at least " << reach + 1 << " samples";
  Eigen::VectorXd autocovariance(reach + 1);
  for (int k = 0; k <= reach; ++k) {
    autocovariance[k] = grid.head(span - k).dot(grid.tail(span - k)) / static_cast<double>(n);
  }
  if (!(autocovariance[0] > 0.0)) return false;
  *estimate = FlatTopSums(autocovariance / autocovariance[0], n);
  if (lag1 != nullptr) *lag1 = autocovariance[1] / autocovariance[0];
  return true;
}

int AutomaticBartlettLags(double alpha, double n) {
  const int cap = static_cast<int>(std::ceil(std::min(3.0 * std::sqrt(n), n / 3.0)));
  const int lags = static_cast<int>(std::ceil(1.1447 * std::cbrt(alpha * n)));
  return std::max(1, std::min(lags, cap));
}

}  // namespace dynid::solvers::internal
