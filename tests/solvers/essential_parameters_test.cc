#include "dynid/solvers/essential_parameters.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace dynid::solvers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Six regressors; the data depend on three (true values 3, -2, 1.5), the other three have true
// value 0 and are only fitted noise.
struct Data {
  Eigen::MatrixXd X;
  Eigen::VectorXd y;
  std::vector<std::string> names = {"a", "zero1", "b", "zero2", "c", "zero3"};
};

Data MakeData() {
  std::mt19937 rng(21);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int n = 600;
  Data d;
  d.X.resize(n, 6);
  for (int k = 0; k < n; ++k) {
    const double t = 0.01 * k;
    d.X.row(k) << std::sin(t), 0.3 * std::cos(3.1 * t), std::cos(0.5 * t), 0.2 * std::sin(7.3 * t),
        1.0, 0.1 * std::sin(11.0 * t + 1.0);
  }
  Eigen::VectorXd theta(6);
  theta << 3.0, 0.0, -2.0, 0.0, 1.5, 0.0;
  d.y = d.X * theta;
  for (int k = 0; k < n; ++k) d.y(k) += 0.05 * normal(rng);
  return d;
}

TEST(EssentialParametersTest, RemovesTheParametersTheDataDoNotNeed) {
  const Data d = MakeData();
  EssentialParametersOptions options;
  options.max_relative_error_increase = 0.002;
  const EssentialParametersSummary s = SelectEssentialParameters(d.X, d.y, d.names, options);
  ASSERT_TRUE(s.success) << s.message;
  EXPECT_THAT(s.essential_names, ElementsAre("a", "b", "c"));
  EXPECT_THAT(s.essential_columns, ElementsAre(0, 2, 4));
  ASSERT_EQ(s.path.size(), 3u);
  // Each accepted removal kept the relative error within the threshold; the refused one did not.
  for (const EliminationStep& step : s.path) {
    EXPECT_LE(step.relative_error_after - s.full_relative_error, 0.002);
    EXPECT_NE(step.name.find("zero"), std::string::npos);
    EXPECT_LT(step.f_statistic, 10.0);
    EXPECT_GT(step.f_p_value, 1e-3);
  }
  EXPECT_EQ(s.path.back().num_parameters_after, 3);
  EXPECT_GE(s.rejected.column, 0);
  EXPECT_GT(s.rejected.relative_error_after - s.full_relative_error, 0.002);
  EXPECT_GT(s.rejected.f_statistic, 100.0);
  EXPECT_LT(s.rejected.f_p_value, 1e-10);
  EXPECT_THAT(s.message, HasSubstr("would raise the relative error"));
  EXPECT_NEAR(s.final_fit.theta(0), 3.0, 0.02);
  EXPECT_THAT(s.Report(), HasSubstr("kept: a b c"));
  // The path equals fitting the kept columns directly.
  Eigen::MatrixXd kept(d.X.rows(), 3);
  kept << d.X.col(0), d.X.col(2), d.X.col(4);
  EXPECT_NEAR(SolveLeastSquares(kept, d.y, LinearLeastSquaresOptions()).relative_error,
              s.final_fit.relative_error, 1e-14);
}

TEST(EssentialParametersTest, ThresholdsControlWhereItStops) {
  const Data d = MakeData();
  EssentialParametersOptions options;
  options.max_relative_error_increase = 0.0;  // any growth refuses: nothing removed
  EssentialParametersSummary s = SelectEssentialParameters(d.X, d.y, d.names, options);
  ASSERT_TRUE(s.success);
  EXPECT_EQ(s.essential_columns.size(), 6u);
  EXPECT_TRUE(s.path.empty());
  options.max_relative_error_increase = 1.0;  // allow anything: down to min_parameters
  options.min_parameters = 2;
  s = SelectEssentialParameters(d.X, d.y, d.names, options);
  EXPECT_EQ(s.essential_columns.size(), 2u);
  EXPECT_THAT(s.message, HasSubstr("min_parameters = 2"));
  options.target_max_relative_std_percent = 1e6;  // already satisfied
  s = SelectEssentialParameters(d.X, d.y, d.names, options);
  EXPECT_EQ(s.essential_columns.size(), 6u);
  options.weighted = true;  // the WLS variant runs on the same path
  options.target_max_relative_std_percent = 0.0;
  options.max_relative_error_increase = 0.002;
  s = SelectEssentialParameters(d.X, d.y, d.names, options);
  ASSERT_TRUE(s.success) << s.message;
  EXPECT_THAT(s.essential_names, ElementsAre("a", "b", "c"));
}

TEST(EssentialParametersTest, RankDeficientInputFails) {
  Data d = MakeData();
  d.X.col(5) = d.X.col(0);
  const EssentialParametersSummary s =
      SelectEssentialParameters(d.X, d.y, d.names, EssentialParametersOptions());
  EXPECT_FALSE(s.success);
  EXPECT_THAT(s.message, HasSubstr("rank-deficient"));
}

}  // namespace
}  // namespace dynid::solvers
