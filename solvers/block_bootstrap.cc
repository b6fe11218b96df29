#include "dynid/solvers/block_bootstrap.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>

#include "dynid/solvers/internal/flat_top.h"

namespace dynid::solvers {

double MeanLagOneAutocorrelation(const Eigen::MatrixXd& series) {
  double sum = 0.0;
  int count = 0;
  for (Eigen::Index c = 0; c < series.cols(); ++c) {
    const Eigen::VectorXd column = series.col(c);
    if (column.size() < 3 || !column.allFinite()) continue;
    const Eigen::VectorXd centred = column.array() - column.mean();
    const double den = centred.squaredNorm();
    if (!(den > 0.0)) continue;
    const Eigen::Index n = centred.size();
    sum += centred.head(n - 1).dot(centred.tail(n - 1)) / den;
    ++count;
  }
  return count > 0 ? sum / count : 0.0;
}

int MovingBlockLength(const Eigen::MatrixXd& series) {
  const double rho = std::clamp(MeanLagOneAutocorrelation(series), -0.99, 0.99);
  const double alpha = 4.0 * rho * rho / ((1 - rho) * (1 - rho) * (1 + rho) * (1 + rho));
  const double rows = static_cast<double>(series.rows());
  const int length = static_cast<int>(std::ceil(std::cbrt(1.5 * alpha * rows)));
  return std::max(1, std::min(length, static_cast<int>(rows / 4)));
}

int PolitisWhiteBlockLength(const Eigen::MatrixXd& series) {
  const Eigen::Index rows = series.rows();
  const double t = static_cast<double>(rows);
  if (rows < 8) return 1;
  const int max_length = static_cast<int>(std::ceil(std::min(3.0 * std::sqrt(t), t / 3.0)));
  const int reach = internal::FlatTopReach(rows);
  double longest = 1.0;
  for (Eigen::Index c = 0; c < series.cols(); ++c) {
    const Eigen::VectorXd column = series.col(c);
    if (!column.allFinite()) continue;
    const Eigen::VectorXd x = column.array() - column.mean();
    if (!(x.squaredNorm() > 0.0)) continue;
    // Autocovariances R̂(k) = (1/T) Σ x_i x_{i+k}, k = 0 .. the window's reach.
    Eigen::VectorXd r(reach + 1);
    for (int k = 0; k <= reach; ++k) r[k] = x.head(rows - k).dot(x.tail(rows - k)) / t;
    const internal::FlatTopEstimate flat_top = internal::FlatTopSums(r, rows);
    if (!(std::abs(flat_top.g) > 0.0)) continue;
    const double d = 4.0 / 3.0 * flat_top.g * flat_top.g;
    const double length = std::cbrt(2.0 * flat_top.big_g * flat_top.big_g / d) * std::cbrt(t);
    longest = std::max(longest, std::min(length, static_cast<double>(max_length)));
  }
  return std::max(1, static_cast<int>(std::ceil(longest)));
}

Eigen::MatrixXd MovingBlockResample(const Eigen::MatrixXd& series, int block_length,
                                    std::mt19937_64* rng) {
  const Eigen::Index rows = series.rows();
  CHECK_GE(rows, 1);
  CHECK(block_length >= 1 && block_length <= rows) << "block length " << block_length;
  const std::uint64_t starts = static_cast<std::uint64_t>(rows - block_length + 1);
  Eigen::MatrixXd out(rows, series.cols());
  for (Eigen::Index filled = 0; filled < rows;) {
    const Eigen::Index start = static_cast<Eigen::Index>((*rng)() % starts);
    const Eigen::Index take = std::min<Eigen::Index>(block_length, rows - filled);
    out.middleRows(filled, take) = series.middleRows(start, take);
    filled += take;
  }
  return out;
}

}  // namespace dynid::solvers
