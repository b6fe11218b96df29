#include "dynid/solvers/nvr_fit.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace dynid::solvers {
namespace {

Eigen::VectorXd SimulateIrw(int n, IrwModel model, double nvr, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int nx = IrwStateSize(model);
  Eigen::VectorXd state = Eigen::VectorXd::Zero(nx);
  Eigen::VectorXd y(n);
  for (int k = 0; k < n; ++k) {
    y[k] = state[0] + normal(rng);
    for (int r = 0; r + 1 < nx; ++r) state[r] += state[r + 1];
    state[nx - 1] += std::sqrt(nvr) * normal(rng);
  }
  return y;
}

// The exact diffuse filter likelihood equals the likelihood of the n_x-th differences.
TEST(NvrFitTest, FilterLikelihoodEqualsBandedDifferenceLikelihood) {
  for (IrwModel model : {IrwModel::kIrw1, IrwModel::kIrw2}) {
    const Eigen::VectorXd y = SimulateIrw(5000, model, 1e-3, 5);
    // Below ~1e-8 the banded form's quadratic term loses digits (condition ~20/NVR).
    for (double nvr : {1e-8, 1e-6, 1e-3, 1.0, 1e3}) {
      const double filter = IrwLogLikelihood(y, model, nvr);
      const double banded = IrwLogLikelihoodBanded(y, model, nvr);
      EXPECT_NEAR(filter, banded, 1e-7 * std::abs(banded))
          << IrwModelName(model) << " nvr " << nvr;
    }
  }
}

// Median ML estimate over 20 seeds within 10 % of the truth (20 % for 1e-6), N = 1e4.
class NvrConsistencyTest : public ::testing::TestWithParam<std::tuple<IrwModel, double>> {};

TEST_P(NvrConsistencyTest, MedianMaximumLikelihoodEstimateIsConsistent) {
  const auto [model, nvr] = GetParam();
  std::vector<double> estimates;
  for (unsigned seed = 0; seed < 20; ++seed) {
    const Eigen::VectorXd y = SimulateIrw(10000, model, nvr, 1000 + seed);
    NvrFitSummary summary;
    std::string error;
    ASSERT_TRUE(FitNvrMaximumLikelihood(y, model, &summary, &error)) << error;
    EXPECT_FALSE(summary.at_bound) << summary.message;
    estimates.push_back(summary.nvr);
  }
  std::nth_element(estimates.begin(), estimates.begin() + 10, estimates.end());
  const double median = estimates[10];
  const double tolerance = nvr < 1e-5 ? 0.2 : 0.1;
  EXPECT_NEAR(median / nvr, 1.0, tolerance) << "median " << median;
}

INSTANTIATE_TEST_SUITE_P(
    TrueNvr, NvrConsistencyTest,
    ::testing::Combine(::testing::Values(IrwModel::kIrw1, IrwModel::kIrw2),
                       ::testing::Values(1e-6, 1e-3, 1.0)));

TEST(NvrFitTest, GcvChoosesTheRightOrderOfMagnitude) {
  const Eigen::VectorXd y = SimulateIrw(4000, IrwModel::kIrw1, 1e-2, 9);
  NvrFitOptions options;
  options.criterion = NvrCriterion::kGcv;
  NvrFitSummary summary;
  std::string error;
  ASSERT_TRUE(FitNvr(y, options, &summary, &error)) << error;
  EXPECT_NEAR(summary.log10_nvr, -2.0, 0.5) << summary.message;
  EXPECT_LT(summary.log_likelihood, IrwLogLikelihood(y, IrwModel::kIrw1, 1e-2) + 20.0);
}

TEST(NvrFitTest, GcvScoreIsMinimalNearTheFittedValue) {
  const Eigen::VectorXd y = SimulateIrw(2000, IrwModel::kIrw2, 1e-3, 4);
  NvrFitOptions options;
  options.model = IrwModel::kIrw2;
  options.criterion = NvrCriterion::kGcv;
  NvrFitSummary summary;
  std::string error;
  ASSERT_TRUE(FitNvr(y, options, &summary, &error)) << error;
  const double gamma = options.gcv_gamma;
  const double at_optimum = IrwGcvScore(y, IrwModel::kIrw2, summary.nvr, gamma);
  EXPECT_NEAR(at_optimum, summary.criterion_value, 1e-12 * at_optimum);
  EXPECT_GT(IrwGcvScore(y, IrwModel::kIrw2, summary.nvr * 3, gamma), at_optimum);
  EXPECT_GT(IrwGcvScore(y, IrwModel::kIrw2, summary.nvr / 3, gamma), at_optimum);
  // A larger gamma smooths more.
  options.gcv_gamma = 1.0;
  NvrFitSummary classical;
  ASSERT_TRUE(FitNvr(y, options, &classical, &error)) << error;
  EXPECT_GT(classical.nvr, summary.nvr);
}

TEST(NvrFitTest, TrackingErrorApproximation) {
  // A random walk tracking error with increments of std 2 units of a resolution 0.5:
  // NVR1 = (2 / 0.5)^2 = 16.
  std::mt19937_64 rng(2);
  std::normal_distribution<double> normal(0.0, 2.0);
  Eigen::VectorXd error(200001);
  error[0] = 0.0;
  for (int k = 1; k < error.size(); ++k) error[k] = error[k - 1] + normal(rng);
  EXPECT_NEAR(NvrFromTrackingError(error, 0.5, IrwModel::kIrw1), 16.0, 0.2);
  // Second differences of a random walk: increments are white, their difference has
  // variance 2 * 4 = 8 -> NVR2 = 32.
  EXPECT_NEAR(NvrFromTrackingError(error, 0.5, IrwModel::kIrw2), 32.0, 0.4);
}

TEST(NvrFitTest, RejectsBadOptionsAndData) {
  NvrFitOptions options;
  options.log10_nvr_min = 2.0;
  options.log10_nvr_max = 1.0;
  NvrFitSummary summary;
  std::string error;
  EXPECT_FALSE(FitNvr(Eigen::VectorXd::Ones(100), options, &summary, &error));
  EXPECT_THAT(error, ::testing::HasSubstr("log10_nvr_min < log10_nvr_max"));
  EXPECT_FALSE(FitNvr(Eigen::VectorXd::Ones(4), NvrFitOptions(), &summary, &error));
  EXPECT_THAT(error, ::testing::HasSubstr("at least 5 samples"));
}

// The columns call is the per-column fit followed by the smoother with the fitted NVR.
TEST(NvrFitTest, SmoothColumnsWithFittedNvrEqualsFitThenSmooth) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal(0.0, 1e-3);
  const int n = 2000;
  Eigen::MatrixXd columns(n, 2);
  for (int k = 0; k < n; ++k) {
    const double t = 0.01 * k;
    columns(k, 0) = std::sin(t) + normal(rng);
    columns(k, 1) = 0.3 * t * t + normal(rng);
  }
  NvrFitOptions fit_options;
  fit_options.model = IrwModel::kIrw2;
  std::vector<NvrFitSummary> fits;
  std::vector<IrwSmootherResult> results;
  std::string error;
  ASSERT_TRUE(SmoothColumnsWithFittedNvr(columns, 0.01, fit_options, true, {}, &fits, &results,
                                         &error, 2))
      << error;
  ASSERT_EQ(fits.size(), 2u);
  ASSERT_EQ(results.size(), 2u);
  for (int c = 0; c < 2; ++c) {
    NvrFitSummary fit;
    ASSERT_TRUE(FitNvr(columns.col(c), fit_options, &fit, &error)) << error;
    EXPECT_EQ(fits[c].nvr, fit.nvr);
    IrwSmootherOptions options;
    options.model = IrwModel::kIrw2;
    options.nvr = fit.nvr;
    IrwSmootherResult single;
    ASSERT_TRUE(SmoothIrw(columns.col(c), 0.01, options, &single, &error)) << error;
    EXPECT_EQ((results[c].acceleration - single.acceleration).cwiseAbs().maxCoeff(), 0.0);
    EXPECT_EQ((results[c].velocity_std - single.velocity_std).cwiseAbs().maxCoeff(), 0.0);
  }
  // A failing fit names its column.
  Eigen::MatrixXd short_columns = Eigen::MatrixXd::Ones(4, 2);
  EXPECT_FALSE(SmoothColumnsWithFittedNvr(short_columns, 0.01, fit_options, false, {"q1", "q2"},
                                          &fits, &results, &error));
  EXPECT_THAT(error, ::testing::HasSubstr("NVR fit of q1"));
}

}  // namespace
}  // namespace dynid::solvers
