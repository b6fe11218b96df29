#include "dynid/solvers/linear_least_squares.h"

#include <ceres/cost_function.h>
#include <ceres/gradient_checker.h>
#include <ceres/manifold.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <vector>

namespace dynid::solvers {
namespace {

using ::testing::HasSubstr;

// A stacked 3-joint problem (joint-major, N_s samples) with 5 columns of mixed scale, like
// inertia / friction regressors, and noise of a different level per joint.
struct Problem {
  Eigen::MatrixXd X;
  Eigen::VectorXd y;
  Eigen::VectorXd theta;
  RowBlocks blocks;
};

Problem MakeProblem(int num_samples, const Eigen::Vector3d& noise_sigma, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int joints = 3, b = 5;
  Problem p;
  p.X.resize(joints * num_samples, b);
  for (int j = 0; j < joints; ++j) {
    for (int k = 0; k < num_samples; ++k) {
      const double t = 0.01 * k;
      const int row = j * num_samples + k;
      p.X(row, 0) = 10.0 * std::sin(1.3 * t + j);             // acceleration-like
      p.X(row, 1) = std::cos(0.7 * t) * (j + 1);              // velocity-like
      p.X(row, 2) = std::tanh(5.0 * std::sin(0.9 * t + j));   // sign-like
      p.X(row, 3) = j == 0 ? 0.0 : 9.81 * std::cos(0.4 * t);  // gravity, absent on joint 0
      p.X(row, 4) = 0.1 * normal(rng) + (j == 2 ? 1.0 : 0.0);
    }
  }
  p.theta.resize(b);
  p.theta << 1.2, -0.4, 7.0, 0.03, 2.5;
  p.y = p.X * p.theta;
  for (int j = 0; j < joints; ++j) {
    for (int k = 0; k < num_samples; ++k) p.y(j * num_samples + k) += noise_sigma(j) * normal(rng);
  }
  p.blocks = RowBlocks::Stacked(data::StackOrder::kJointMajor, joints, num_samples);
  return p;
}

LinearLeastSquaresOptions OptionsFor(const Problem& p) {
  LinearLeastSquaresOptions options;
  options.row_blocks = p.blocks;
  options.column_names = {"zz1r", "fv1", "fc1", "mx2r", "ia3"};
  return options;
}

double Relative(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a - b).norm() / b.norm();
}

TEST(LinearLeastSquaresTest, MatchesNormalEquationsAndItsDiagnostics) {
  const Problem p = MakeProblem(400, Eigen::Vector3d(0.05, 0.05, 0.05), 1);
  const LinearLeastSquaresSummary s = SolveLeastSquares(p.X, p.y, OptionsFor(p));
  ASSERT_TRUE(s.success) << s.message;
  EXPECT_EQ(s.rank, 5);
  // Independent reference: normal equations by Cholesky and an explicit inverse.
  const Eigen::MatrixXd normal = p.X.transpose() * p.X;
  const Eigen::VectorXd theta = normal.llt().solve(p.X.transpose() * p.y);
  EXPECT_LT(Relative(s.theta, theta), 1e-10);
  const Eigen::VectorXd r = p.y - p.X * theta;
  const double sigma2 = r.squaredNorm() / (p.X.rows() - 5);
  EXPECT_NEAR(s.sigma2, sigma2, 1e-10 * sigma2);
  EXPECT_LT(Relative(s.covariance, sigma2 * normal.inverse()), 1e-9);
  EXPECT_NEAR(s.relative_error, r.norm() / p.y.norm(), 1e-12);
  for (int k = 0; k < 5; ++k) {
    EXPECT_NEAR(s.relative_std_percent(k),
                100.0 * std::sqrt(s.covariance(k, k)) / std::abs(s.theta(k)), 1e-9);
  }
  for (int j = 0; j < 3; ++j) {
    EXPECT_NEAR(s.block_rms(j), std::sqrt(r.segment(400 * j, 400).squaredNorm() / 400), 1e-12);
  }
  const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(p.X).singularValues();
  EXPECT_NEAR(s.condition_number, sv(0) / sv(4), 1e-8 * sv(0) / sv(4));
  // The estimate is within 4 sigma of the truth (noise 0.05).
  for (int k = 0; k < 5; ++k) {
    EXPECT_NEAR(s.theta(k), p.theta(k), 4.0 * s.standard_deviation(k)) << k;
  }
  EXPECT_THAT(s.Report(OptionsFor(p).column_names), HasSubstr("fc1"));
}

TEST(LinearLeastSquaresTest, RankDeficiencyIsReportedWithTheDependentColumn) {
  Problem p = MakeProblem(200, Eigen::Vector3d(0.05, 0.05, 0.05), 2);
  Eigen::MatrixXd X(p.X.rows(), 6);
  X << p.X, 2.0 * p.X.col(0) - 0.5 * p.X.col(2);
  LinearLeastSquaresOptions options = OptionsFor(p);
  options.column_names.push_back("combo");
  const LinearLeastSquaresSummary s = SolveLeastSquares(X, p.y, options);
  EXPECT_FALSE(s.success);
  EXPECT_EQ(s.rank, 5);
  ASSERT_EQ(s.dependent_columns.size(), 1u);
  EXPECT_THAT(s.message, HasSubstr("rank-deficient: rank 5 of 6"));
  const std::string dependent = options.column_names[s.dependent_columns[0]];
  EXPECT_THAT(s.message, HasSubstr(dependent));
  EXPECT_THAT(s.dependence_report, HasSubstr(dependent + " ="));
  // The basic solution still fits: same residual as the full-rank problem.
  const LinearLeastSquaresSummary full = SolveLeastSquares(p.X, p.y, OptionsFor(p));
  EXPECT_NEAR(s.residual_norm, full.residual_norm, 1e-9 * full.residual_norm);
  EXPECT_TRUE(std::isnan(s.covariance(s.dependent_columns[0], s.dependent_columns[0])));
  // The Ceres path refuses it too (ceres::Covariance on a singular Jacobian).
  EXPECT_FALSE(SolveLeastSquaresCeres(X, p.y, options).success);
}

// More than 8192 rows: the pivoted QR runs on the triangular factor of a blockwise (tall-skinny)
// QR rather than on a copy of X. Same estimate, covariance, condition number and, for a
// dependent column, the same rank and dependent column as the pivoted QR of X itself.
TEST(LinearLeastSquaresTest, TallSystemsReducedBlockwiseMatchThePivotedQrOfX) {
  const Problem p = MakeProblem(4000, Eigen::Vector3d(0.05, 0.1, 0.02), 3);
  ASSERT_GT(p.X.rows(), 8192);
  const LinearLeastSquaresSummary s = SolveLeastSquares(p.X, p.y, OptionsFor(p));
  ASSERT_TRUE(s.success) << s.message;
  const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(p.X);
  EXPECT_LT(Relative(s.theta, qr.solve(p.y)), 1e-12);
  const Eigen::MatrixXd normal = p.X.transpose() * p.X;
  EXPECT_LT(Relative(s.covariance, s.sigma2 * normal.inverse()), 1e-9);
  const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXd>(p.X).singularValues();
  EXPECT_NEAR(s.condition_number, sv(0) / sv(4), 1e-9 * sv(0) / sv(4));

  Eigen::MatrixXd X(p.X.rows(), 6);
  X << p.X, 2.0 * p.X.col(0) - 0.5 * p.X.col(2);
  LinearLeastSquaresOptions options = OptionsFor(p);
  options.column_names.push_back("combo");
  const LinearLeastSquaresSummary deficient = SolveLeastSquares(X, p.y, options);
  EXPECT_FALSE(deficient.success);
  EXPECT_EQ(deficient.rank, 5);
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> direct;
  direct.setThreshold(options.rank_tolerance);
  direct.compute(X);
  ASSERT_EQ(direct.rank(), 5);
  ASSERT_EQ(deficient.dependent_columns.size(), 1u);
  EXPECT_EQ(deficient.dependent_columns[0], direct.colsPermutation().indices()(5));
  EXPECT_NEAR(deficient.residual_norm, s.residual_norm, 1e-9 * s.residual_norm);
}

TEST(LinearLeastSquaresTest, BadInputIsReportedNotCrashed) {
  const Problem p = MakeProblem(20, Eigen::Vector3d(0.05, 0.05, 0.05), 3);
  LinearLeastSquaresOptions options = OptionsFor(p);
  EXPECT_THAT(SolveLeastSquares(p.X.topRows(4), p.y.head(4), LinearLeastSquaresOptions()).message,
              HasSubstr("needs more rows than parameters: 4 rows for 5"));
  Eigen::VectorXd y = p.y;
  y(3) = NAN;
  EXPECT_THAT(SolveLeastSquares(p.X, y, options).message, HasSubstr("NaN"));
  options.rank_tolerance = -1.0;
  EXPECT_THAT(SolveLeastSquares(p.X, p.y, options).message, HasSubstr("rank_tolerance"));
  options = OptionsFor(p);
  options.row_blocks.block_of_row.pop_back();
  EXPECT_THAT(SolveLeastSquares(p.X, p.y, options).message, HasSubstr("block_of_row has 59"));
}

TEST(LinearLeastSquaresTest, CeresPathAgreesWithQr) {
  const Problem p = MakeProblem(500, Eigen::Vector3d(0.1, 0.3, 0.05), 4);
  const LinearLeastSquaresOptions options = OptionsFor(p);
  const LinearLeastSquaresSummary qr = SolveLeastSquares(p.X, p.y, options);
  ASSERT_TRUE(qr.success);
  for (bool dense_qr : {true, false}) {
    LinearLeastSquaresOptions ceres_options = options;
    ceres_options.ceres_dense_qr = dense_qr;
    ceres_options.ceres_rows_per_residual_block = dense_qr ? 64 : 7;
    const LinearLeastSquaresSummary ceres = SolveLeastSquaresCeres(p.X, p.y, ceres_options);
    ASSERT_TRUE(ceres.success) << ceres.message;
    EXPECT_LT(Relative(ceres.theta, qr.theta), 1e-9) << ceres.method;
    EXPECT_LT(Relative(ceres.covariance, qr.covariance), 1e-9) << ceres.method;
    EXPECT_NEAR(ceres.relative_error, qr.relative_error, 1e-12);
    EXPECT_NEAR(ceres.condition_number, qr.condition_number, 1e-8 * qr.condition_number);
    EXPECT_LE(ceres.iterations, 5);
  }
  LinearLeastSquaresOptions sparse = options;
  sparse.ceres_covariance_dense_svd = false;  // SPARSE_QR covariance (SuiteSparse)
  const LinearLeastSquaresSummary ceres = SolveLeastSquaresCeres(p.X, p.y, sparse);
  ASSERT_TRUE(ceres.success) << ceres.message;
  EXPECT_LT(Relative(ceres.covariance, qr.covariance), 1e-9);
}

TEST(LinearLeastSquaresTest, RowsCostJacobianPassesGradientChecker) {
#ifdef DYNID_NATIVE_BUILD
  GTEST_SKIP() << "-DDYNID_NATIVE=ON: the GradientChecker's results are allocated inside Ceres "
                  "(plain malloc) and would be freed here by Eigen's AVX allocator";
#endif
  const Problem p = MakeProblem(4, Eigen::Vector3d(0.1, 0.1, 0.1), 9);
  std::unique_ptr<ceres::CostFunction> cost(NewLinearRowsCost(p.X, p.y));
  ASSERT_EQ(cost->num_residuals(), 12);
  const Eigen::VectorXd theta = p.theta + Eigen::VectorXd::Constant(5, 0.3);
  const double* parameters[] = {theta.data()};
  ceres::NumericDiffOptions numeric_diff_options;
  const std::vector<const ceres::Manifold*>* no_manifolds = nullptr;
  ceres::GradientChecker checker(cost.get(), no_manifolds, numeric_diff_options);
  ceres::GradientChecker::ProbeResults results;
  EXPECT_TRUE(checker.Probe(parameters, 1e-7, &results)) << results.error_log;
  Eigen::VectorXd residual(12);
  ASSERT_TRUE(cost->Evaluate(parameters, residual.data(), nullptr));
  EXPECT_LT((residual - (p.X * theta - p.y)).norm(), 1e-12);
}

TEST(WeightedLeastSquaresTest, EstimatesPerJointSigmaAndEqualsExplicitRowScaling) {
  const Eigen::Vector3d sigma(0.05, 1.0, 0.2);
  const Problem p = MakeProblem(2000, sigma, 5);
  for (BlockSigmaEstimate estimate :
       {BlockSigmaEstimate::kBlockSubsystem, BlockSigmaEstimate::kGlobalResidual}) {
    LinearLeastSquaresOptions options = OptionsFor(p);
    options.block_sigma_estimate = estimate;
    const LinearLeastSquaresSummary w = SolveWeightedLeastSquares(p.X, p.y, options);
    ASSERT_TRUE(w.success) << w.message;
    ASSERT_EQ(w.block_sigma.size(), 3);
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(w.block_sigma(j), sigma(j), 0.06 * sigma(j)) << j;
    // Same as an ordinary LS on rows divided by the reported sigma_j.
    Eigen::MatrixXd Xs = p.X;
    Eigen::VectorXd ys = p.y;
    for (Eigen::Index i = 0; i < Xs.rows(); ++i) {
      Xs.row(i) /= w.block_sigma(p.blocks.BlockOf(i));
      ys(i) /= w.block_sigma(p.blocks.BlockOf(i));
    }
    const LinearLeastSquaresSummary scaled = SolveLeastSquares(Xs, ys, LinearLeastSquaresOptions());
    EXPECT_LT(Relative(w.theta, scaled.theta), 1e-12);
    EXPECT_LT(Relative(w.covariance, scaled.covariance), 1e-12);
    EXPECT_NEAR(w.sigma2, 1.0, 0.1);  // weighted residuals have unit variance
    // Residual diagnostics are unweighted.
    EXPECT_NEAR(w.relative_error, (p.y - p.X * w.theta).norm() / p.y.norm(), 1e-12);
  }
  // Weighting helps: the noisy joint no longer dominates, so WLS's σ of zz1r is smaller.
  const LinearLeastSquaresSummary ls = SolveLeastSquares(p.X, p.y, OptionsFor(p));
  const LinearLeastSquaresSummary wls = SolveWeightedLeastSquares(p.X, p.y, OptionsFor(p));
  EXPECT_LT(wls.standard_deviation(0), 0.7 * ls.standard_deviation(0));
}

// X handed over in pieces of 700 rows (pieces that straddle joints), last piece first.
RowSource PiecesOf(const Eigen::MatrixXd& X) {
  return [&X](const RowPieceConsumer& consume, std::string*) {
    constexpr Eigen::Index kPiece = 700;
    for (Eigen::Index start = (X.rows() - 1) / kPiece * kPiece; start >= 0; start -= kPiece) {
      consume(start, X.middleRows(start, std::min(kPiece, X.rows() - start)));
    }
    return true;
  };
}

TEST(WeightedLeastSquaresTest, FromRowsEqualsTheHeldSolve) {
  // 9 000 rows: the held solve reduces X by its own tall-skinny QR in blocks of 4 096 rows;
  // column 3 is zero in joint 1's rows (its subsystem leaves it out).
  const Problem p = MakeProblem(3000, Eigen::Vector3d(0.05, 1.0, 0.2), 11);
  for (BlockSigmaEstimate estimate :
       {BlockSigmaEstimate::kBlockSubsystem, BlockSigmaEstimate::kGlobalResidual}) {
    LinearLeastSquaresOptions options = OptionsFor(p);
    options.block_sigma_estimate = estimate;
    const LinearLeastSquaresSummary held = SolveWeightedLeastSquares(p.X, p.y, options);
    const LinearLeastSquaresSummary rows =
        SolveWeightedLeastSquaresFromRows(PiecesOf(p.X), 5, p.y, options);
    ASSERT_TRUE(held.success && rows.success) << rows.message;
    EXPECT_EQ(rows.method, held.method);
    EXPECT_EQ(rows.rank, held.rank);
    EXPECT_LT(Relative(rows.block_sigma, held.block_sigma), 1e-13);
    EXPECT_LT(Relative(rows.theta, held.theta), 1e-12);
    EXPECT_LT(Relative(rows.standard_deviation, held.standard_deviation), 1e-12);
    EXPECT_LT(Relative(rows.covariance, held.covariance), 1e-12);
    EXPECT_LT(Relative(rows.residual, held.residual), 1e-12);
    EXPECT_LT(Relative(rows.block_rms, held.block_rms), 1e-12);
    EXPECT_NEAR(rows.sigma2, held.sigma2, 1e-12 * held.sigma2);
    EXPECT_NEAR(rows.condition_number, held.condition_number, 1e-10 * held.condition_number);
  }
  // Rows that cannot be formed: no estimate, the source's message.
  const LinearLeastSquaresSummary failed = SolveWeightedLeastSquaresFromRows(
      [](const RowPieceConsumer&, std::string* error) {
        *error = "states released";
        return false;
      },
      5, p.y, OptionsFor(p));
  EXPECT_FALSE(failed.success);
  EXPECT_EQ(failed.message, "X rows: states released");
}

TEST(InstrumentalVariablesTest, InstrumentsEqualToRegressorsReproduceLeastSquares) {
  Problem p = MakeProblem(300, Eigen::Vector3d(0.2, 0.2, 0.2), 6);
  LinearLeastSquaresOptions options;
  options.column_names = OptionsFor(p).column_names;  // one block
  const LinearLeastSquaresSummary ls = SolveLeastSquares(p.X, p.y, options);
  const LinearLeastSquaresSummary iv = SolveInstrumentalVariables(p.X, p.X, p.y, options);
  ASSERT_TRUE(iv.success) << iv.message;
  EXPECT_LT(Relative(iv.theta, ls.theta), 1e-10);
  EXPECT_LT(Relative(iv.covariance, ls.covariance), 1e-9);
  // With per-joint blocks eq. 8 weights rows by 1/Λ_jj: equals WLS with global-residual sigmas
  // evaluated at the same residuals (here the LS ones, since θ_IV = θ_LS).
  options.row_blocks = p.blocks;
  const LinearLeastSquaresSummary iv_blocks = SolveInstrumentalVariables(p.X, p.X, p.y, options);
  ASSERT_TRUE(iv_blocks.success);
  Eigen::MatrixXd Xw = p.X;
  for (Eigen::Index i = 0; i < Xw.rows(); ++i)
    Xw.row(i) /= iv_blocks.block_sigma(p.blocks.BlockOf(i));
  EXPECT_LT(Relative(iv_blocks.covariance, (Xw.transpose() * Xw).inverse()), 1e-9);
}

TEST(InstrumentalVariablesTest, FullErrorCovarianceUsesCrossJointCorrelation) {
  Problem p = MakeProblem(600, Eigen::Vector3d(0.2, 0.2, 0.2), 7);
  LinearLeastSquaresOptions options = OptionsFor(p);
  options.iv_full_error_covariance = true;
  const LinearLeastSquaresSummary iv = SolveInstrumentalVariables(p.X, p.X, p.y, options);
  ASSERT_TRUE(iv.success) << iv.message;
  ASSERT_EQ(iv.error_covariance.rows(), 3);
  // Independent noise: Λ is close to diagonal 0.04 I and P close to the diagonal-Λ result.
  EXPECT_NEAR(iv.error_covariance(0, 0), 0.04, 0.008);
  EXPECT_NEAR(iv.error_covariance(0, 1), 0.0, 0.008);
  options.iv_full_error_covariance = false;
  const LinearLeastSquaresSummary diagonal = SolveInstrumentalVariables(p.X, p.X, p.y, options);
  EXPECT_LT(Relative(iv.covariance, diagonal.covariance), 0.15);
  // Explicit Σ_i ζ_iᵀ Λ^{-1} ζ_i.
  const Eigen::MatrixXd lambda_inverse = iv.error_covariance.inverse();
  Eigen::MatrixXd information = Eigen::MatrixXd::Zero(5, 5);
  for (int k = 0; k < 600; ++k) {
    Eigen::MatrixXd zeta(3, 5);
    for (int j = 0; j < 3; ++j) zeta.row(j) = p.X.row(j * 600 + k);
    information += zeta.transpose() * lambda_inverse * zeta;
  }
  EXPECT_LT(Relative(iv.covariance, information.inverse()), 1e-9);
  // A sample missing one joint's row cannot give a full Λ.
  std::vector<int> rows;
  for (int i = 1; i < 1800; ++i) rows.push_back(i);
  options.iv_full_error_covariance = true;
  options.row_blocks = p.blocks.Subset(rows);
  Eigen::MatrixXd X = p.X.bottomRows(1799);
  const LinearLeastSquaresSummary incomplete =
      SolveInstrumentalVariables(X, X, p.y.tail(1799), options);
  EXPECT_FALSE(incomplete.success);
  EXPECT_THAT(incomplete.message, HasSubstr("sample 0 does not have exactly one row per block"));
}

TEST(InstrumentalVariablesTest, ConsistentWhereLeastSquaresIsBiasedByCorrelatedNoise) {
  // y = θ1 x + θ2 + e, the regressor measured as x + u with the equation error correlated with
  // u (as in closed loop): LS is biased, IV with the noise-free regressor is not, and eq. 8
  // predicts the IV spread.
  std::mt19937 rng(11);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int runs = 200, n = 400;
  const Eigen::Vector2d truth(2.0, 1.0);
  Eigen::VectorXd ls_theta1(runs), iv_theta1(runs), iv_predicted_std(runs);
  for (int run = 0; run < runs; ++run) {
    Eigen::MatrixXd X(n, 2), Z(n, 2);
    Eigen::VectorXd y(n);
    for (int k = 0; k < n; ++k) {
      const double x = std::sin(0.05 * k) + 0.5 * std::sin(0.013 * k);
      const double u = 0.5 * normal(rng);
      const double e = 0.3 * u + 0.1 * normal(rng);
      X.row(k) << x + u, 1.0;
      Z.row(k) << x, 1.0;
      y(k) = truth(0) * x + truth(1) + e;
    }
    const LinearLeastSquaresOptions options;
    ls_theta1(run) = SolveLeastSquares(X, y, options).theta(0);
    const LinearLeastSquaresSummary iv = SolveInstrumentalVariables(Z, X, y, options);
    ASSERT_TRUE(iv.success) << iv.message;
    iv_theta1(run) = iv.theta(0);
    iv_predicted_std(run) = iv.standard_deviation(0);
  }
  const double iv_mean = iv_theta1.mean();
  const double iv_spread = std::sqrt((iv_theta1.array() - iv_mean).square().sum() / (runs - 1));
  EXPECT_LT(ls_theta1.mean(), truth(0) - 0.3);  // attenuation bias, about −0.5 here
  EXPECT_NEAR(iv_mean, truth(0), 3.0 * iv_spread / std::sqrt(runs));
  EXPECT_NEAR(iv_predicted_std.mean(), iv_spread, 0.2 * iv_spread);
}

TEST(InstrumentalVariablesTest, RankDeficientInstrumentsAreReported) {
  const Problem p = MakeProblem(100, Eigen::Vector3d(0.1, 0.1, 0.1), 8);
  Eigen::MatrixXd Z = p.X;
  Z.col(1) = 3.0 * Z.col(0);
  const LinearLeastSquaresSummary iv = SolveInstrumentalVariables(Z, p.X, p.y, OptionsFor(p));
  EXPECT_FALSE(iv.success);
  EXPECT_THAT(iv.message, HasSubstr("instruments: rank-deficient: rank 4 of 5"));
}

// First-order system x_{k+1} = a x_k + b u_k (a = 0.9, b = 0.5) whose state is measured with
// noise: regressing the measured x_{k+1} on [x_k, u_k] is an errors-in-variables problem where
// LS is biased; the auxiliary model simulates x with the current (a, b) for the instruments.
struct FirstOrderData {
  Eigen::VectorXd u;
  Eigen::MatrixXd X;  // [x_m(k), u(k)], k = 0..N-2
  Eigen::VectorXd y;  // x_m(k+1)
};

FirstOrderData MakeFirstOrderData(unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int n = 3000;
  FirstOrderData d;
  d.u.resize(n);
  Eigen::VectorXd x(n), x_measured(n);
  x(0) = 0.0;
  for (int k = 0; k < n; ++k) {
    d.u(k) = (k / 15) % 3 == 0 ? -1.0 : 1.0 + 0.3 * std::sin(0.01 * k);
    if (k + 1 < n) x(k + 1) = 0.9 * x(k) + 0.5 * d.u(k);
    x_measured(k) = x(k) + 0.4 * normal(rng);
  }
  d.X.resize(n - 1, 2);
  d.X << x_measured.head(n - 1), d.u.head(n - 1);
  d.y = x_measured.tail(n - 1);
  return d;
}

InstrumentGenerator FirstOrderAuxiliaryModel(const Eigen::VectorXd& u) {
  return [u](const Eigen::VectorXd& theta, Eigen::MatrixXd* Z, Eigen::VectorXd* torque,
             std::string* error) {
    if (std::abs(theta(0)) >= 1.0) {
      *error = "unstable auxiliary model, a = " + std::to_string(theta(0));
      return false;
    }
    const Eigen::Index n = u.size();
    Eigen::VectorXd x(n);
    x(0) = 0.0;
    for (Eigen::Index k = 0; k + 1 < n; ++k) x(k + 1) = theta(0) * x(k) + theta(1) * u(k);
    Z->resize(n - 1, 2);
    *Z << x.head(n - 1), u.head(n - 1);
    *torque = x.tail(n - 1);
    return true;
  };
}

TEST(IvIterationTest, ConvergesToTheTruthWhereLeastSquaresIsBiased) {
  const FirstOrderData d = MakeFirstOrderData(13);
  const LinearLeastSquaresOptions options;
  const LinearLeastSquaresSummary ls = SolveLeastSquares(d.X, d.y, options);
  ASSERT_TRUE(ls.success);
  EXPECT_GT(std::abs(ls.theta(0) - 0.9), 5.0 * ls.standard_deviation(0));  // biased
  IvIterationOptions iteration;
  iteration.torque_tolerance = 1e-6;
  iteration.parameter_tolerance = 1e-6;
  const IvIterationSummary iv = IterateInstrumentalVariables(
      d.X, d.y, ls.theta, FirstOrderAuxiliaryModel(d.u), iteration, options);
  ASSERT_TRUE(iv.converged) << iv.message;
  EXPECT_LE(iv.iterations, 15);
  EXPECT_THAT(iv.message, HasSubstr("converged after"));
  EXPECT_EQ(iv.theta_history.size(), static_cast<size_t>(iv.iterations + 1));
  EXPECT_EQ(iv.torque_change.size(), static_cast<size_t>(iv.iterations));
  EXPECT_LE(iv.torque_change.back(), 1e-6);
  EXPECT_NEAR(iv.estimate.theta(0), 0.9, 3.0 * iv.estimate.standard_deviation(0));
  EXPECT_NEAR(iv.estimate.theta(1), 0.5, 3.0 * iv.estimate.standard_deviation(1));
}

TEST(IvIterationTest, TorquesFirstFormsInstrumentsOnlyForSolvesAndChangesNothing) {
  const FirstOrderData d = MakeFirstOrderData(13);
  const LinearLeastSquaresOptions options;
  const Eigen::Vector2d start(0.5, 0.1);
  // The first-order auxiliary model, counting the simulations that formed instruments; with a
  // null Z it returns the torques only.
  const InstrumentGenerator full = FirstOrderAuxiliaryModel(d.u);
  int with_instruments = 0, torques_only = 0;
  const InstrumentGenerator counting = [&](const Eigen::VectorXd& theta, Eigen::MatrixXd* z,
                                           Eigen::VectorXd* torque, std::string* error) {
    Eigen::MatrixXd unused;
    ++(z != nullptr ? with_instruments : torques_only);
    return full(theta, z != nullptr ? z : &unused, torque, error);
  };
  for (int cap : {20, 3}) {
    IvIterationOptions iteration;
    iteration.max_iterations = cap;
    iteration.torque_tolerance = 1e-8;
    iteration.parameter_tolerance = 1e-8;
    with_instruments = torques_only = 0;
    Eigen::MatrixXd z_default, z_first;
    auto solve = [&](const Eigen::MatrixXd& z) {
      return SolveInstrumentalVariables(z, d.X, d.y, options);
    };
    const IvIterationSummary reference =
        IterateInstrumentalVariables(d.X, start, counting, iteration, solve, &z_default);
    EXPECT_EQ(torques_only, 0);
    EXPECT_EQ(with_instruments, reference.iterations + 1);
    iteration.torques_first = true;
    with_instruments = torques_only = 0;
    const IvIterationSummary first =
        IterateInstrumentalVariables(d.X, start, counting, iteration, solve, &z_first);
    SCOPED_TRACE("cap " + std::to_string(cap));
    EXPECT_EQ(first.converged, cap == 20);
    EXPECT_EQ(first.converged, reference.converged);
    EXPECT_EQ(first.iterations, reference.iterations);
    EXPECT_EQ(first.message, reference.message);
    EXPECT_EQ(first.torque_change, reference.torque_change);
    EXPECT_EQ(first.parameter_change, reference.parameter_change);
    EXPECT_EQ(first.estimate.theta, reference.estimate.theta);
    // The instruments behind the last estimate, formed once per solve only.
    EXPECT_EQ(z_first, z_default);
    EXPECT_EQ(with_instruments, first.iterations);
    EXPECT_EQ(torques_only, first.iterations);
  }
}

// The stall test (IvIterationOptions::stall_iterations) leaves a contracting iteration alone and
// stops one whose changes level off where an independent reading of its full history says.
TEST(IvIterationTest, StallTestStopsALevelledIterationAndNoConvergingOne) {
  const FirstOrderData d = MakeFirstOrderData(13);
  const LinearLeastSquaresOptions options;
  const Eigen::Vector2d start(0.5, 0.1);
  IvIterationOptions iteration;
  iteration.torque_tolerance = 1e-8;
  iteration.parameter_tolerance = 1e-8;
  const IvIterationSummary plain = IterateInstrumentalVariables(
      d.X, d.y, start, FirstOrderAuxiliaryModel(d.u), iteration, options);
  ASSERT_TRUE(plain.converged) << plain.message;
  ASSERT_GE(plain.iterations, 4);
  for (int stall : {1, 2, 3}) {
    iteration.stall_iterations = stall;
    const IvIterationSummary with = IterateInstrumentalVariables(
        d.X, d.y, start, FirstOrderAuxiliaryModel(d.u), iteration, options);
    SCOPED_TRACE("stall " + std::to_string(stall));
    EXPECT_TRUE(with.converged);
    EXPECT_FALSE(with.stalled);
    EXPECT_EQ(with.message, plain.message);
    EXPECT_EQ(with.iterations, plain.iterations);
    EXPECT_EQ(with.estimate.theta, plain.estimate.theta);
  }

  // An auxiliary model whose simulations carry a fresh disturbance each time (seeded by the call
  // count, so the run is deterministic): the estimates jitter at a level set by it and the
  // changes stop decreasing, far above the tolerances.
  auto jittering = [&d]() {
    auto calls = std::make_shared<int>(0);
    return InstrumentGenerator([u = d.u, calls](const Eigen::VectorXd& theta, Eigen::MatrixXd* Z,
                                                Eigen::VectorXd* torque, std::string*) {
      std::mt19937 rng(1000 + (*calls)++);
      std::normal_distribution<double> normal(0.0, 1.0);
      const Eigen::Index n = u.size();
      Eigen::VectorXd x(n);
      x(0) = 0.0;
      for (Eigen::Index k = 0; k + 1 < n; ++k) {
        x(k + 1) = theta(0) * x(k) + theta(1) * u(k) + 0.2 * normal(rng);
      }
      Z->resize(n - 1, 2);
      *Z << x.head(n - 1), u.head(n - 1);
      *torque = x.tail(n - 1);
      return true;
    });
  };
  iteration.max_iterations = 30;
  iteration.stall_iterations = 0;
  const IvIterationSummary full =
      IterateInstrumentalVariables(d.X, d.y, start, jittering(), iteration, options);
  ASSERT_FALSE(full.converged);
  ASSERT_EQ(full.iterations, 30);
  for (int stall : {2, 3, 4}) {
    // Independently from the full history: the first iteration it whose last `stall` changes
    // (of both kinds) are all at or above the smallest change before them.
    const auto levelled = [&](const std::vector<double>& change, int it) {
      const double before = *std::min_element(change.begin(), change.begin() + (it - stall));
      return *std::min_element(change.begin() + (it - stall), change.begin() + it) >= before;
    };
    int expected = 0;
    for (int it = stall + 1; it < 30 && expected == 0; ++it) {
      if (levelled(full.torque_change, it) && levelled(full.parameter_change, it)) expected = it;
    }
    ASSERT_GT(expected, 0) << "the disturbed iteration never levels off";
    iteration.stall_iterations = stall;
    const IvIterationSummary stopped =
        IterateInstrumentalVariables(d.X, d.y, start, jittering(), iteration, options);
    SCOPED_TRACE("stall " + std::to_string(stall));
    EXPECT_FALSE(stopped.converged);
    EXPECT_TRUE(stopped.stalled);
    EXPECT_EQ(stopped.iterations, expected);
    EXPECT_THAT(stopped.message,
                HasSubstr("did NOT converge, stopped at iteration " + std::to_string(expected)));
    // The estimates up to there are those of the run without the test.
    EXPECT_EQ(stopped.estimate.theta, full.theta_history[expected]);
    EXPECT_EQ(stopped.torque_change, std::vector<double>(full.torque_change.begin(),
                                                         full.torque_change.begin() + expected));
  }
  iteration.stall_iterations = -1;
  EXPECT_FALSE(iteration.IsValid(nullptr));
}

TEST(IvIterationTest, ReportsNonConvergenceAndSimulationFailureHonestly) {
  const FirstOrderData d = MakeFirstOrderData(14);
  IvIterationOptions iteration;
  iteration.max_iterations = 1;
  iteration.torque_tolerance = 0.0;
  iteration.parameter_tolerance = 0.0;
  const Eigen::Vector2d start(0.5, 0.1);
  IvIterationSummary iv = IterateInstrumentalVariables(
      d.X, d.y, start, FirstOrderAuxiliaryModel(d.u), iteration, LinearLeastSquaresOptions());
  EXPECT_FALSE(iv.converged);
  EXPECT_EQ(iv.iterations, 1);
  EXPECT_THAT(iv.message, HasSubstr("did NOT converge in 1 iterations"));
  iv = IterateInstrumentalVariables(d.X, d.y, Eigen::Vector2d(1.5, 0.1),
                                    FirstOrderAuxiliaryModel(d.u), IvIterationOptions(),
                                    LinearLeastSquaresOptions());
  EXPECT_FALSE(iv.converged);
  EXPECT_THAT(iv.message, HasSubstr("auxiliary model failed for the initial estimate: unstable"));
}

}  // namespace
}  // namespace dynid::solvers
