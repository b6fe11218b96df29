// Tests of friction_filter_study's sensors and jump measures (experiments/friction_filter_study/):
// the encoder's quantisation step and error, the accelerometer's and force sensor's noise levels,
// the force sensor's delay, the shared pre-filter, and the lag, overshoot and error of an
// estimate at a friction jump on constructed signals whose lag is known.
#include "experiments/friction_filter_study/friction_filter_sensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "experiments/friction_filter_study/friction_filter_jumps.h"

namespace dynid::friction_filter_study {
namespace {

double SampleStd(const Eigen::VectorXd& x) {
  const double mean = x.mean();
  return std::sqrt((x.array() - mean).square().sum() / static_cast<double>(x.size() - 1));
}

TEST(FrictionFilterSensorsTest, EncoderQuantisesToNearestCount) {
  EXPECT_DOUBLE_EQ(Quantise(1.23456e-3, 1e-5), 123.0 * 1e-5);
  EXPECT_DOUBLE_EQ(Quantise(-4.4e-5, 1e-5), -4.0 * 1e-5);
  EXPECT_DOUBLE_EQ(Quantise(0.7, 0.0), 0.7);
  // Over a slow ramp the quantisation error is uniform in [−q/2, q/2]: sd q/√12.
  const double step = 1e-5;
  const int num = 20001;
  const Eigen::VectorXd times = Eigen::VectorXd::LinSpaced(num, 0.0, 2.0);
  const Eigen::VectorXd positions = 0.0123 * times + 1e-3 * times.array().square().matrix();
  SensorLevels levels;
  levels.encoder_resolution_m = step;
  const Eigen::MatrixXd z = SensorMeasurements(
      times, positions, Eigen::VectorXd::Zero(num), [](double) { return 0.0; }, levels, 7);
  const Eigen::VectorXd error = z.col(0) - positions;
  EXPECT_LE(error.cwiseAbs().maxCoeff(), step / 2 * (1 + 1e-9));
  EXPECT_NEAR(SampleStd(error), step / std::sqrt(12.0), 0.03 * step / std::sqrt(12.0));
  for (int k = 0; k < num; k += 997) {
    EXPECT_NEAR(z(k, 0) / step, std::round(z(k, 0) / step), 1e-6) << k;
  }
}

TEST(FrictionFilterSensorsTest, NoiseLevelsAndForceDelay) {
  const int num = 20001;
  const Eigen::VectorXd times = Eigen::VectorXd::LinSpaced(num, 0.0, 20.0);
  const auto force = [](double t) { return 4.0 * std::sin(2.0 * M_PI * t); };
  SensorLevels levels;  // 1e-5 m, 0.05 m/s², 0.02 N
  levels.force_delay_s = 0.0;
  const Eigen::VectorXd accelerations = (3.0 * times.array()).sin().matrix();
  const Eigen::MatrixXd z =
      SensorMeasurements(times, Eigen::VectorXd::Zero(num), accelerations, force, levels, 11);
  Eigen::VectorXd force_truth(num);
  for (int k = 0; k < num; ++k) force_truth(k) = force(times(k));
  EXPECT_NEAR(SampleStd(z.col(1) - accelerations), 0.05, 0.05 * 0.03);
  EXPECT_NEAR(SampleStd(z.col(2) - force_truth), 0.02, 0.02 * 0.03);
  // The same seed gives the same record; another seed another one.
  EXPECT_EQ(
      z, SensorMeasurements(times, Eigen::VectorXd::Zero(num), accelerations, force, levels, 11));
  EXPECT_NE(
      z, SensorMeasurements(times, Eigen::VectorXd::Zero(num), accelerations, force, levels, 12));
  // A delayed force sensor reads f(t − d), and 0 before the force starts.
  levels.force_sd = 0.0;
  levels.force_delay_s = 0.01;
  const Eigen::MatrixXd delayed =
      SensorMeasurements(times, Eigen::VectorXd::Zero(num), accelerations, force, levels, 11);
  EXPECT_EQ(delayed(0, 2), 0.0);
  EXPECT_DOUBLE_EQ(delayed(500, 2), force(times(500) - 0.01));
}

TEST(FrictionFilterSensorsTest, PrefilterKeepsLevelsAndAttenuatesNoise) {
  const int num = 4000;
  Eigen::MatrixXd z(num, 2);
  z.col(0).setConstant(3.0);
  for (int k = 0; k < num; ++k) z(k, 1) = (k % 2 == 0) ? 1.0 : -1.0;  // Nyquist
  Eigen::MatrixXd filtered;
  std::string error;
  ASSERT_TRUE(Prefilter(z, 0.0, 1e-3, &filtered, &error));
  EXPECT_EQ(filtered, z);
  ASSERT_TRUE(Prefilter(z, 50.0, 1e-3, &filtered, &error)) << error;
  EXPECT_NEAR((filtered.col(0).array() - 3.0).abs().maxCoeff(), 0.0, 1e-12);  // steady start
  EXPECT_LT(filtered.col(1).tail(100).cwiseAbs().maxCoeff(), 1e-3);
  EXPECT_FALSE(Prefilter(z, 600.0, 1e-3, &filtered, &error));
  EXPECT_NE(error.find("pre-filter"), std::string::npos);
}

// A friction of +2 N that jumps to −2 N at t = 0.5 s and back to +2 N at 1.5 s, on a 1 ms grid.
struct JumpSignal {
  Eigen::VectorXd times, w, velocities;
};
JumpSignal MakeJumpSignal() {
  JumpSignal s;
  const int num = 2001;
  s.times = Eigen::VectorXd::LinSpaced(num, 0.0, 2.0);
  s.w.resize(num);
  s.velocities.resize(num);
  for (int k = 0; k < num; ++k) {
    const bool negative = k >= 500 && k < 1500;
    s.w(k) = negative ? -2.0 : 2.0;
    s.velocities(k) = negative ? -0.1 : 0.1;
  }
  s.velocities(1500) = 0.0;  // slip -> stick at the second jump
  return s;
}

TEST(FrictionFilterJumpsTest, DelayedEstimateHasThatLag) {
  const JumpSignal s = MakeJumpSignal();
  const int delay = 20;  // 20 ms
  Eigen::VectorXd estimate = s.w;
  for (Eigen::Index k = delay; k < s.w.size(); ++k) estimate(k) = s.w(k - delay);
  const std::vector<JumpMeasure> jumps =
      MeasureJumps(s.times, s.w, s.velocities, estimate, 0.5, 0.1, 100);
  ASSERT_EQ(jumps.size(), 2u);
  EXPECT_EQ(jumps[0].sample, 500);
  EXPECT_DOUBLE_EQ(jumps[0].size_n, -4.0);
  EXPECT_EQ(jumps[0].kind, "reversal");
  EXPECT_EQ(jumps[1].kind, "slip_to_stick");
  for (const JumpMeasure& m : jumps) {
    EXPECT_NEAR(m.lag50_s, 0.020, 1e-9);
    EXPECT_NEAR(m.lag90_s, 0.020, 1e-9);
    EXPECT_DOUBLE_EQ(m.overshoot_n, 0.0);
    // 20 of the window's 100 samples off by 4 N.
    EXPECT_NEAR(m.rms_error_n, 4.0 * std::sqrt(0.2), 1e-9);
  }
  // Jumps before first_sample are not measured.
  EXPECT_EQ(MeasureJumps(s.times, s.w, s.velocities, estimate, 0.5, 0.1, 1000).size(), 1u);
  const JumpSummary summary = SummarizeJumps(jumps);
  EXPECT_EQ(summary.jumps, 2);
  EXPECT_NEAR(summary.median_lag90_s, 0.020, 1e-9);
  EXPECT_EQ(summary.lag90_not_reached, 0);
}

TEST(FrictionFilterJumpsTest, FirstOrderLagOvershootAndNotReached) {
  const JumpSignal s = MakeJumpSignal();
  // A first-order lag of time constant tau: 50 % after tau ln 2, 90 % after tau ln 10.
  const double tau = 0.01, h = 1e-3;
  Eigen::VectorXd lagged = s.w;
  for (Eigen::Index k = 1; k < s.w.size(); ++k) {
    lagged(k) = lagged(k - 1) + (1.0 - std::exp(-h / tau)) * (s.w(k) - lagged(k - 1));
  }
  std::vector<JumpMeasure> jumps = MeasureJumps(s.times, s.w, s.velocities, lagged, 0.5, 0.1, 1);
  ASSERT_EQ(jumps.size(), 2u);
  EXPECT_NEAR(jumps[0].lag50_s, tau * std::log(2.0), h);
  EXPECT_NEAR(jumps[0].lag90_s, tau * std::log(10.0), h);
  // An estimate that goes 0.3 N beyond the new level, then settles.
  Eigen::VectorXd overshooting = s.w;
  for (int k = 505; k < 520; ++k) overshooting(k) = -2.3;
  jumps = MeasureJumps(s.times, s.w, s.velocities, overshooting, 0.5, 0.1, 1);
  EXPECT_NEAR(jumps[0].overshoot_n, 0.3, 1e-12);
  EXPECT_DOUBLE_EQ(jumps[0].lag50_s, 0.0);
  // An estimate that never moves: lags not reached (NaN), counted in the summary.
  const Eigen::VectorXd frozen = Eigen::VectorXd::Constant(s.w.size(), 2.0);
  jumps = MeasureJumps(s.times, s.w, s.velocities, frozen, 0.5, 0.1, 1);
  EXPECT_TRUE(std::isnan(jumps[0].lag50_s));
  EXPECT_TRUE(std::isnan(jumps[0].lag90_s));
  const JumpSummary summary = SummarizeJumps(jumps);
  EXPECT_EQ(summary.lag90_not_reached, 1);  // the second jump returns to +2 N: lag 0
  EXPECT_DOUBLE_EQ(summary.median_lag90_s, 0.0);
}

TEST(FrictionFilterJumpsTest, QuantilesIgnoreNan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_DOUBLE_EQ(Median({3.0, 1.0, nan, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(Quantile({1.0, 2.0, 3.0, 4.0, 5.0}, 0.25), 2.0);
  EXPECT_DOUBLE_EQ(Quantile({1.0, 2.0}, 0.5), 1.5);
  EXPECT_TRUE(std::isnan(Median({nan})));
}

}  // namespace
}  // namespace dynid::friction_filter_study
