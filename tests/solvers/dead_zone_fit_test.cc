// Tests of the robust dead-zone fit (backlash b and stiffness K from (Δ, tau_K) pairs).
#include "dynid/solvers/dead_zone_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace dynid::solvers {
namespace {

// Pairs along a slowly swept oscillation of Δ (time ordered, as from an estimator), tau on the
// dead zone (or a line when backlash = 0) plus noise, optionally with Δ shifted by a drift.
void MakePairs(int n, double center, double backlash, double stiffness, double noise, double drift,
               std::uint64_t seed, Eigen::VectorXd* delta, Eigen::VectorXd* tau) {
  std::mt19937_64 generator(seed);
  std::normal_distribution<double> normal;
  delta->resize(n);
  tau->resize(n);
  for (int k = 0; k < n; ++k) {
    const double t = static_cast<double>(k) / n;
    const double true_delta = center + 0.2 * std::sin(2 * M_PI * 25 * t) * (0.6 + 0.4 * t);
    (*tau)(k) = DeadZoneTorque(true_delta, center, backlash, stiffness) + noise * normal(generator);
    (*delta)(k) = true_delta + drift * t * t;
  }
}

TEST(DeadZoneFitTest, RecoversBacklashAndStiffnessWithIntervalsThatCoverThem) {
  Eigen::VectorXd delta, tau;
  MakePairs(4000, 0.01, 0.1, 79.0, 0.3, 0.0, 1, &delta, &tau);
  DeadZoneFitOptions options;
  options.bootstrap_replicates = 100;
  DeadZoneFit fit;
  std::string error;
  ASSERT_TRUE(FitDeadZone(delta, tau, options, &fit, &error)) << error;
  EXPECT_NEAR(fit.backlash_rad, 0.1, 0.003);
  EXPECT_NEAR(fit.stiffness_nm_per_rad, 79.0, 1.0);
  EXPECT_NEAR(fit.center_rad, 0.01, 0.002);
  EXPECT_LE(fit.backlash_lower, 0.1);
  EXPECT_GE(fit.backlash_upper, 0.1);
  EXPECT_LE(fit.stiffness_lower, 79.0);
  EXPECT_GE(fit.stiffness_upper, 79.0);
  EXPECT_TRUE(fit.backlash_detected);
  EXPECT_NE(fit.verdict.find("backlash detected"), std::string::npos) << fit.verdict;
  EXPECT_NEAR(fit.residual_scale_nm, 0.3, 0.05);
}

// The bootstrap replicates are drawn before they are fitted, so the intervals are the same
// (to the bit) for any number of threads.
TEST(DeadZoneFitTest, ThreadCountDoesNotChangeTheIntervals) {
  Eigen::VectorXd delta, tau;
  MakePairs(2000, 0.01, 0.1, 79.0, 0.3, 0.0, 3, &delta, &tau);
  DeadZoneFitOptions options;
  options.bootstrap_replicates = 41;  // not a multiple of the thread count
  DeadZoneFit one, three;
  std::string error;
  ASSERT_TRUE(FitDeadZone(delta, tau, options, &one, &error)) << error;
  options.num_threads = 3;
  ASSERT_TRUE(FitDeadZone(delta, tau, options, &three, &error)) << error;
  EXPECT_EQ(one.backlash_lower, three.backlash_lower);
  EXPECT_EQ(one.backlash_upper, three.backlash_upper);
  EXPECT_EQ(one.stiffness_lower, three.stiffness_lower);
  EXPECT_EQ(one.stiffness_upper, three.stiffness_upper);
  EXPECT_EQ(one.center_lower, three.center_lower);
  EXPECT_EQ(one.backlash_std, three.backlash_std);
  EXPECT_EQ(one.verdict, three.verdict);
  EXPECT_LT(one.backlash_lower, one.backlash_upper);
  options.num_threads = 0;
  EXPECT_FALSE(FitDeadZone(delta, tau, options, &three, &error));
  EXPECT_NE(error.find("num_threads"), std::string::npos) << error;
}

TEST(DeadZoneFitTest, LinearSpringIsReportedBacklashFree) {
  Eigen::VectorXd delta, tau;
  MakePairs(4000, 0.0, 0.0, 67.0, 0.3, 0.0, 2, &delta, &tau);
  DeadZoneFitOptions options;
  options.bootstrap_replicates = 100;
  DeadZoneFit fit;
  std::string error;
  ASSERT_TRUE(FitDeadZone(delta, tau, options, &fit, &error)) << error;
  EXPECT_FALSE(fit.backlash_detected) << fit.verdict;
  EXPECT_NE(fit.verdict.find("no backlash detected"), std::string::npos) << fit.verdict;
  EXPECT_LT(fit.backlash_rad, 0.002);
  EXPECT_NEAR(fit.linear_stiffness_nm_per_rad, 67.0, 0.5);
}

TEST(DeadZoneFitTest, RobustToGrossOutliers) {
  Eigen::VectorXd delta, tau;
  MakePairs(4000, 0.0, 0.2, 37.0, 0.1, 0.0, 3, &delta, &tau);
  for (int k = 0; k < tau.size(); k += 10) tau(k) += (k % 20 == 0 ? 8.0 : -8.0);  // 10 %
  DeadZoneFitOptions options;
  options.bootstrap_replicates = 50;
  DeadZoneFit fit;
  std::string error;
  ASSERT_TRUE(FitDeadZone(delta, tau, options, &fit, &error)) << error;
  EXPECT_NEAR(fit.backlash_rad, 0.2, 0.005);
  EXPECT_NEAR(fit.stiffness_nm_per_rad, 37.0, 1.0);
}

TEST(DeadZoneFitTest, DriftingCentreIsAbsorbedBySegments) {
  // Δ drifts by 0.15 rad (more than the backlash) over the record: one constant centre smears
  // the corners; a piecewise-linear centre recovers b.
  Eigen::VectorXd delta, tau;
  MakePairs(4000, 0.0, 0.1, 79.0, 0.3, 0.15, 4, &delta, &tau);
  DeadZoneFitOptions options;
  options.bootstrap_replicates = 50;
  DeadZoneFit constant, drifting;
  std::string error;
  ASSERT_TRUE(FitDeadZone(delta, tau, options, &constant, &error)) << error;
  options.center_segments = 20;
  ASSERT_TRUE(FitDeadZone(delta, tau, options, &drifting, &error)) << error;
  EXPECT_EQ(drifting.centers_rad.size(), 21u);
  EXPECT_NEAR(drifting.backlash_rad, 0.1, 0.004);
  EXPECT_NEAR(drifting.stiffness_nm_per_rad, 79.0, 1.5);
  EXPECT_GT(std::abs(constant.backlash_rad - 0.1), 5 * std::abs(drifting.backlash_rad - 0.1));
  // The fitted centre follows the drift.
  EXPECT_NEAR(DeadZoneCenterAt(drifting, 3999, 4000), 0.15, 0.01);
  EXPECT_NEAR(DeadZoneCenterAt(drifting, 0, 4000), 0.0, 0.01);
}

TEST(DeadZoneFitTest, IsDeterministic) {
  Eigen::VectorXd delta, tau;
  MakePairs(1000, 0.0, 0.1, 79.0, 0.5, 0.0, 5, &delta, &tau);
  DeadZoneFitOptions options;
  options.bootstrap_replicates = 30;
  DeadZoneFit a, b;
  std::string error;
  ASSERT_TRUE(FitDeadZone(delta, tau, options, &a, &error));
  ASSERT_TRUE(FitDeadZone(delta, tau, options, &b, &error));
  EXPECT_EQ(a.backlash_lower, b.backlash_lower);
  EXPECT_EQ(a.stiffness_upper, b.stiffness_upper);
}

TEST(DeadZoneFitTest, RejectsBadInput) {
  DeadZoneFitOptions options;
  DeadZoneFit fit;
  std::string error;
  EXPECT_FALSE(
      FitDeadZone(Eigen::VectorXd::Zero(10), Eigen::VectorXd::Zero(10), options, &fit, &error));
  EXPECT_NE(error.find("at least 20"), std::string::npos) << error;
  EXPECT_FALSE(
      FitDeadZone(Eigen::VectorXd::Zero(30), Eigen::VectorXd::Zero(29), options, &fit, &error));
  EXPECT_FALSE(
      FitDeadZone(Eigen::VectorXd::Zero(30), Eigen::VectorXd::Zero(30), options, &fit, &error));
  EXPECT_NE(error.find("constant"), std::string::npos) << error;
  Eigen::VectorXd delta = Eigen::VectorXd::LinSpaced(30, -1, 1), tau = delta;
  tau(3) = NAN;
  EXPECT_FALSE(FitDeadZone(delta, tau, options, &fit, &error));
  EXPECT_NE(error.find("NaN"), std::string::npos) << error;
  options.confidence = 1.5;
  EXPECT_FALSE(FitDeadZone(delta, delta, options, &fit, &error));
  EXPECT_NE(error.find("confidence"), std::string::npos) << error;
}

}  // namespace
}  // namespace dynid::solvers
