#include "dynid/solvers/residual_analysis.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/LU>
#include <cmath>
#include <cstdio>
#include <random>
#include <utility>
#include <vector>

namespace dynid::solvers {
namespace {

using ::testing::HasSubstr;

TEST(ResidualAnalysisTest, ChiSquareSurvivalMatchesScipy) {
  // scipy.stats.chi2.sf(q, dof), scipy 1.10.1.
  struct Case {
    double q;
    int dof;
    double expected;
  };
  for (const Case& c :
       {Case{30.0, 20, 0.06985366069940986}, Case{10.0, 20, 0.9681719426937951},
        Case{45.0, 20, 0.0011034692430283482}, Case{0.5, 1, 0.47950012218695337},
        Case{3.84, 1, 0.05004352124870519}, Case{200.0, 50, 7.857610724654791e-20},
        Case{1e-3, 3, 0.9999915920809419}, Case{100.0, 20, 1.2596084591660847e-12}}) {
    EXPECT_NEAR(ChiSquareSurvival(c.q, c.dof), c.expected, 1e-12 * std::max(c.expected, 1e-8))
        << c.q << " " << c.dof;
  }
}

TEST(ResidualAnalysisTest, FisherSurvivalMatchesScipy) {
  // scipy.stats.f.sf(x, dof1, dof2), scipy 1.10.1.
  struct Case {
    double x;
    int dof1, dof2;
    double expected;
  };
  for (const Case& c :
       {Case{1.0, 3, 100, 0.39618624961800425}, Case{2.5, 1, 594, 0.11437859680659965},
        Case{150.0, 4, 594, 1.3215776595574796e-88}, Case{0.2, 2, 10, 0.8219271067593514},
        Case{3.0, 10, 20, 0.0175095414784}, Case{1e-3, 5, 50, 0.9999998990385564}}) {
    EXPECT_NEAR(FisherSurvival(c.x, c.dof1, c.dof2), c.expected, 1e-11 * c.expected)
        << c.x << " " << c.dof1 << " " << c.dof2;
  }
}

TEST(ResidualAnalysisTest, AutocorrelationMatchesDirectFormula) {
  Eigen::VectorXd x(50);
  for (int k = 0; k < 50; ++k) x(k) = std::sin(0.7 * k) + 0.1 * std::cos(std::pow(k, 1.3));
  const Eigen::VectorXd r = Autocorrelation(x, 5);
  EXPECT_EQ(r(0), 1.0);
  // numpy: dot(xc[:N-k], xc[k:]) / dot(xc, xc).
  EXPECT_NEAR(r(1), 0.7550223285078158, 1e-13);
  EXPECT_NEAR(r(2), 0.19704375150161393, 1e-13);
  EXPECT_NEAR(r(5), -0.8448168417239447, 1e-13);
  EXPECT_EQ(Autocorrelation(Eigen::VectorXd::Constant(10, 3.0), 3)(2), 0.0);
}

TEST(ResidualAnalysisTest, WhiteNoiseIsWhiteAndAr1IsNot) {
  std::mt19937 rng(3);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int n = 2000;
  Eigen::VectorXd residual(2 * n);
  double ar = 0.0;
  for (int k = 0; k < n; ++k) {
    residual(k) = normal(rng);  // joint 1: white
    ar = 0.5 * ar + normal(rng);
    residual(n + k) = ar;  // joint 2: AR(1), r_1 ≈ 0.5
  }
  const RowBlocks blocks = RowBlocks::Stacked(data::StackOrder::kJointMajor, 2, n);
  const WhitenessSummary summary = AnalyseResidualWhiteness(residual, blocks, WhitenessOptions());
  ASSERT_TRUE(summary.success) << summary.message;
  ASSERT_EQ(summary.blocks.size(), 2u);
  EXPECT_TRUE(summary.blocks[0].white);
  EXPECT_GT(summary.blocks[0].p_value, 0.05);
  EXPECT_LE(summary.blocks[0].fraction_outside, 0.15);
  EXPECT_NEAR(summary.blocks[0].bound, 1.96 / std::sqrt(2000.0), 1e-15);
  EXPECT_FALSE(summary.blocks[1].white);
  EXPECT_NEAR(summary.blocks[1].autocorrelation(1), 0.5, 0.05);
  EXPECT_LT(summary.blocks[1].p_value, 1e-10);
  EXPECT_FALSE(summary.all_white);
  EXPECT_THAT(summary.Report(), HasSubstr("joint 2: N = 2000"));
  EXPECT_THAT(summary.Report(), HasSubstr("NOT white"));
}

TEST(ResidualAnalysisTest, ShortBlocksAndBadOptionsAreReported) {
  const RowBlocks blocks = RowBlocks::FromSizes({30, 10});
  WhitenessSummary summary =
      AnalyseResidualWhiteness(Eigen::VectorXd::Ones(40), blocks, WhitenessOptions());
  EXPECT_FALSE(summary.success);
  EXPECT_THAT(summary.message, HasSubstr("block 2 has 10 residuals"));
  WhitenessOptions options;
  options.max_lag = 0;
  summary = AnalyseResidualWhiteness(Eigen::VectorXd::Ones(40), blocks, options);
  EXPECT_THAT(summary.message, HasSubstr("max_lag must be >= 1"));
}

// The moving-sum HAC equals the direct Bartlett double sum, with gaps from a row selection
// (samples missing from a block count as zero terms), two blocks and IV-style Z ≠ X.
TEST(HacCovarianceTest, MatchesTheDirectBartlettSum) {
  std::mt19937 rng(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int n = 120, b = 3, lags = 4;
  RowBlocks all = RowBlocks::Stacked(data::StackOrder::kJointMajor, 2, n);
  std::vector<int> rows;
  for (int r = 0; r < 2 * n; ++r) {
    if (r % 17 != 3 && r % 29 != 0) rows.push_back(r);  // gaps
  }
  const RowBlocks blocks = all.Subset(rows);
  const int m = static_cast<int>(rows.size());
  Eigen::MatrixXd x(m, b), z(m, b);
  Eigen::VectorXd e(m);
  double previous = 0.0;
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < b; ++c) {
      x(r, c) = normal(rng);
      z(r, c) = x(r, c) + 0.3 * normal(rng);
    }
    previous = 0.6 * previous + normal(rng);  // AR(1) residual
    e[r] = previous;
  }
  const HacCovariance hac = ComputeHacCovariance(z, x, e, blocks, lags);
  ASSERT_TRUE(hac.success) << hac.message;
  EXPECT_EQ(hac.lags, lags);
  Eigen::MatrixXd omega = Eigen::MatrixXd::Zero(b, b);
  for (int r = 0; r < m; ++r) {
    for (int s = 0; s < m; ++s) {
      if (blocks.BlockOf(r) != blocks.BlockOf(s)) continue;
      const int l = std::abs(blocks.sample_of_row[r] - blocks.sample_of_row[s]);
      if (l > lags) continue;
      const double w = 1.0 - l / (lags + 1.0);
      omega += w * e[r] * e[s] * z.row(r).transpose() * z.row(s);
    }
  }
  const Eigen::MatrixXd a = (z.transpose() * x).inverse();
  const Eigen::MatrixXd direct = a * omega * a.transpose();
  EXPECT_LT((hac.covariance - direct).norm(), 1e-10 * direct.norm());
  // Automatic bandwidth: positive correlation → more than one lag; white residual → few.
  const HacCovariance automatic = ComputeHacCovariance(z, x, e, blocks);
  ASSERT_TRUE(automatic.success);
  EXPECT_GT(automatic.rho, 0.4);
  EXPECT_GE(automatic.lags, 3);
  Eigen::VectorXd white(m);
  for (int r = 0; r < m; ++r) white[r] = normal(rng);
  EXPECT_LE(ComputeHacCovariance(x, x, white, blocks).lags, 2);
  // Bad shapes are reported.
  EXPECT_FALSE(ComputeHacCovariance(z, x, e.head(5), blocks).success);
}

// Residuals of unit-variance white noise plus `slow_variance` × an AR(1) component of
// coefficient `phi` (stationary start), `blocks` blocks of `n` samples one after the other.
Eigen::VectorXd WhitePlusAr1(int n, int blocks, double phi, double slow_variance,
                             std::mt19937_64* rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::VectorXd e(static_cast<Eigen::Index>(n) * blocks);
  const double innovation = std::sqrt(slow_variance * (1.0 - phi * phi));
  for (int block = 0; block < blocks; ++block) {
    double slow = std::sqrt(slow_variance) * normal(*rng);
    for (int t = 0; t < n; ++t) {
      slow = phi * slow + innovation * normal(*rng);
      e[block * n + t] = normal(*rng) + slow;
    }
  }
  return e;
}

// On AR(1) residuals the bandwidth from the autocorrelation function estimates Andrews' α of the
// AR(1) rule: the two rules choose about the same L (per block and pooled over blocks); on
// white residuals both choose a short one.
TEST(HacCovarianceTest, AutocorrelationBandwidthAgreesWithTheAr1RuleOnAr1Residuals) {
  const int n = 4000, b = 2;
  for (const double phi : {0.5, 0.8, 0.95}) {
    for (const int num_blocks : {1, 3}) {
      std::mt19937_64 rng(static_cast<std::uint64_t>(100 * phi) + num_blocks);
      std::normal_distribution<double> normal(0.0, 1.0);
      Eigen::VectorXd e(static_cast<Eigen::Index>(n) * num_blocks);
      for (int block = 0; block < num_blocks; ++block) {
        double previous = normal(rng) / std::sqrt(1.0 - phi * phi);
        for (int t = 0; t < n; ++t) {
          previous = phi * previous + normal(rng);
          e[block * n + t] = previous;
        }
      }
      Eigen::MatrixXd x(e.size(), b);
      for (Eigen::Index r = 0; r < x.rows(); ++r) x.row(r) << 1.0, normal(rng);
      const RowBlocks blocks = RowBlocks::Stacked(data::StackOrder::kJointMajor, num_blocks, n);
      const HacCovariance ar1 = ComputeHacCovariance(x, x, e, blocks, 0, HacBandwidth::kAr1);
      const HacCovariance acf =
          ComputeHacCovariance(x, x, e, blocks, 0, HacBandwidth::kAutocorrelation);
      ASSERT_TRUE(ar1.success && acf.success) << acf.message;
      const double andrews = 4.0 * phi * phi / std::pow((1 - phi) * (1 + phi), 2);
      std::printf(
          "AR(%.2f), %d block(s): α true %.3g, AR(1) rule %.3g (L = %d), ACF %.3g (L = %d)\n", phi,
          num_blocks, andrews, ar1.alpha, ar1.lags, acf.alpha, acf.lags);
      // α within a factor 2 (L, its cube root, within 26 %).
      EXPECT_GT(acf.alpha / andrews, 0.5) << phi << " " << num_blocks;
      EXPECT_LT(acf.alpha / andrews, 2.0) << phi << " " << num_blocks;
      EXPECT_NEAR(static_cast<double>(acf.lags) / ar1.lags, 1.0, 0.2) << phi << " " << num_blocks;
      EXPECT_THAT(acf.message, HasSubstr("autocorrelation function"));
      EXPECT_THAT(ar1.message, ::testing::Not(HasSubstr("autocorrelation function")));
    }
  }
  std::mt19937_64 rng(3);
  const Eigen::VectorXd white = WhitePlusAr1(n, 1, 0.0, 0.0, &rng);
  const Eigen::MatrixXd x = Eigen::MatrixXd::Ones(n, 1);
  const RowBlocks one_block;
  EXPECT_LE(ComputeHacCovariance(x, x, white, one_block, 0, HacBandwidth::kAr1).lags, 2);
  EXPECT_LE(ComputeHacCovariance(x, x, white, one_block, 0, HacBandwidth::kAutocorrelation).lags,
            3);
  // Given lags are kept whatever the rule.
  EXPECT_EQ(ComputeHacCovariance(x, x, white, one_block, 7, HacBandwidth::kAutocorrelation).lags,
            7);
}

// Residuals whose autocorrelation decays slowly from a modest lag-1 value (white noise plus a
// weaker AR(0.95) component: lag-1 autocorrelation ≈ 0.32, correlation over about 60 samples):
// the AR(1) rule sees the lag-1 value only and picks a short L, so its intervals do not cover;
// the autocorrelation rule picks a long L (up to Politis & White's cap) and its intervals cover.
// A Monte Carlo of 200 regressions y = X θ + e against the true θ.
TEST(HacCovarianceTest, AutocorrelationBandwidthCoversASlowlyDecayingCorrelation) {
  const int n = 4000, runs = 200, b = 3;
  Eigen::MatrixXd x(n, b);
  for (int t = 0; t < n; ++t) {
    const double phase = 2.0 * M_PI * t / n;
    x.row(t) << 1.0, std::sin(3.0 * phase), std::cos(7.0 * phase + 0.4);
  }
  const Eigen::MatrixXd xtx_inv = (x.transpose() * x).inverse();
  const RowBlocks one_block;
  int covered_ar1 = 0, covered_acf = 0, intervals = 0;
  double lags_ar1 = 0.0, lags_acf = 0.0, rho = 0.0;
  for (int run = 0; run < runs; ++run) {
    std::mt19937_64 rng(1000 + run);
    const Eigen::VectorXd e = WhitePlusAr1(n, 1, 0.95, 0.5, &rng);  // θ = 0
    const Eigen::VectorXd estimate = xtx_inv * x.transpose() * e;
    const Eigen::VectorXd residual = e - x * estimate;
    const HacCovariance ar1 = ComputeHacCovariance(x, x, residual, one_block);
    const HacCovariance acf =
        ComputeHacCovariance(x, x, residual, one_block, 0, HacBandwidth::kAutocorrelation);
    ASSERT_TRUE(ar1.success && acf.success);
    lags_ar1 += ar1.lags;
    lags_acf += acf.lags;
    rho += ar1.rho;
    for (int i = 0; i < b; ++i) {
      covered_ar1 += std::abs(estimate[i]) <= 1.96 * ar1.standard_deviation[i];
      covered_acf += std::abs(estimate[i]) <= 1.96 * acf.standard_deviation[i];
      ++intervals;
    }
  }
  const double coverage_ar1 = static_cast<double>(covered_ar1) / intervals;
  const double coverage_acf = static_cast<double>(covered_acf) / intervals;
  std::printf(
      "white + AR(0.95), lag-1 autocorrelation %.2f: AR(1) rule mean L %.1f, coverage %.3f; "
      "autocorrelation rule mean L %.1f, coverage %.3f\n",
      rho / runs, lags_ar1 / runs, coverage_ar1, lags_acf / runs, coverage_acf);
  EXPECT_LT(rho / runs, 0.4);
  EXPECT_GT(lags_acf, 4.0 * lags_ar1);
  EXPECT_LT(coverage_ar1, 0.85);
  EXPECT_GE(coverage_acf, 0.88);
}

// A long bandwidth (b = (L + 1) / N = 0.25) on serially correlated residuals (AR(0.5)) of a
// regression on a constant, a piecewise-constant column (a Coulomb term's sign) and a slow sine:
// the HAC σ is biased down and random, and its intervals with the normal 1.96 under-cover; Kiefer &
// Vogelsang's fixed-b critical value covers. A Monte Carlo of 300 regressions against the
// true θ = 0.
TEST(HacCovarianceTest, FixedBCriticalValueCoversAtALongBandwidth) {
  const int n = 600, runs = 300, b = 3, lags = 149;
  Eigen::MatrixXd x(n, b);
  for (int t = 0; t < n; ++t) {
    const double phase = 2.0 * M_PI * t / n;
    x.row(t) << 1.0, std::sin(3.0 * phase) >= 0.0 ? 1.0 : -1.0, std::sin(5.0 * phase + 0.3);
  }
  const Eigen::MatrixXd xtx_inv = (x.transpose() * x).inverse();
  const RowBlocks one_block;
  int covered_normal = 0, covered_fixed_b = 0, intervals = 0;
  for (int run = 0; run < runs; ++run) {
    std::mt19937_64 rng(5000 + run);
    std::normal_distribution<double> normal(0.0, 1.0);
    Eigen::VectorXd e(n);
    double previous = normal(rng) / std::sqrt(1.0 - 0.25);
    for (int t = 0; t < n; ++t) e[t] = previous = 0.5 * previous + normal(rng);
    const Eigen::VectorXd estimate = xtx_inv * x.transpose() * e;
    const HacCovariance hac = ComputeHacCovariance(x, x, e - x * estimate, one_block, lags);
    ASSERT_TRUE(hac.success) << hac.message;
    EXPECT_DOUBLE_EQ(hac.bandwidth_fraction, (lags + 1.0) / n);
    const double normal_value = HacCriticalValue95(hac, HacCriticalValue::kNormal);
    const double fixed_b = HacCriticalValue95(hac, HacCriticalValue::kFixedB);
    for (int i = 0; i < b; ++i) {
      covered_normal += std::abs(estimate[i]) <= normal_value * hac.standard_deviation[i];
      covered_fixed_b += std::abs(estimate[i]) <= fixed_b * hac.standard_deviation[i];
      ++intervals;
    }
  }
  const double coverage_normal = static_cast<double>(covered_normal) / intervals;
  const double coverage_fixed_b = static_cast<double>(covered_fixed_b) / intervals;
  std::printf("AR(0.5), b = 0.25: coverage with 1.96 %.3f, with the fixed-b value %.3f\n",
              coverage_normal, coverage_fixed_b);
  EXPECT_LT(coverage_normal, 0.85);
  EXPECT_GE(coverage_fixed_b, 0.91);
  EXPECT_LE(coverage_fixed_b, 0.98);
  // The values: 1.96, and Kiefer & Vogelsang's polynomial (b = 0.04: 2.0794; b = 1: 4.813).
  HacCovariance at;
  at.bandwidth_fraction = 0.04;
  EXPECT_NEAR(HacCriticalValue95(at, HacCriticalValue::kNormal), 1.95996, 1e-5);
  EXPECT_NEAR(HacCriticalValue95(at, HacCriticalValue::kFixedB), 2.0794, 1e-4);
  at.bandwidth_fraction = 1.0;
  EXPECT_NEAR(HacCriticalValue95(at, HacCriticalValue::kFixedB), 4.8130, 1e-3);
  EXPECT_STREQ(HacCriticalValueName(HacCriticalValue::kFixedB), "fixed_b");
  EXPECT_STREQ(HacCriticalValueName(HacCriticalValue::kNormal), "normal");
}

// Z handed over in small pieces that interleave the two blocks (joint 2's rows before the rest
// of joint 1's), with batches of 3 rows per rank update: the covariance of Z held whole.
TEST(HacCovarianceTest, PiecesOfZGiveTheCovarianceOfZHeldWhole) {
  std::mt19937 rng(8);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int n = 90, b = 4, lags = 5;
  RowBlocks all = RowBlocks::Stacked(data::StackOrder::kJointMajor, 2, n);
  std::vector<int> rows;
  for (int r = 0; r < 2 * n; ++r) {
    if (r % 13 != 2 && r % 31 != 0) rows.push_back(r);
  }
  const RowBlocks blocks = all.Subset(rows);
  const int m = static_cast<int>(rows.size());
  Eigen::MatrixXd x(m, b), z(m, b);
  Eigen::VectorXd e(m);
  double previous = 0.0;
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < b; ++c) {
      x(r, c) = normal(rng);
      z(r, c) = x(r, c) + 0.5 * normal(rng);
    }
    previous = 0.7 * previous + normal(rng);
    e[r] = previous;
  }
  int first_of_joint2 = 0;
  while (blocks.BlockOf(first_of_joint2) == 0) ++first_of_joint2;
  const int half = first_of_joint2 / 2;
  for (const auto& [fixed_lags, bandwidth] :
       {std::pair{lags, HacBandwidth::kAr1}, std::pair{0, HacBandwidth::kAr1},
        std::pair{0, HacBandwidth::kAutocorrelation}}) {
    const HacCovariance whole = ComputeHacCovariance(z, x, e, blocks, fixed_lags, bandwidth);
    ASSERT_TRUE(whole.success) << whole.message;
    const HacCovariance pieces = ComputeHacCovarianceFromRows(
        [&](const HacRowConsumer& consume, std::string*) {
          consume(0, z.topRows(half));
          for (int r = first_of_joint2; r < m; r += 7) {
            consume(r, z.middleRows(r, std::min(7, m - r)));
          }
          consume(half, z.middleRows(half, first_of_joint2 - half));
          return true;
        },
        z.transpose() * x, e, blocks, fixed_lags, bandwidth, /*batch_rows=*/3);
    ASSERT_TRUE(pieces.success) << pieces.message;
    EXPECT_EQ(pieces.lags, whole.lags);
    EXPECT_DOUBLE_EQ(pieces.rho, whole.rho);
    EXPECT_DOUBLE_EQ(pieces.alpha, whole.alpha);
    EXPECT_LT((pieces.covariance - whole.covariance).norm(), 1e-12 * whole.covariance.norm());
  }
  // A source that cannot form the rows fails the covariance with its message.
  const HacCovariance failed = ComputeHacCovarianceFromRows(
      [](const HacRowConsumer&, std::string* error) {
        *error = "no simulation";
        return false;
      },
      z.transpose() * x, e, blocks);
  EXPECT_FALSE(failed.success);
  EXPECT_THAT(failed.message, HasSubstr("no simulation"));
}

}  // namespace
}  // namespace dynid::solvers
