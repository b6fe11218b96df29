#include "dynid/solvers/internal/banded.h"

#include <algorithm>
#include <cmath>

#include <glog/logging.h>

namespace dynid::solvers {

BandedSpdMatrix::BandedSpdMatrix(int size, int bandwidth)
    : size_(size), bandwidth_(bandwidth), band_(Eigen::MatrixXd::Zero(bandwidth + 1, size)) {
  CHECK_GE(size, 1) << "BandedSpdMatrix: size must be positive";
  CHECK_GE(bandwidth, 0);
}

double BandedSpdMatrix::operator()(int row, int col) const {
  if (row < col) std::swap(row, col);
  if (row - col > bandwidth_) return 0.0;
  return band_(row - col, col);
}

double& BandedSpdMatrix::At(int row, int col) {
  CHECK(row >= col && row - col <= bandwidth_ && row < size_ && col >= 0)
      << "BandedSpdMatrix::At(" << row << ", " << col << ") outside the stored lower band";
  return band_(row - col, col);
}

Eigen::VectorXd BandedSpdMatrix::Multiply(const Eigen::VectorXd& x) const {
  CHECK_EQ(x.size(), size_);
  Eigen::VectorXd y = Eigen::VectorXd::Zero(size_);
  for (int j = 0; j < size_; ++j) {
    y[j] += band_(0, j) * x[j];
    const int last = std::min(bandwidth_, size_ - 1 - j);
    for (int i = 1; i <= last; ++i) {
      const double a = band_(i, j);
      y[j + i] += a * x[j];
      y[j] += a * x[j + i];
    }
  }
  return y;
}

bool BandedCholesky::Factorize(const BandedSpdMatrix& matrix, int* failed_pivot) {
  size_ = matrix.size();
  bandwidth_ = matrix.bandwidth();
  factor_ = matrix.band();
  const int p = bandwidth_;
  // Column-oriented (left-looking) banded Cholesky: L(:, j) from A(:, j) minus the
  // contributions of the p previous columns.
  for (int j = 0; j < size_; ++j) {
    const int first = std::max(0, j - p);
    for (int k = first; k < j; ++k) {
      const double l_jk = factor_(j - k, k);
      const int last = std::min(k + p, size_ - 1);
      for (int i = j; i <= last; ++i) factor_(i - j, j) -= factor_(i - k, k) * l_jk;
    }
    const double pivot = factor_(0, j);
    if (!(pivot > 0.0) || !std::isfinite(pivot)) {
      if (failed_pivot) *failed_pivot = j;
      size_ = 0;
      return false;
    }
    const double root = std::sqrt(pivot);
    factor_(0, j) = root;
    const int last = std::min(p, size_ - 1 - j);
    for (int i = 1; i <= last; ++i) factor_(i, j) /= root;
  }
  return true;
}

void BandedCholesky::SolveInPlace(Eigen::VectorXd* b) const {
  CHECK_GT(size_, 0) << "BandedCholesky: Solve before a successful Factorize";
  CHECK_EQ(b->size(), size_);
  Eigen::VectorXd& x = *b;
  const int p = bandwidth_;
  for (int j = 0; j < size_; ++j) {  // L z = b
    x[j] /= factor_(0, j);
    const int last = std::min(p, size_ - 1 - j);
    for (int i = 1; i <= last; ++i) x[j + i] -= factor_(i, j) * x[j];
  }
  for (int j = size_ - 1; j >= 0; --j) {  // L^T x = z
    const int last = std::min(p, size_ - 1 - j);
    double sum = x[j];
    for (int i = 1; i <= last; ++i) sum -= factor_(i, j) * x[j + i];
    x[j] = sum / factor_(0, j);
  }
}

Eigen::VectorXd BandedCholesky::Solve(const Eigen::VectorXd& b) const {
  Eigen::VectorXd x = b;
  SolveInPlace(&x);
  return x;
}

double BandedCholesky::LogDeterminant() const {
  CHECK_GT(size_, 0);
  double sum = 0.0;
  for (int j = 0; j < size_; ++j) sum += std::log(factor_(0, j));
  return 2.0 * sum;
}

BandedSpdMatrix BandedCholesky::InverseBand() const {
  CHECK_GT(size_, 0) << "BandedCholesky: InverseBand before a successful Factorize";
  const int p = bandwidth_;
  const int n = size_;
  BandedSpdMatrix inverse(n, p);
  // With L = D^{1/2}-scaled unit factor, Z = A^{-1} satisfies (Takahashi):
  //   Z(i, j) = delta_ij / L_jj^2 - (1 / L_jj) sum_{k > j, k <= j + p} L(k, j) Z(i, k), i >= j,
  // evaluated for j = n-1 .. 0, which only needs Z inside the band.
  for (int j = n - 1; j >= 0; --j) {
    const double l_jj = factor_(0, j);
    const int last = std::min(p, n - 1 - j);
    // Off-diagonal entries Z(j + i, j), i = last..1.
    for (int i = last; i >= 1; --i) {
      double sum = 0.0;
      for (int k = 1; k <= last; ++k) sum += factor_(k, j) * inverse(j + i, j + k);
      inverse.At(j + i, j) = -sum / l_jj;
    }
    double sum = 0.0;
    for (int k = 1; k <= last; ++k) sum += factor_(k, j) * inverse(j + k, j);
    inverse.At(j, j) = 1.0 / (l_jj * l_jj) - sum / l_jj;
  }
  return inverse;
}

}  // namespace dynid::solvers
