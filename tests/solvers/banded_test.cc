#include "dynid/solvers/internal/banded.h"

#include <random>

#include <Eigen/Dense>
#include <gtest/gtest.h>

namespace dynid::solvers {
namespace {

BandedSpdMatrix RandomSpd(int n, int p, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  BandedSpdMatrix a(n, p);
  for (int j = 0; j < n; ++j) {
    for (int i = 1; i <= p && j + i < n; ++i) a.At(j + i, j) = uniform(rng);
    a.At(j, j) = 2.0 * p + 1.0 + uniform(rng);  // diagonally dominant
  }
  return a;
}

Eigen::MatrixXd Dense(const BandedSpdMatrix& a) {
  Eigen::MatrixXd dense(a.size(), a.size());
  for (int i = 0; i < a.size(); ++i)
    for (int j = 0; j < a.size(); ++j) dense(i, j) = a(i, j);
  return dense;
}

class BandedTest : public ::testing::TestWithParam<int> {};

TEST_P(BandedTest, SolveLogDeterminantAndInverseBandMatchDense) {
  const int p = GetParam();
  const int n = 37;
  const BandedSpdMatrix a = RandomSpd(n, p, 11 + p);
  const Eigen::MatrixXd dense = Dense(a);
  BandedCholesky cholesky;
  ASSERT_TRUE(cholesky.Factorize(a));
  const Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(n, -1.0, 2.0);
  const Eigen::VectorXd x = cholesky.Solve(b);
  EXPECT_LT((dense * x - b).norm(), 1e-12 * b.norm());
  EXPECT_LT((a.Multiply(x) - b).norm(), 1e-12 * b.norm());
  const Eigen::LLT<Eigen::MatrixXd> llt(dense);
  const double log_det = 2.0 * llt.matrixLLT().diagonal().array().log().sum();
  EXPECT_NEAR(cholesky.LogDeterminant(), log_det, 1e-11 * std::abs(log_det));
  const Eigen::MatrixXd inverse = dense.inverse();
  const BandedSpdMatrix band = cholesky.InverseBand();
  for (int i = 0; i < n; ++i) {
    for (int j = std::max(0, i - p); j <= i; ++j) {
      EXPECT_NEAR(band(i, j), inverse(i, j), 1e-13) << i << "," << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Bandwidths, BandedTest, ::testing::Values(0, 1, 2, 3, 5));

TEST(BandedTest, IndefiniteMatrixReportsPivot) {
  BandedSpdMatrix a(4, 1);
  for (int j = 0; j < 4; ++j) a.At(j, j) = 1.0;
  a.At(3, 2) = 2.0;  // makes the trailing 2x2 block indefinite
  BandedCholesky cholesky;
  int pivot = -1;
  EXPECT_FALSE(cholesky.Factorize(a, &pivot));
  EXPECT_EQ(pivot, 3);
}

}  // namespace
}  // namespace dynid::solvers
