#include "dynid/models/integrator.h"

#include <cmath>
#include <vector>

#include <Eigen/Core>
#include <gtest/gtest.h>

namespace dynid::models {
namespace {

// x' = λ x: one RK4 step multiplies x by 1 + z + z²/2 + z³/6 + z⁴/24, z = λ h.
TEST(IntegratorTest, StepIsTheFourthOrderTaylorPolynomialOnLinearOde) {
  const double lambda = -1.7, h = 0.3;
  const auto f = [lambda](double, const Eigen::VectorXd& x) -> Eigen::VectorXd {
    return lambda * x;
  };
  const Eigen::VectorXd x0 = Eigen::VectorXd::Constant(1, 2.0);
  const double z = lambda * h;
  const double expected = 2.0 * (1.0 + z + z * z / 2 + z * z * z / 6 + z * z * z * z / 24);
  EXPECT_NEAR(Rk4Step(f, 0.0, h, x0)(0), expected, 1e-14);
}

// x' = cos t integrates to sin t; fourth order: halving h divides the error by about 16.
TEST(IntegratorTest, IntegrateIsFourthOrderInTime) {
  const auto f = [](double t, const Eigen::Vector2d& x) -> Eigen::Vector2d {
    return Eigen::Vector2d(std::cos(t), -x(1));
  };
  const Eigen::Vector2d x0(0.0, 1.0);
  const auto error = [&](int steps) {
    const Eigen::Vector2d x = IntegrateRk4(f, 0.0, 2.0 / steps, steps, x0);
    return std::abs(x(0) - std::sin(2.0)) + std::abs(x(1) - std::exp(-2.0));
  };
  const double ratio = error(20) / error(40);
  EXPECT_GT(ratio, 14.0);
  EXPECT_LT(ratio, 18.0);
  EXPECT_LT(error(40), 1e-6);
}

// Zero steps return the start; step i starts at t0 + i h (the stage times seen by f).
TEST(IntegratorTest, StepTimesAreOffsetsFromTheStart) {
  std::vector<double> times;
  const auto f = [&times](double t, const Eigen::VectorXd& x) -> Eigen::VectorXd {
    times.push_back(t);
    return Eigen::VectorXd::Zero(x.size());
  };
  const Eigen::VectorXd x0 = Eigen::VectorXd::Ones(3);
  EXPECT_EQ(IntegrateRk4(f, 1.0, 0.1, 0, x0), x0);
  EXPECT_TRUE(times.empty());
  IntegrateRk4(f, 1.0, 0.1, 3, x0);
  ASSERT_EQ(times.size(), 12u);
  EXPECT_EQ(times[8], 1.0 + 2 * 0.1);
  EXPECT_EQ(times[9], 1.0 + 2 * 0.1 + 0.5 * 0.1);
  EXPECT_EQ(times[11], 1.0 + 2 * 0.1 + 0.1);
}

}  // namespace
}  // namespace dynid::models
