#include <cmath>

#include <Eigen/Dense>
#include <ceres/cost_function.h>
#include <ceres/problem.h>
#include <gtest/gtest.h>

#include "dynid/solvers/linear_least_squares.h"
#include "dynid/solvers/parameter_covariance.h"

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
  EXPECT_DOUBLE_EQ(ResidualVarianceFactor(problem, 1.0), 2.0 / (5 - 3));
  problem.SetParameterBlockConstant(b);
  EXPECT_DOUBLE_EQ(ResidualVarianceFactor(problem, 1.0), 2.0 / (5 - 2));
}

}  // namespace
}  // namespace dynid::solvers
