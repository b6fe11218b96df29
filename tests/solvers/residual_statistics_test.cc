#include <cmath>
#include <random>
#include <string>

#include <Eigen/Dense>
#include <ceres/cost_function.h>
#include <ceres/problem.h>
#include <ceres/sized_cost_function.h>
#include <ceres/solver.h>
#include <gtest/gtest.h>

#include "dynid/problems/weighted_residual_problem.h"
#include "dynid/solvers/linear_least_squares.h"
#include "dynid/solvers/parameter_covariance.h"
#include "tests/solvers/weighted_residual_fixtures.h"

namespace dynid::solvers {
namespace {

// cond of diag(1, 10, 1000) stacked over zeros is 1000; unit-norm columns make it 1.
TEST(ConditionNumberTest, RatioOfExtremeSingularValues) {
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(5, 3);
  x.diagonal() << 1.0, 10.0, 1000.0;
  EXPECT_NEAR(ConditionNumber(x), 1000.0, 1e-9);
  EXPECT_NEAR(ConditionNumber(x, true), 1.0, 1e-12);
  x.col(1).setZero();
  EXPECT_TRUE(std::isinf(ConditionNumber(x)));
}

TEST(ResidualVarianceFactorTest, TwiceTheCostOverTheDegreesOfFreedom) {
  EXPECT_DOUBLE_EQ(ResidualVarianceFactor(3.0, 10, 4), 1.0);
  EXPECT_TRUE(std::isnan(ResidualVarianceFactor(3.0, 4, 4)));
}

// Counted in a problem: constant blocks are not unknowns.
TEST(ResidualVarianceFactorTest, CountsTheFreeBlocksOfAProblem) {
  struct Cost final : ceres::CostFunction {
    Cost() {
      set_num_residuals(5);
      mutable_parameter_block_sizes()->push_back(2);
      mutable_parameter_block_sizes()->push_back(1);
    }
    bool Evaluate(double const* const*, double* residuals, double**) const override {
      for (int i = 0; i < 5; ++i) residuals[i] = 0.0;
      return true;
    }
  };
  double a[2] = {0.0, 0.0}, b[1] = {0.0};
  ceres::Problem problem;
  problem.AddResidualBlock(new Cost, nullptr, a, b);
  EXPECT_EQ(CountFreeUnknowns(problem), 3);
  EXPECT_DOUBLE_EQ(ResidualVarianceFactor(problem, 1.0, 5), 2.0 / (5 - 3));
  problem.SetParameterBlockConstant(b);
  EXPECT_EQ(CountFreeUnknowns(problem), 2);
  EXPECT_DOUBLE_EQ(ResidualVarianceFactor(problem, 1.0, 5), 2.0 / (5 - 2));
}

// Mass–spring–damper (n = 1, m = 1, p = 3, l = 3) weighted-residual problem on N nodes with the
// acceleration measurement weighted 0: the zero-weight rows are in NumResiduals, not in the
// weighted count. Rows: zeta 4 per node (3 weighted), xi 2 per interval (shooting) or 4
// (collocation), xi_theta 3 per interval (time-varying), R0 5 (rank 5).
TEST(CountWeightedResidualsTest, ZeroWeightRowsCarryNoDegreeOfFreedom) {
  constexpr int kNodes = 21;
  for (const problems::ParameterMode mode :
       {problems::ParameterMode::kConstant, problems::ParameterMode::kTimeVarying}) {
    for (const problems::Transcription transcription :
         {problems::Transcription::kShooting, problems::Transcription::kCollocation}) {
      SCOPED_TRACE(std::string(problems::ParameterModeName(mode)) + " " +
                   problems::TranscriptionName(transcription));
      testing_fixtures::MsdExperiment e =
          testing_fixtures::MakeMsdExperiment(kNodes, 2.0, false, 1, mode);
      e.weights.residual(2, 2) = 0.0;
      problems::WeightedResidualOptions options;
      options.transcription = transcription;
      options.parameter_mode = mode;
      problems::WeightedResidualVariables variables;
      problems::ResizeVariables(1, 1, e.model.NominalParameters(), kNodes, mode, &variables);
      ceres::Problem problem;
      std::string error;
      ASSERT_TRUE(problems::BuildWeightedResidualProblem(e.model, e.data, e.weights, options,
                                                         &variables, &problem, &error))
          << error;
      const int per_interval = (transcription == problems::Transcription::kShooting ? 2 : 4) +
                               (mode == problems::ParameterMode::kTimeVarying ? 3 : 0);
      const int weighted = kNodes * 3 + (kNodes - 1) * per_interval + 5;
      EXPECT_EQ(problem.NumResiduals(), weighted + kNodes);
      EXPECT_EQ(problems::CountWeightedResiduals(e.weights, e.data, options), weighted);
      const int unknowns =
          kNodes * 4 + (mode == problems::ParameterMode::kTimeVarying ? kNodes * 3 : 3);
      EXPECT_EQ(CountFreeUnknowns(problem), unknowns);
      EXPECT_DOUBLE_EQ(ResidualVarianceFactor(problem, 10.0, weighted),
                       20.0 / (weighted - unknowns));
    }
  }
}

// A non-diagonal V of rank 3 (one measurement combination unweighted) and no R0: the weighted
// count is the rank, node by node.
TEST(CountWeightedResidualsTest, CountsTheRankOfANonDiagonalWeight) {
  constexpr int kNodes = 11;
  testing_fixtures::MsdExperiment e = testing_fixtures::MakeMsdExperiment(
      kNodes, 1.0, false, 1, problems::ParameterMode::kConstant);
  Eigen::Matrix4d basis = Eigen::Matrix4d::Identity();
  basis.col(1) = Eigen::Vector4d(0.0, 1.0, 1.0, 0.0).normalized();
  basis.col(2) = Eigen::Vector4d(0.0, 1.0, -1.0, 0.0).normalized();
  e.weights.residual = basis * Eigen::Vector4d(2.0, 3.0, 0.0, 5.0).asDiagonal() *
                       basis.transpose();
  e.weights.initial.resize(0, 0);
  problems::WeightedResidualOptions options;
  EXPECT_EQ(problems::CountWeightedResiduals(e.weights, e.data, options),
            kNodes * 3 + (kNodes - 1) * 2);
}

// y_i = c0 + c1 t_i + c2 t_i² + sigma_i e_i, every third row weighted 0 (e.g. a dropped sample);
// the others weighted 1 / sigma_i². Linear, so E[2 cost] = m − u exactly with m the weighted rows:
// over 20 seeds the factor averages to 1 within a few percent, while counting every row of the
// problem (m + zero rows) would give ≈ (m − u) / (m + zero rows − u) ≈ 2/3.
TEST(ResidualVarianceFactorTest, AveragesToOneOverWeightedRowsOnSimulatedNoise) {
  class Row final : public ceres::SizedCostFunction<1, 3> {
   public:
    Row(double t, double y, double sqrt_weight) : t_(t), y_(y), sqrt_weight_(sqrt_weight) {}
    bool Evaluate(double const* const* c, double* residual, double** jacobians) const override {
      residual[0] = sqrt_weight_ * (y_ - c[0][0] - c[0][1] * t_ - c[0][2] * t_ * t_);
      if (jacobians != nullptr && jacobians[0] != nullptr) {
        jacobians[0][0] = -sqrt_weight_;
        jacobians[0][1] = -sqrt_weight_ * t_;
        jacobians[0][2] = -sqrt_weight_ * t_ * t_;
      }
      return true;
    }

   private:
    const double t_, y_, sqrt_weight_;
  };
  constexpr int kRows = 600, kSeeds = 20;
  double sum_weighted = 0.0, sum_all_rows = 0.0;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    std::mt19937 rng(static_cast<unsigned>(seed));
    std::normal_distribution<double> normal(0.0, 1.0);
    double c[3] = {0.0, 0.0, 0.0};
    ceres::Problem problem;
    int weighted = 0;
    for (int i = 0; i < kRows; ++i) {
      const double t = i / double(kRows), sigma = 0.1 * (1 + i % 4);
      const double y = 1.0 - 2.0 * t + 0.5 * t * t + sigma * normal(rng);
      const double sqrt_weight = i % 3 == 2 ? 0.0 : 1.0 / sigma;
      weighted += sqrt_weight > 0.0;
      problem.AddResidualBlock(new Row(t, y, sqrt_weight), nullptr, c);
    }
    ceres::Solver::Options options;
    options.linear_solver_type = ceres::DENSE_QR;
    ceres::Solver::Summary summary;
    ceres::Solve(options, &problem, &summary);
    ASSERT_TRUE(summary.IsSolutionUsable());
    ASSERT_EQ(weighted, 400);
    sum_weighted += ResidualVarianceFactor(problem, summary.final_cost, weighted);
    sum_all_rows += ResidualVarianceFactor(problem, summary.final_cost, problem.NumResiduals());
  }
  EXPECT_NEAR(sum_weighted / kSeeds, 1.0, 0.05);
  EXPECT_NEAR(sum_all_rows / kSeeds, 397.0 / 597.0, 0.05);
}

// A covariance is square, finite, symmetric and positive semi-definite; each failure is named.
TEST(IsValidCovarianceTest, AcceptsCovariancesAndNamesEachFailure) {
  Eigen::MatrixXd a(3, 2);
  a << 1.0, 2.0, 0.5, -1.0, 3.0, 0.25;
  EXPECT_TRUE(IsValidCovariance(a * a.transpose()));  // rank 2: semi-definite is enough
  EXPECT_TRUE(IsValidCovariance(Eigen::MatrixXd::Identity(4, 4)));

  std::string why;
  EXPECT_FALSE(IsValidCovariance(Eigen::MatrixXd(), &why));
  EXPECT_NE(why.find("square"), std::string::npos) << why;
  EXPECT_FALSE(IsValidCovariance(a, &why));
  EXPECT_NE(why.find("3 x 2"), std::string::npos) << why;

  Eigen::Matrix2d c = Eigen::Matrix2d::Identity();
  c(0, 1) = std::nan("");
  EXPECT_FALSE(IsValidCovariance(c, &why));
  EXPECT_EQ(why, "not finite");

  c << 1.0, 0.5, 0.4, 1.0;
  EXPECT_FALSE(IsValidCovariance(c, &why));
  EXPECT_NE(why.find("not symmetric"), std::string::npos) << why;

  c << 1.0, 2.0, 2.0, 1.0;  // eigenvalues 3 and -1
  EXPECT_FALSE(IsValidCovariance(c, &why));
  EXPECT_NE(why.find("smallest eigenvalue -1"), std::string::npos) << why;
}

}  // namespace
}  // namespace dynid::solvers
