#include "dynid/solvers/irw_smoother.h"

#include <cmath>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dynid/solvers/internal/banded.h"
#include "dynid/solvers/irw_least_squares.h"

namespace dynid::solvers {
namespace {

using ::testing::HasSubstr;

// y = IRW trajectory (integrated `order` times from white noise of variance nvr) + unit noise.
Eigen::VectorXd SimulateIrw(int n, IrwModel model, double nvr, unsigned seed,
                            double noise_std = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int nx = IrwStateSize(model);
  Eigen::VectorXd state = Eigen::VectorXd::Zero(nx);
  Eigen::VectorXd y(n);
  for (int k = 0; k < n; ++k) {
    y[k] = state[0] + noise_std * normal(rng);
    for (int r = 0; r + 1 < nx; ++r) state[r] += state[r + 1];
    state[nx - 1] += std::sqrt(nvr) * noise_std * normal(rng);
  }
  return y;
}

double RelativeDifference(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a - b).norm() / b.norm();
}

class IrwModelsTest : public ::testing::TestWithParam<IrwModel> {};

// The three solutions (KF/FIS recursion, direct banded solve, Ceres) agree on N = 1e5.
TEST_P(IrwModelsTest, RecursionBandedAndCeresAgreeOnLongRecord) {
  const IrwModel model = GetParam();
  // A bounded smooth signal: a simulated IRW drifts to |x| ~ 1e12 over 1e5 samples, where
  // differencing smoothed positions (banded and Ceres paths) loses the derivatives to rounding.
  // The normal matrix has condition ~20/NVR; at NVR = 1e-3 the banded solve keeps ~1e-12,
  // and second increments of ~1e-3 keep enough digits after differencing positions.
  const double nvr = 1e-3;
  const int n = 100000;
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0.0, 0.01);
  Eigen::VectorXd y(n);
  for (int k = 0; k < n; ++k) {
    y[k] = std::sin(2e-2 * k) + 0.5 * std::cos(7.1e-2 * k + 0.3) + normal(rng);
  }
  IrwSmootherOptions options;
  options.model = model;
  options.nvr = nvr;
  options.compute_standard_deviations = false;
  IrwSmootherResult recursive;
  std::string error;
  ASSERT_TRUE(SmoothIrw(y, 1.0, options, &recursive, &error)) << error;
  Eigen::MatrixXd banded;
  ASSERT_TRUE(SmoothIrwBanded(y, model, nvr, &banded, &error)) << error;
  Eigen::MatrixXd ceres;
  IrwCeresSummary summary;
  ASSERT_TRUE(SmoothIrwCeres(y, model, nvr, &ceres, &summary, &error)) << error;
  const int nx = IrwStateSize(model);
  for (int c = 0; c < nx; ++c) {
    const Eigen::VectorXd state = recursive.states.row(c).transpose();
    EXPECT_LT(RelativeDifference(banded.col(c), state), 1e-9) << "state " << c;
    EXPECT_LT(RelativeDifference(ceres.col(c), state), 1e-9) << "state " << c;
  }
}

// Standard deviations of position, centred velocity and acceleration equal those from the
// band of (I + D^T D / NVR)^{-1}, the posterior covariance of the positions (sigma^2 = 1).
TEST_P(IrwModelsTest, StandardDeviationsMatchSelectedInverse) {
  const IrwModel model = GetParam();
  const int nx = IrwStateSize(model);
  const int n = 400;
  const double nvr = 0.05;
  const Eigen::VectorXd y = SimulateIrw(n, model, nvr, 3);
  IrwSmootherOptions options;
  options.model = model;
  options.nvr = nvr;
  IrwSmootherResult result;
  std::string error;
  ASSERT_TRUE(SmoothIrw(y, 1.0, options, &result, &error)) << error;
  std::vector<double> stencil = nx == 2 ? std::vector<double>{1, -2, 1}
                                        : std::vector<double>{-1, 3, -3, 1};
  BandedSpdMatrix normal(n, nx);
  for (int k = 0; k < n; ++k) normal.At(k, k) = 1.0;
  for (int r = 0; r + nx < n; ++r)
    for (int i = 0; i <= nx; ++i)
      for (int j = 0; j <= i; ++j) normal.At(r + i, r + j) += stencil[i] * stencil[j] / nvr;
  BandedCholesky cholesky;
  ASSERT_TRUE(cholesky.Factorize(normal));
  const BandedSpdMatrix z = cholesky.InverseBand();
  const double s2 = result.sigma2;
  for (int k = 0; k < n; ++k) {
    EXPECT_NEAR(result.position_std[k], std::sqrt(s2 * z(k, k)), 1e-9) << k;
  }
  for (int k = 1; k + 1 < n; ++k) {
    const double velocity_var = 0.25 * (z(k + 1, k + 1) + z(k - 1, k - 1) - 2 * z(k + 1, k - 1));
    const double acceleration_var = z(k + 1, k + 1) + 4 * z(k, k) + z(k - 1, k - 1) -
                                    4 * z(k + 1, k) - 4 * z(k, k - 1) + 2 * z(k + 1, k - 1);
    EXPECT_NEAR(result.velocity_std[k], std::sqrt(s2 * velocity_var), 1e-9) << k;
    EXPECT_NEAR(result.acceleration_std[k], std::sqrt(s2 * acceleration_var), 1e-9) << k;
  }
}

// The hat-matrix trace (GCV's degrees of freedom), computed with the constant middle of long
// records in closed form, equals the trace of (I + D^T D / NVR)^{-1} from the selected inverse.
TEST_P(IrwModelsTest, HatMatrixTraceMatchesSelectedInverse) {
  const IrwModel model = GetParam();
  const int nx = IrwStateSize(model);
  const int n = 3000;
  std::vector<double> stencil = nx == 2 ? std::vector<double>{1, -2, 1}
                                        : std::vector<double>{-1, 3, -3, 1};
  for (double nvr : {1e-6, 1e-2, 10.0}) {
    BandedSpdMatrix normal(n, nx);
    for (int k = 0; k < n; ++k) normal.At(k, k) = 1.0;
    for (int r = 0; r + nx < n; ++r)
      for (int i = 0; i <= nx; ++i)
        for (int j = 0; j <= i; ++j) normal.At(r + i, r + j) += stencil[i] * stencil[j] / nvr;
    BandedCholesky cholesky;
    ASSERT_TRUE(cholesky.Factorize(normal));
    const BandedSpdMatrix z = cholesky.InverseBand();
    double trace = 0.0;
    for (int k = 0; k < n; ++k) trace += z(k, k);
    EXPECT_NEAR(IrwHatMatrixTrace(model, nvr, n), trace, 1e-8 * trace) << "nvr " << nvr;
  }
}

// Polynomials in the model's null space pass unchanged, and the derivatives are centred:
// IRWSM1 keeps straight lines, IRWSM2 parabolas, at every sample including both ends.
TEST(IrwSmootherTest, NullSpacePolynomialsAndCentredDerivatives) {
  const int n = 50;
  const double ts = 0.01;
  Eigen::VectorXd t = Eigen::VectorXd::LinSpaced(n, 0.0, (n - 1) * ts);
  IrwSmootherOptions options;
  options.nvr = 1e-4;
  IrwSmootherResult result;
  std::string error;
  // A tiny deterministic perturbation keeps sigma^2 > 0.
  Eigen::VectorXd wiggle(n);
  for (int k = 0; k < n; ++k) wiggle[k] = 1e-12 * ((k * 7919) % 13 - 6);

  options.model = IrwModel::kIrw1;
  const Eigen::VectorXd line = 0.3 + 2.0 * t.array();
  ASSERT_TRUE(SmoothIrw(line + wiggle, ts, options, &result, &error)) << error;
  EXPECT_LT((result.position - line).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((result.velocity.array() - 2.0).abs().maxCoeff(), 1e-8);

  options.model = IrwModel::kIrw2;
  const Eigen::VectorXd parabola = 1.5 * t.array().square();
  ASSERT_TRUE(SmoothIrw(parabola + wiggle, ts, options, &result, &error)) << error;
  EXPECT_LT((result.position - parabola).cwiseAbs().maxCoeff(), 1e-10);
  EXPECT_LT((result.velocity - 3.0 * t).cwiseAbs().maxCoeff(), 1e-7);  // centred, not 3t + 1.5ts
  EXPECT_LT((result.acceleration.array() - 3.0).abs().maxCoeff(), 1e-5);
}

TEST(IrwSmootherTest, RejectsBadInput) {
  IrwSmootherOptions options;
  IrwSmootherResult result;
  std::string error;
  Eigen::VectorXd y = Eigen::VectorXd::LinSpaced(10, 0, 1);
  options.nvr = -1.0;
  EXPECT_FALSE(SmoothIrw(y, 0.1, options, &result, &error));
  EXPECT_THAT(error, HasSubstr("nvr must be a positive"));
  options.nvr = 1.0;
  EXPECT_FALSE(SmoothIrw(y, 0.0, options, &result, &error));
  EXPECT_THAT(error, HasSubstr("sample period"));
  EXPECT_FALSE(SmoothIrw(y.head(3), 0.1, options, &result, &error));
  EXPECT_THAT(error, HasSubstr("at least 4 samples"));
  y[4] = std::nan("");
  EXPECT_FALSE(SmoothIrw(y, 0.1, options, &result, &error));
  EXPECT_THAT(error, HasSubstr("NaN"));
}

TEST(IrwSmootherTest, ColumnsInParallelEqualOneByOne) {
  Eigen::MatrixXd columns(3000, 3);
  for (int c = 0; c < 3; ++c) columns.col(c) = SimulateIrw(3000, IrwModel::kIrw1, 1e-3, 20 + c);
  std::vector<IrwSmootherOptions> options(3);
  options[1].model = IrwModel::kIrw2;
  options[2].nvr = 0.7;
  std::vector<IrwSmootherResult> results;
  std::string error;
  ASSERT_TRUE(SmoothIrwColumns(columns, 0.002, options, &results, &error, 2)) << error;
  for (int c = 0; c < 3; ++c) {
    IrwSmootherResult single;
    ASSERT_TRUE(SmoothIrw(columns.col(c), 0.002, options[c], &single, &error)) << error;
    EXPECT_EQ(results[c].velocity, single.velocity);
    EXPECT_EQ(results[c].acceleration_std, single.acceleration_std);
  }
  options[2].nvr = 0.0;
  EXPECT_FALSE(SmoothIrwColumns(columns, 0.002, options, &results, &error, 2));
  EXPECT_THAT(error, HasSubstr("column 3"));
}

INSTANTIATE_TEST_SUITE_P(Models, IrwModelsTest,
                         ::testing::Values(IrwModel::kIrw1, IrwModel::kIrw2),
                         [](const auto& info) { return std::string(IrwModelName(info.param)); });

}  // namespace
}  // namespace dynid::solvers
