// Tests of the moving-block bootstrap (solvers/block_bootstrap.h): the resample is made of whole
// rows in blocks of consecutive rows and is reproducible from its seed; it keeps a coloured
// series' lag-1 autocorrelation and the correlation between channels; the block length follows
// the colour (the AR(1) rule, and the Politis–White rule that also sees a long, weak correlation);
// and in a parametric bootstrap of a regression it tells honest intervals from
// optimistic ones: with white residuals the classical σ cover, with strongly coloured residuals
// they do not while the HAC σ do better — and with blocks of one row (the i.i.d. bootstrap) the
// colour is lost and the classical σ would wrongly look calibrated.
#include "dynid/solvers/block_bootstrap.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <random>

#include "dynid/solvers/linear_least_squares.h"
#include "dynid/solvers/residual_analysis.h"

namespace dynid::solvers {
namespace {

// T samples of two channels: an AR(1) process with coefficient phi and unit innovations, and a
// second channel 0.8 × the first plus independent AR(1) noise of the same colour.
Eigen::MatrixXd TwoChannelAr1(int rows, double phi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::MatrixXd x(rows, 2);
  double a = 0.0, b = 0.0;
  for (int t = 0; t < rows; ++t) {
    a = phi * a + normal(rng);
    b = phi * b + normal(rng);
    x(t, 0) = a;
    x(t, 1) = 0.8 * a + 0.6 * b;
  }
  return x;
}

double Correlation(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  const Eigen::VectorXd ca = a.array() - a.mean(), cb = b.array() - b.mean();
  return ca.dot(cb) / std::sqrt(ca.squaredNorm() * cb.squaredNorm());
}

TEST(BlockBootstrapTest, WholeRowsInBlocksAndReproducible) {
  const int rows = 103, block = 10;
  Eigen::MatrixXd series(rows, 2);
  for (int t = 0; t < rows; ++t) series.row(t) << t, 1000 + t;
  std::mt19937_64 rng(7), same(7);
  const Eigen::MatrixXd out = MovingBlockResample(series, block, &rng);
  EXPECT_EQ(out, MovingBlockResample(series, block, &same));
  ASSERT_EQ(out.rows(), rows);
  for (int t = 0; t < rows; ++t) {
    EXPECT_EQ(out(t, 1), out(t, 0) + 1000);  // whole rows
    if (t % block != 0) {
      EXPECT_EQ(out(t, 0), out(t - 1, 0) + 1);  // consecutive in a block
    }
  }
  std::mt19937_64 other(8);
  EXPECT_NE(out, MovingBlockResample(series, block, &other));
}

TEST(BlockBootstrapTest, KeepsColourAndCrossCorrelation) {
  const Eigen::MatrixXd series = TwoChannelAr1(4000, 0.9, 3);
  const double rho = MeanLagOneAutocorrelation(series);
  EXPECT_NEAR(rho, 0.9, 0.03);
  const int block = MovingBlockLength(series);
  // (1.5 α T)^{1/3} at ρ = 0.9, T = 4000: α = 89.8, L ≈ 81.
  EXPECT_GT(block, 60);
  EXPECT_LT(block, 110);
  EXPECT_LE(MovingBlockLength(TwoChannelAr1(4000, 0.0, 3)), 2);  // white: one or two rows
  std::mt19937_64 rng(11);
  const Eigen::MatrixXd out = MovingBlockResample(series, block, &rng);
  EXPECT_NEAR(MeanLagOneAutocorrelation(out), rho, 0.03);
  EXPECT_NEAR(Correlation(out.col(0), out.col(1)), Correlation(series.col(0), series.col(1)), 0.05);
  // The i.i.d. bootstrap loses the colour.
  EXPECT_LT(std::abs(MeanLagOneAutocorrelation(MovingBlockResample(series, 1, &rng))), 0.05);
}

// White noise plus a small, slowly decaying AR(1) component (coefficient 0.99, variance 0.5): a
// modest lag-1 autocorrelation (≈ 0.33) and a long correlation.
Eigen::MatrixXd WhitePlusSlow(int rows, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::MatrixXd x(rows, 1);
  double slow = 0.0;
  const double phi = 0.99, innovation = std::sqrt(0.5 * (1.0 - phi * phi));
  for (int t = 0; t < rows; ++t) {
    slow = phi * slow + innovation * normal(rng);
    x(t, 0) = normal(rng) + slow;
  }
  return x;
}

TEST(BlockBootstrapTest, PolitisWhiteLengthFollowsTheWholeAutocorrelation) {
  // AR(1) at 0.9: the optimal length (1.5 α T)^{1/3} ≈ 81 at T = 4000.
  const int ar1 = PolitisWhiteBlockLength(TwoChannelAr1(4000, 0.9, 3));
  EXPECT_GT(ar1, 40);
  EXPECT_LT(ar1, 160);
  EXPECT_LE(PolitisWhiteBlockLength(TwoChannelAr1(4000, 0.0, 3)), 3);
  // A long, weak correlation: the AR(1) rule sees only the lag-1 value.
  const Eigen::MatrixXd slow = WhitePlusSlow(4000, 9);
  const int plug_in = MovingBlockLength(slow), automatic = PolitisWhiteBlockLength(slow);
  std::printf(
      "block lengths: AR(0.9) Politis-White %d; white + slow AR(0.99): AR(1) rule %d, "
      "Politis-White %d\n",
      ar1, plug_in, automatic);
  EXPECT_LT(plug_in, 25);
  EXPECT_GT(automatic, 3 * plug_in);
  EXPECT_LE(automatic, static_cast<int>(std::ceil(3.0 * std::sqrt(4000.0))));
}

// A parametric bootstrap of y = X θ + e: θ̂ by LS on one record, then `runs` records
// y* = X θ̂ + e*, e* the moving-block resample of the LS residual with `block` rows (0 = the
// automatic length); the fraction of the 95 % intervals, classical σ̂²(XᵀX)⁻¹ and HAC, that
// contain θ̂, over the runs and the three parameters.
struct Coverage {
  double classical = 0.0, hac = 0.0;
};
Coverage BootstrapCoverage(double phi, int block, int runs) {
  const int rows = 1500;
  Eigen::MatrixXd x(rows, 3);
  for (int t = 0; t < rows; ++t) {
    const double time = 0.01 * t;
    x.row(t) << 1.0, std::sin(0.7 * time), std::cos(0.3 * time + 0.5);  // slow regressors
  }
  const Eigen::Vector3d theta(0.5, 2.0, -1.0);
  const Eigen::VectorXd y = x * theta + 0.2 * TwoChannelAr1(rows, phi, 5).col(0);
  const Eigen::MatrixXd xtx_inv = (x.transpose() * x).inverse();
  const Eigen::VectorXd theta_hat = xtx_inv * x.transpose() * y;
  const Eigen::MatrixXd residual = y - x * theta_hat;
  const int length = block > 0 ? block : MovingBlockLength(residual);
  const RowBlocks one_block;
  int covered_classical = 0, covered_hac = 0, intervals = 0;
  for (int run = 0; run < runs; ++run) {
    std::mt19937_64 rng(100 + run);
    const Eigen::VectorXd y_star = x * theta_hat + MovingBlockResample(residual, length, &rng);
    const Eigen::VectorXd estimate = xtx_inv * x.transpose() * y_star;
    const Eigen::VectorXd e = y_star - x * estimate;
    const double sigma2 = e.squaredNorm() / (rows - 3);
    const HacCovariance hac = ComputeHacCovariance(x, x, e, one_block);
    EXPECT_TRUE(hac.success) << hac.message;
    for (int i = 0; i < 3; ++i) {
      const double error = std::abs(estimate[i] - theta_hat[i]);
      covered_classical += error <= 1.96 * std::sqrt(sigma2 * xtx_inv(i, i));
      covered_hac += error <= 1.96 * hac.standard_deviation[i];
      ++intervals;
    }
  }
  return {static_cast<double>(covered_classical) / intervals,
          static_cast<double>(covered_hac) / intervals};
}

TEST(BlockBootstrapTest, ParametricBootstrapTellsOptimisticIntervals) {
  const int runs = 40;
  const Coverage white = BootstrapCoverage(0.0, 0, runs);
  EXPECT_GE(white.classical, 0.85);
  EXPECT_GE(white.hac, 0.85);
  const Coverage coloured = BootstrapCoverage(0.95, 0, runs);
  EXPECT_LT(coloured.classical, 0.6);
  EXPECT_GT(coloured.hac, coloured.classical + 0.2);
  // Blocks of one row: the resampled residuals are white, and the classical σ look calibrated.
  const Coverage iid = BootstrapCoverage(0.95, 1, runs);
  EXPECT_GE(iid.classical, 0.85);
  std::printf(
      "coverage classical / HAC: white %.3f / %.3f, AR(0.95) %.3f / %.3f, AR(0.95) with "
      "i.i.d. resampling %.3f / %.3f\n",
      white.classical, white.hac, coloured.classical, coloured.hac, iid.classical, iid.hac);
}

}  // namespace
}  // namespace dynid::solvers
